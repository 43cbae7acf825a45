import { useEffect, useState } from 'react';
import { get, post } from '../../api/client';
import type { Pairing } from '../../api/types';
import { QrCode } from '../../components/QrCode';
import { CopyField, ErrorText, useAction } from '../../components/ui';

/**
 * Pairing a phone: the server issues a short-lived one-time code (POST /pairing); the QR code holds a
 * LAN URL of the pairing page with the code in its fragment. The phone's browser claims it and becomes a
 * new device. This page polls until the code is claimed.
 */
export function PairDevice({ onPaired }: { onPaired: () => void }) {
  const [pairing, setPairing] = useState<Pairing | null>(null);
  const [claimed, setClaimed] = useState<string | null>(null);
  const [left, setLeft] = useState(0);
  const { busy, error, run } = useAction();

  const start = () =>
    run(async () => {
      setClaimed(null);
      const p = await post<Pairing>('/pairing', {});
      setPairing(p);
      setLeft(p.expiresIn);
    });
  // biome-ignore lint/correctness/useExhaustiveDependencies: start once when the dialog opens
  useEffect(() => {
    void start();
  }, []);

  useEffect(() => {
    if (!pairing || claimed) return;
    const t = setInterval(async () => {
      setLeft((s) => Math.max(0, s - 2));
      try {
        const s = await get<{ status: string; deviceName?: string }>(`/pairing/${pairing.id}`);
        if (s.status === 'claimed') {
          setClaimed(s.deviceName ?? 'your phone');
          onPaired();
        }
      } catch {
        /* expired or gone: the countdown says so */
      }
    }, 2000);
    return () => clearInterval(t);
  }, [pairing, claimed, onPaired]);

  const url = pairing?.urls[0] ? `${pairing.urls[0]}/pair#code=${pairing.code}` : '';
  return (
    <div className="stack pair">
      {claimed ? (
        <p className="notice" role="status">
          Paired: “{claimed}” is signed in and listed under Devices.
        </p>
      ) : pairing ? (
        <>
          <p>Scan this with the phone’s camera. The phone must be on the same network as this computer.</p>
          {!pairing.lan ? (
            <p className="warning" role="alert">
              Belfry listens only on this computer, so a phone cannot reach it. Turn on LAN access (desktop
              app settings below, or start the server with <code>--lan</code>) and make a new code.
            </p>
          ) : null}
          <QrCode text={url} label="Pairing QR code" />
          <CopyField label="Pairing link" value={url} secret />
          {pairing.urls.length > 1 ? (
            <p className="hint">Other addresses of this computer: {pairing.urls.slice(1).join(', ')}</p>
          ) : null}
          <p className="hint" role="status">
            {left > 0
              ? `The code works once, for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')} more.`
              : 'The code expired.'}
          </p>
        </>
      ) : null}
      <ErrorText error={error} />
      <button type="button" onClick={() => void start()} disabled={busy}>
        New code
      </button>
    </div>
  );
}

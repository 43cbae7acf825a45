import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { get, post } from '../../api/client';
import type { MfaStatus } from '../../api/types';
import { useSession } from '../../app/session';
import { QrCode } from '../../components/QrCode';
import { CopyField, ErrorText, Field, TextField, useAction } from '../../components/ui';

export function TwoFactor() {
  const { refreshUser } = useSession();
  const [status, setStatus] = useState<MfaStatus | null>(null);
  const [setup, setSetup] = useState<{ secret: string; uri: string } | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [mobile, setMobile] = useState<{ challenge: string; code: string; expiresIn: number } | null>(null);
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setStatus(await get<MfaStatus>('/current/user/mfa'))),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);

  const begin = () =>
    act.run(async () => {
      setCodes(null);
      setSetup(await post<{ secret: string; uri: string }>('/current/user/mfa/setup'));
    });
  const confirm2fa = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const r = await post<{ recoveryCodes: string[] }>('/current/user/mfa/confirm', {
        code: code.replace(/\s+/g, ''),
      });
      setCodes(r.recoveryCodes);
      setSetup(null);
      setCode('');
      await reload();
      await refreshUser();
    });
  };

  return (
    <section className="card stack" aria-labelledby="mfa-title">
      <h2 id="mfa-title">Two-factor sign-in</h2>
      <ErrorText error={load.error} />
      {codes ? (
        <div className="shown-once stack" role="status">
          <p>
            <strong>Recovery codes</strong>: each works once if you lose your authenticator. Keep them
            somewhere safe; they are shown only now.
          </p>
          <ul className="codes" aria-label="Recovery codes">
            {codes.map((c) => (
              <li key={c} className="mono">
                {c}
              </li>
            ))}
          </ul>
          <CopyField label="All recovery codes" value={codes.join(' ')} secret />
        </div>
      ) : null}
      {status && !status.enabled && !setup ? (
        <>
          <p>Off. With two-factor sign-in, signing in also asks for a code from an authenticator app.</p>
          <button type="button" className="primary" onClick={() => void begin()} disabled={act.busy}>
            Set up two-factor sign-in
          </button>
        </>
      ) : null}
      {setup ? (
        <form className="stack" onSubmit={confirm2fa} aria-label="Confirm two-factor setup">
          <p>Scan this with your authenticator app, then type the 6-digit code it shows.</p>
          <QrCode text={setup.uri} label="Authenticator QR code" />
          <CopyField label="Or enter this secret by hand" value={setup.secret} secret />
          <TextField
            label="Code from the app"
            inputMode="numeric"
            autoComplete="one-time-code"
            value={code}
            onChange={setCode}
            required
          />
          <button type="submit" className="primary" disabled={act.busy}>
            Turn on
          </button>
        </form>
      ) : null}
      {status?.enabled ? (
        <>
          <p>On. {status.recoveryCodesRemaining} recovery codes left.</p>
          <div className="actions">
            <button
              type="button"
              onClick={() =>
                void act.run(async () => {
                  const r = await post<{ recoveryCodes: string[] }>('/current/user/mfa/recovery-codes');
                  setCodes(r.recoveryCodes);
                  await reload();
                })
              }
            >
              New recovery codes
            </button>
            <button
              type="button"
              className="danger"
              onClick={() =>
                void act.run(async () => {
                  if (!confirm('Turn off two-factor sign-in?')) return;
                  await post('/current/user/mfa/disable');
                  await reload();
                  await refreshUser();
                })
              }
            >
              Turn off
            </button>
          </div>
          <h3>Approve sign-ins with a phone</h3>
          {status.mobileConnected ? (
            <p>
              A phone approves sign-ins{' '}
              <button
                type="button"
                className="danger"
                onClick={() =>
                  void act.run(async () => {
                    await post('/current/user/mfa/mobile/disable');
                    await reload();
                  })
                }
              >
                Stop phone approval
              </button>
            </p>
          ) : mobile ? (
            <div className="stack">
              <p>
                On the phone, sign in to Belfry, open Account → Approve a sign-in and enter{' '}
                <strong className="big-code">{mobile.code}</strong>. Then press Done.
              </p>
              <button
                type="button"
                className="primary"
                onClick={() =>
                  void act.run(async () => {
                    await post('/current/user/mfa/mobile/confirm', { challenge: mobile.challenge });
                    setMobile(null);
                    await reload();
                  })
                }
              >
                Done
              </button>
            </div>
          ) : (
            <button
              type="button"
              onClick={() =>
                void act.run(async () =>
                  setMobile(
                    await post<{ challenge: string; code: string; expiresIn: number }>(
                      '/current/user/mfa/mobile/start',
                    ),
                  ),
                )
              }
            >
              Link a phone
            </button>
          )}
        </>
      ) : null}
      <ApproveSignIn />
      <ErrorText error={act.error} />
    </section>
  );
}

/** On the phone (or any signed-in device): approve a sign-in by the code the other screen shows. */
function ApproveSignIn() {
  const [pending, setPending] = useState<
    { ip: string; kind: string; createdAt: string; expiresIn: number }[]
  >([]);
  const [code, setCode] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, run } = useAction();
  useEffect(() => {
    get<typeof pending>('/auth/mfa/pending').then(setPending, () => {});
  }, []);
  return (
    <form
      className="stack"
      aria-labelledby="approve-title"
      onSubmit={(e) => {
        e.preventDefault();
        setDone(false);
        void run(async () => {
          await post('/auth/mfa/approve', { code: code.trim() });
          setCode('');
          setDone(true);
        });
      }}
    >
      <h3 id="approve-title">Approve a sign-in</h3>
      {pending.length ? (
        <ul className="rows">
          {pending.map((p) => (
            <li key={`${p.ip}-${p.createdAt}`}>
              {p.kind} from {p.ip}, expires in {p.expiresIn} s
            </li>
          ))}
        </ul>
      ) : null}
      <div className="row wrap">
        <Field label="Code shown on the other screen">
          {(id) => <input id={id} value={code} onChange={(e) => setCode(e.target.value)} required />}
        </Field>
        <button type="submit" disabled={busy}>
          Approve
        </button>
      </div>
      {done ? <p role="status">Approved.</p> : null}
      <ErrorText error={error} />
    </form>
  );
}

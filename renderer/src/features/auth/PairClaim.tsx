import { type FormEvent, useState } from 'react';
import { api } from '../../api/client';
import type { LoginResponse } from '../../api/types';
import { navigate } from '../../app/router';
import { useSession } from '../../app/session';
import { ErrorText, Field } from '../../components/ui';
import { deviceName } from './SignIn';

/**
 * The page a phone opens from the pairing QR code (`/pair#code=…`). The one-time code sits in the
 * fragment, so it never reaches server logs or a Referer; claiming it signs this browser in as a new
 * device of the user who showed the code.
 */
export function PairClaim() {
  const { signIn } = useSession();
  const code = new URLSearchParams(location.hash.slice(1)).get('code') ?? '';
  const [name, setName] = useState(deviceName().replace('Browser on', 'Phone:'));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api<LoginResponse>('POST', '/pairing/claim', {
        anonymous: true,
        body: { code, name: name.trim(), platform: 'web' },
      });
      history.replaceState(null, '', '/');
      signIn(r.token);
      navigate('/inbox', true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="auth-page">
      <form className="card stack" onSubmit={submit} aria-labelledby="pair-title">
        <h1 id="pair-title">Pair this device</h1>
        {code ? (
          <>
            <p>
              This browser will be signed in to Belfry as a new device. You can rename or remove it later
              under Devices.
            </p>
            <Field label="Device name">
              {(id) => (
                <input
                  id={id}
                  value={name}
                  onChange={(e) => setName(e.target.value)}
                  required
                  maxLength={200}
                />
              )}
            </Field>
            <ErrorText error={error} />
            <button type="submit" className="primary" disabled={busy}>
              Pair and sign in
            </button>
          </>
        ) : (
          <p className="error" role="alert">
            This link has no pairing code. Scan the QR code shown under Devices → Pair a phone again.
          </p>
        )}
      </form>
    </main>
  );
}

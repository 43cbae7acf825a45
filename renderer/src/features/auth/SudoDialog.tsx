import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, setSudoPrompt } from '../../api/client';
import { Dialog, ErrorText, Field, TextField } from '../../components/ui';
import { CodeField } from './CodeField';

/**
 * Sensitive actions answer 403 `sudo_required` with the available methods; this dialog confirms with
 * the password (2FA off) or an authenticator / recovery code (2FA on), then the action is retried.
 */
export function SudoDialog() {
  const [methods, setMethods] = useState<string[] | null>(null);
  const [method, setMethod] = useState('password');
  const [pass, setPass] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const resolver = useRef<((ok: boolean) => void) | null>(null);

  useEffect(() => {
    setSudoPrompt(
      (m) =>
        new Promise<boolean>((resolve) => {
          resolver.current = resolve;
          setMethods(m.length ? m : ['password']);
          setMethod(m[0] ?? 'password');
          setPass('');
          setCode('');
          setError(null);
        }),
    );
    return () => setSudoPrompt(null);
  }, []);

  const finish = (ok: boolean) => {
    resolver.current?.(ok);
    resolver.current = null;
    setMethods(null);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/current/user/sudo', {
        body: method === 'password' ? { method, pass } : { method, code: code.replace(/\s+/g, '') },
        noSudo: true,
      });
      finish(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Confirm it is you" open={methods !== null} onClose={() => finish(false)}>
      <form onSubmit={submit} className="stack">
        <p>This action needs a fresh confirmation (valid for 15 minutes on this device).</p>
        {methods && methods.length > 1 ? (
          <Field label="Confirm with">
            {(id) => (
              <select id={id} value={method} onChange={(e) => setMethod(e.target.value)}>
                {methods.map((m) => (
                  <option key={m} value={m}>
                    {m === 'totp' ? 'Authenticator code' : m === 'recovery' ? 'Recovery code' : 'Password'}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        {method === 'password' ? (
          <TextField
            label="Password"
            type="password"
            autoComplete="current-password"
            value={pass}
            onChange={setPass}
            required
          />
        ) : (
          <CodeField method={method} totpLabel="Authenticator code" value={code} onChange={setCode} />
        )}
        <ErrorText error={error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Confirm
          </button>
          <button type="button" onClick={() => finish(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

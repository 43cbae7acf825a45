import { type FormEvent, useEffect, useState } from 'react';
import { ApiError, api } from '../../api/client';
import { desktop } from '../../api/desktop';
import { useServerInfo } from '../../api/serverinfo';
import type { LoginResponse, MfaChallenge } from '../../api/types';
import { Link } from '../../app/router';
import { useSession } from '../../app/session';
import { ErrorText, TextField } from '../../components/ui';
import { CodeField } from './CodeField';

export function deviceName(): string {
  if (desktop()) return 'Belfry desktop';
  const ua = navigator.userAgent;
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Mac/.test(ua)
        ? 'macOS'
        : /Win/.test(ua)
          ? 'Windows'
          : /Linux/.test(ua)
            ? 'Linux'
            : 'this computer';
  return `Browser on ${os}`;
}

const platform = () => (desktop() ? 'desktop' : 'web');

export function SignIn() {
  const { signIn } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [mfa, setMfa] = useState<MfaChallenge | null>(null);
  const register = useServerInfo()?.register === true;
  // A 429 (too many failed attempts): when sign-in may be tried again, counted down on the button.
  const [retryAt, setRetryAt] = useState(0);
  const [now, setNow] = useState(Date.now());
  const waiting = Math.ceil((retryAt - now) / 1000);

  useEffect(() => {
    if (retryAt <= Date.now()) return;
    const t = setInterval(() => {
      setNow(Date.now());
      if (Date.now() >= retryAt) clearInterval(t);
    }, 1000);
    return () => clearInterval(t);
  }, [retryAt]);

  const done = (r: LoginResponse) => {
    if (r.suspended_device_id)
      sessionStorage.setItem(
        'belfry.flash',
        'Your plan’s device limit was reached: your oldest device was suspended.',
      );
    signIn(r.token);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      done(
        await api<LoginResponse>('POST', '/auth/local/login', {
          basic: { email: email.trim(), password },
          body: { name: deviceName(), platform: platform() },
        }),
      );
    } catch (err) {
      const challenge = err instanceof ApiError ? (err.body?.mfa as MfaChallenge | undefined) : undefined;
      if (challenge?.challenge) setMfa(challenge);
      else setError(err);
      if (err instanceof ApiError && err.status === 429 && err.retryAfter !== null) {
        setNow(Date.now());
        setRetryAt(Date.now() + err.retryAfter * 1000);
      }
    } finally {
      setBusy(false);
    }
  };

  if (mfa) return <SecondStep challenge={mfa} onDone={done} onCancel={() => setMfa(null)} />;

  return (
    <main className="auth-page">
      <form className="card stack" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Belfry</h1>
        <TextField
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
          required
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
          required
        />
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy || waiting > 0}>
          {busy ? 'Signing in…' : waiting > 0 ? `Sign in (wait ${waiting} s)` : 'Sign in'}
        </button>
        <p className="auth-links">
          <Link to="/forgot-password">Forgot password?</Link>
          {register ? <Link to="/register">Create an account</Link> : null}
        </p>
      </form>
    </main>
  );
}

type Method = 'totp' | 'recovery' | 'mobile';

function SecondStep({
  challenge,
  onDone,
  onCancel,
}: {
  challenge: MfaChallenge;
  onDone: (r: LoginResponse) => void;
  onCancel: () => void;
}) {
  const methods = challenge.methods.length ? challenge.methods : (['totp', 'recovery'] as Method[]);
  const [method, setMethod] = useState<Method>(methods.includes('totp') ? 'totp' : methods[0]!);
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [left, setLeft] = useState(challenge.expiresIn);
  const [status, setStatus] = useState<'pending' | 'approved'>('pending');

  useEffect(() => {
    const t = setInterval(() => setLeft((s) => Math.max(0, s - 1)), 1000);
    return () => clearInterval(t);
  }, []);

  const verify = async (m: Method, c?: string) => {
    setBusy(true);
    setError(null);
    try {
      onDone(
        await api<LoginResponse>('POST', '/auth/mfa/verify', {
          anonymous: true,
          body: {
            challenge: challenge.challenge,
            method: m,
            ...(c ? { code: c } : {}),
            name: deviceName(),
            platform: platform(),
          },
        }),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  // Phone approval: poll the challenge until the phone approved it, then finish with method mobile.
  // biome-ignore lint/correctness/useExhaustiveDependencies: verify only closes over the challenge
  useEffect(() => {
    if (method !== 'mobile' || status === 'approved') return;
    let live = true;
    const t = setInterval(async () => {
      try {
        const r = await api<{ status: 'pending' | 'approved' }>('POST', '/auth/mfa/challenge', {
          anonymous: true,
          body: { challenge: challenge.challenge },
        });
        if (live && r.status === 'approved') {
          setStatus('approved');
          void verify('mobile');
        }
      } catch (err) {
        if (live) setError(err);
      }
    }, 2000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [method, status, challenge.challenge]);

  const label: Record<Method, string> = {
    totp: 'Authenticator app',
    recovery: 'Recovery code',
    mobile: 'Approve on my phone',
  };
  return (
    <main className="auth-page">
      <form
        className="card stack"
        aria-labelledby="mfa-title"
        onSubmit={(e) => {
          e.preventDefault();
          if (method !== 'mobile') void verify(method, code.replace(/\s+/g, ''));
        }}
      >
        <h1 id="mfa-title">Second step</h1>
        <fieldset className="segmented">
          <legend>Confirm with</legend>
          {methods.map((m) => (
            <label key={m} className={m === method ? 'on' : ''}>
              <input
                type="radio"
                name="mfa-method"
                value={m}
                checked={m === method}
                onChange={() => setMethod(m)}
              />
              {label[m]}
            </label>
          ))}
        </fieldset>
        {method === 'mobile' ? (
          <div className="stack">
            <p>Enter this code in the Belfry app on your phone (Account → Approve a sign-in):</p>
            <p className="big-code" title="Approval code">
              {challenge.mobileCode}
            </p>
            <p role="status">{status === 'approved' ? 'Approved, signing in…' : 'Waiting for your phone…'}</p>
          </div>
        ) : (
          <CodeField method={method} totpLabel="6-digit code" value={code} onChange={setCode} />
        )}
        <p className="hint">
          {left > 0
            ? `This sign-in expires in ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}.`
            : 'This sign-in expired; start again.'}
        </p>
        <ErrorText error={error} />
        <div className="actions">
          {method !== 'mobile' ? (
            <button type="submit" className="primary" disabled={busy || left === 0}>
              Verify
            </button>
          ) : null}
          <button type="button" onClick={onCancel}>
            Back
          </button>
        </div>
      </form>
    </main>
  );
}

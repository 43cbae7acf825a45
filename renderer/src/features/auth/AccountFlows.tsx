import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { api } from '../../api/client';
import { useServerInfo } from '../../api/serverinfo';
import { Link, useLocation } from '../../app/router';
import { ErrorText, TextField, useAction } from '../../components/ui';
import { newPasswordProblem, PASSWORD_HINT } from './password';

/**
 * The account screens reached without signing in (docs/api.md, "Password reset", "Verification",
 * "Self-registration"): asking for a reset mail, the mailed reset link, registering, and the mailed
 * verification link. Each ends with a way back to sign-in.
 */

function AuthCard({ title, id, children }: { title: string; id: string; children: ReactNode }) {
  return (
    <main className="auth-page">
      <section className="card stack" aria-labelledby={id}>
        <h1 id={id}>{title}</h1>
        {children}
      </section>
    </main>
  );
}

const BackToSignIn = ({ label = 'Back to sign-in' }: { label?: string }) => (
  <p>
    <Link to="/">{label}</Link>
  </p>
);

function NewPasswordFields(props: {
  /** "New password" on the reset page, "Password" on registration. */
  label: string;
  pass: string;
  again: string;
  setPass: (v: string) => void;
  setAgain: (v: string) => void;
}) {
  return (
    <>
      <TextField
        label={props.label}
        hint={PASSWORD_HINT}
        type="password"
        autoComplete="new-password"
        value={props.pass}
        onChange={props.setPass}
        required
      />
      <TextField
        label={`${props.label} again`}
        type="password"
        autoComplete="new-password"
        value={props.again}
        onChange={props.setAgain}
        required
      />
    </>
  );
}

/** `/forgot-password`: asks for a reset mail. The answer is the same for known and unknown addresses. */
export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await api('POST', '/user/reset-password', { anonymous: true, body: { email: email.trim() } });
      setSentTo(email.trim());
    });
  };
  if (sentTo)
    return (
      <AuthCard title="Check your mail" id="forgot-title">
        <p role="status">
          If an account uses <strong>{sentTo}</strong>, a mail with a link to set a new password is on its
          way. The link works for one hour.
        </p>
        <p className="hint">
          No mail? Look in the spam folder. On a server without outgoing mail, the administrator finds it
          under Mail outbox.
        </p>
        <BackToSignIn />
      </AuthCard>
    );
  return (
    <AuthCard title="Forgot your password?" id="forgot-title">
      <form className="stack" onSubmit={submit} aria-labelledby="forgot-title">
        <p>Enter the address you sign in with. We will mail you a link to set a new password.</p>
        <TextField
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
          required
        />
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Sending…' : 'Send reset link'}
        </button>
      </form>
      <BackToSignIn />
    </AuthCard>
  );
}

/** `/reset-password?token=…`: the mailed link; sets the new password with the link's token. */
export function ResetPassword() {
  const { search } = useLocation();
  const token = search.get('token') ?? '';
  const [pass, setPass] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, setError, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const problem = newPasswordProblem(pass, again);
    if (problem) return setError(new Error(problem));
    void run(async () => {
      await api('POST', '/user/reset-password/confirm', { anonymous: true, body: { token, pass } });
      setDone(true);
    });
  };
  if (!token)
    return (
      <AuthCard title="Set a new password" id="reset-title">
        <p role="alert">This link is incomplete. Open the whole link from the mail, or ask for a new one.</p>
        <p>
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </AuthCard>
    );
  if (done)
    return (
      <AuthCard title="Password changed" id="reset-title">
        <p role="status">Your new password is set. Every device was signed out: sign in again with it.</p>
        <BackToSignIn label="Sign in" />
      </AuthCard>
    );
  return (
    <AuthCard title="Set a new password" id="reset-title">
      <form className="stack" onSubmit={submit} aria-labelledby="reset-title">
        <NewPasswordFields
          label="New password"
          pass={pass}
          again={again}
          setPass={setPass}
          setAgain={setAgain}
        />
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Set password
        </button>
      </form>
      <p>
        <Link to="/forgot-password">Ask for a new link</Link> · <Link to="/">Back to sign-in</Link>
      </p>
    </AuthCard>
  );
}

/** `/register`: self-registration, offered only when `GET /serverinfo` says `register: true`. */
export function Register() {
  const info = useServerInfo();
  const [email, setEmail] = useState('');
  const [pass, setPass] = useState('');
  const [again, setAgain] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const problem = newPasswordProblem(pass, again);
    if (problem) return setError(new Error(problem.replace('new password', 'password')));
    void run(async () => {
      await api('POST', '/user', { anonymous: true, body: { email: email.trim(), pass } });
      setSentTo(email.trim());
    });
  };
  if (info === undefined) return <p className="loading">Loading…</p>;
  if (info?.register !== true)
    return (
      <AuthCard title="Create an account" id="register-title">
        <p>This server does not take new accounts. Ask its administrator for one.</p>
        <BackToSignIn />
      </AuthCard>
    );
  if (sentTo)
    return (
      <AuthCard title="Confirm your address" id="register-title">
        <p role="status">
          We sent a link to <strong>{sentTo}</strong>. Open it to activate your account, then sign in. The
          link works for 7 days.
        </p>
        <BackToSignIn />
      </AuthCard>
    );
  return (
    <AuthCard title="Create an account" id="register-title">
      <form className="stack" onSubmit={submit} aria-labelledby="register-title">
        <TextField
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
          required
        />
        <NewPasswordFields label="Password" pass={pass} again={again} setPass={setPass} setAgain={setAgain} />
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <BackToSignIn label="I have an account: sign in" />
    </AuthCard>
  );
}

/** `/verify-email?token=…`: the mailed verification link; confirms the address, then offers sign-in. */
export function VerifyEmail() {
  const { search } = useLocation();
  const token = search.get('token') ?? '';
  const [email, setEmail] = useState<string | null>(null);
  const { error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      const r = await api<{ verified: boolean; email: string }>(
        'GET',
        `/user/verify?token=${encodeURIComponent(token)}`,
        { anonymous: true },
      );
      setEmail(r.email);
    });
  }, [token, run]);
  if (error)
    return (
      <AuthCard title="This link does not work" id="verify-title">
        <ErrorText error={error} />
        <p>
          Verification links work for 7 days. If your address is already confirmed, just sign in; otherwise
          register again to get a new link.
        </p>
        <BackToSignIn label="Go to sign-in" />
      </AuthCard>
    );
  if (email === null) return <p className="loading">Confirming your address…</p>;
  return (
    <AuthCard title="Address confirmed" id="verify-title">
      <p role="status">
        <strong>{email}</strong> is confirmed and your account is active.
      </p>
      <BackToSignIn label="Sign in" />
    </AuthCard>
  );
}

/** The paths above, shown signed in or not (a reset link may be opened in a signed-in browser). */
export const ACCOUNT_FLOW_PATHS: Record<string, () => ReactNode> = {
  '/forgot-password': () => <ForgotPassword />,
  '/reset-password': () => <ResetPassword />,
  '/register': () => <Register />,
  '/verify-email': () => <VerifyEmail />,
};

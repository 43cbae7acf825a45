import { type FormEvent, useState } from 'react';
import { api, del, post } from '../../api/client';
import { useSession } from '../../app/session';
import { ErrorText, TextField, useAction } from '../../components/ui';
import { newPasswordProblem, PASSWORD_HINT } from '../auth/password';
import { PlanAndQuota } from './PlanAndQuota';
import { QuietHoursForm } from './QuietHoursForm';
import { TwoFactor } from './TwoFactor';

export function Account() {
  const { user, refreshUser } = useSession();
  const avatar = useAction();
  if (!user) return null;
  return (
    <div className="stack">
      <h1>Account</h1>
      <section className="card stack" aria-labelledby="profile-title">
        <h2 id="profile-title">Profile</h2>
        <div className="row wrap">
          {user.image ? (
            <img src={user.image} alt="Your avatar" className="avatar large" />
          ) : (
            <span className="avatar large placeholder" aria-hidden="true" />
          )}
          <div className="grow">
            <p>
              <strong>{user.email}</strong> {user.admin ? <span className="tag">administrator</span> : null}
            </p>
            <p className="hint">Plan: {user.plan}</p>
          </div>
        </div>
        <label className="file">
          <span>Avatar: upload a PNG, JPEG, GIF or WebP</span>
          <input
            type="file"
            accept="image/png,image/jpeg,image/gif,image/webp"
            onChange={(e) => {
              const f = e.target.files?.[0];
              e.target.value = '';
              if (!f) return;
              void avatar.run(async () => {
                const fd = new FormData();
                fd.append('file', f);
                await api('POST', '/current/user/image', { body: fd });
                await refreshUser();
              });
            }}
          />
        </label>
        {user.image ? (
          <button
            type="button"
            onClick={() =>
              void avatar.run(async () => {
                await del('/current/user/image');
                await refreshUser();
              })
            }
          >
            Remove avatar
          </button>
        ) : null}
        <ErrorText error={avatar.error} />
      </section>
      <PasswordForm />
      <TwoFactor />
      <QuietHoursForm />
      <PlanAndQuota />
    </div>
  );
}

function PasswordForm() {
  const [oldPass, setOldPass] = useState('');
  const [pass, setPass] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, setError, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    const problem = newPasswordProblem(pass, again);
    if (problem) return setError(new Error(problem));
    void run(async () => {
      await post('/current/user/password', { oldPass, pass });
      setOldPass('');
      setPass('');
      setAgain('');
      setDone(true);
    });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="pw-title">
      <h2 id="pw-title">Password</h2>
      <TextField
        label="Current password"
        type="password"
        autoComplete="current-password"
        value={oldPass}
        onChange={setOldPass}
        required
      />
      <div className="grid2">
        <TextField
          label="New password"
          hint={PASSWORD_HINT}
          type="password"
          autoComplete="new-password"
          value={pass}
          onChange={setPass}
          required
        />
        <TextField
          label="New password again"
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={setAgain}
          required
        />
      </div>
      <ErrorText error={error} />
      {done ? <p role="status">Password changed. Your other devices were signed out.</p> : null}
      <button type="submit" className="primary" disabled={busy}>
        Change password
      </button>
    </form>
  );
}

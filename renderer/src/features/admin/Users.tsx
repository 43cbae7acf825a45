import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { del, get, post, put, query } from '../../api/client';
import type { User } from '../../api/types';
import { useSession } from '../../app/session';
import { Dialog, ErrorText, Field, useAction } from '../../components/ui';

const PAGE = 100;

export function Users() {
  const { user: me } = useSession();
  const [users, setUsers] = useState<User[]>([]);
  const [more, setMore] = useState(false);
  const [editing, setEditing] = useState<User | 'new' | null>(null);
  const load = useAction();
  const act = useAction();

  const fetchPage = useCallback(async (after?: number) => {
    const r = await get<{ users: User[]; paging: { size: number; limit: number; next?: string } }>(
      `/user${query({ limit: PAGE, since: after })}`,
    );
    // The server says whether another page follows (it reads one row past the page to know).
    setMore(r.paging.next !== undefined);
    return r.users;
  }, []);
  const reload = useCallback(() => load.run(async () => setUsers(await fetchPage())), [load.run, fetchPage]);
  useEffect(() => void reload(), [reload]);

  const setPlan = (u: User, plan: string) =>
    act.run(async () => {
      await post(`/user/${u.id}/plan`, { plan });
      await reload();
    });
  const remove = (u: User) =>
    act.run(async () => {
      if (!confirm(`Delete the account ${u.email} with all its channels and messages?`)) return;
      await del(`/user/${u.id}`);
      await reload();
    });

  return (
    <section className="stack" aria-labelledby="users-title">
      <div className="pane-head">
        <h1 id="users-title">Users</h1>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New user
        </button>
      </div>
      <ErrorText error={load.error} />
      <ErrorText error={act.error} />
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Plan</th>
            <th scope="col">2FA</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.id}>
              <td>
                {u.email} {u.verified ? null : <span className="tag">unverified</span>}
              </td>
              <td>{u.admin ? 'admin' : 'user'}</td>
              <td>
                <select
                  aria-label={`Plan of ${u.email}`}
                  value={u.plan}
                  onChange={(e) => void setPlan(u, e.target.value)}
                >
                  <option value="free">free</option>
                  <option value="pro">pro</option>
                  <option value="business">business</option>
                </select>
              </td>
              <td>{u.mfaEnabled ? 'on' : 'off'}</td>
              <td className="actions">
                <button type="button" onClick={() => setEditing(u)} aria-label={`Edit ${u.email}`}>
                  Edit
                </button>
                {u.id !== me?.id ? (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => void remove(u)}
                    aria-label={`Delete ${u.email}`}
                  >
                    Delete
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {more ? (
        <button
          type="button"
          onClick={() =>
            void load.run(async () => {
              const next = await fetchPage(users.at(-1)?.id);
              setUsers((u) => [...u, ...next]);
            })
          }
        >
          Load more users
        </button>
      ) : null}
      <Dialog
        title={editing === 'new' ? 'New user' : editing ? `Edit ${editing.email}` : ''}
        open={editing !== null}
        onClose={() => setEditing(null)}
      >
        {editing ? (
          <UserForm
            user={editing === 'new' ? null : editing}
            onDone={() => {
              setEditing(null);
              void reload();
            }}
          />
        ) : null}
      </Dialog>
    </section>
  );
}

function UserForm({ user, onDone }: { user: User | null; onDone: () => void }) {
  const [email, setEmail] = useState(user?.email ?? '');
  const [pass, setPass] = useState('');
  const [admin, setAdmin] = useState(user?.admin ?? false);
  const [resetMfa, setResetMfa] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      if (user)
        await put(`/user/${user.id}`, {
          email: user.email,
          admin,
          ...(pass ? { pass } : {}),
          ...(resetMfa ? { resetMfa: true } : {}),
        });
      else await post('/user', { email: email.trim(), pass, admin });
      onDone();
    });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <Field label="Email">
        {(id) => (
          <input
            id={id}
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
            disabled={!!user}
          />
        )}
      </Field>
      <Field
        label={user ? 'New password' : 'Password'}
        hint={user ? 'Empty: unchanged. Changing it signs the user out everywhere.' : '8 characters or more'}
      >
        {(id) => (
          <input
            id={id}
            type="password"
            autoComplete="new-password"
            value={pass}
            onChange={(e) => setPass(e.target.value)}
            required={!user}
          />
        )}
      </Field>
      <label className="check">
        <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} /> Administrator
      </label>
      {user?.mfaEnabled ? (
        <label className="check">
          <input type="checkbox" checked={resetMfa} onChange={(e) => setResetMfa(e.target.checked)} /> Turn
          off their two-factor sign-in
        </label>
      ) : null}
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        {user ? 'Save' : 'Create user'}
      </button>
    </form>
  );
}

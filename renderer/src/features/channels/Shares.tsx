import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { del, get, post, put } from '../../api/client';
import type { Channel, Share } from '../../api/types';
import { useSignals } from '../../app/live';
import { CopyField, ErrorText, Field, formatDate, useAction } from '../../components/ui';

export function Shares({ channel }: { channel: Channel }) {
  const [shares, setShares] = useState<Share[]>([]);
  const [email, setEmail] = useState('');
  const [permission, setPermission] = useState<'view' | 'send'>('view');
  const [canShare, setCanShare] = useState(false);
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setShares(await get<Share[]>(`/application/${channel.id}/share`))),
    [channel.id, load.run],
  );
  useEffect(() => void reload(), [reload]);
  // The recipient accepting, declining or leaving shows here as it happens.
  useSignals((s) => {
    if (s.kind === 'share:changed' && s.appid === channel.id) void reload();
  });

  const invite = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      await post(`/application/${channel.id}/share`, { email: email.trim(), permission, canShare });
      setEmail('');
      await reload();
    });
  };
  const change = (s: Share, patch: Partial<Pick<Share, 'permission' | 'canShare'>>) =>
    act.run(async () => {
      await put(`/share/${s.id}`, patch);
      await reload();
    });
  const revoke = (s: Share) =>
    act.run(async () => {
      if (!confirm(`Stop sharing “${channel.name}” with ${s.email}?`)) return;
      await del(`/share/${s.id}`);
      await reload();
    });

  return (
    <section className="card stack" aria-labelledby={`shares-${channel.id}`}>
      <h2 id={`shares-${channel.id}`}>Sharing</h2>
      <ErrorText error={load.error} />
      {shares.length === 0 ? <p className="hint">Not shared with anyone.</p> : null}
      <ul className="rows">
        {shares.map((s) => (
          <li key={s.id} className="row wrap">
            <span className="grow">
              {s.email} <span className="tag">{s.status}</span>
            </span>
            <label>
              <span className="sr-only">Permission for {s.email}</span>
              <select
                value={s.permission}
                onChange={(e) => void change(s, { permission: e.target.value as 'view' | 'send' })}
              >
                <option value="view">can view</option>
                <option value="send">can view and send</option>
              </select>
            </label>
            <label className="check">
              <input
                type="checkbox"
                checked={s.canShare}
                onChange={() => void change(s, { canShare: !s.canShare })}
              />{' '}
              may reshare
            </label>
            <button type="button" className="danger" onClick={() => void revoke(s)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <form className="row wrap" onSubmit={invite} aria-label="Invite by email">
        <Field label="Invite by email">
          {(id) => (
            <input id={id} type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          )}
        </Field>
        <Field label="Permission">
          {(id) => (
            <select
              id={id}
              value={permission}
              onChange={(e) => setPermission(e.target.value as 'view' | 'send')}
            >
              <option value="view">can view</option>
              <option value="send">can view and send</option>
            </select>
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={canShare} onChange={(e) => setCanShare(e.target.checked)} /> may
          reshare
        </label>
        <button type="submit" className="primary" disabled={act.busy}>
          Invite
        </button>
      </form>
      <ErrorText error={act.error} />
    </section>
  );
}

/** Shares offered to me: accept or decline; an accepted `send` share shows its S token once. */
export function IncomingShares({ onChanged }: { onChanged: () => void }) {
  const [shares, setShares] = useState<Share[]>([]);
  const [token, setToken] = useState<string | null>(null);
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setShares(await get<Share[]>('/share/incoming'))),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  // A share offered (or withdrawn) while this page is open shows without a reload.
  useSignals((s) => {
    if (s.kind === 'share:changed') void reload();
  });
  const pending = shares.filter((s) => s.status === 'pending');
  if (!pending.length && !token && !load.error) return null;
  return (
    <section className="card stack" aria-labelledby="incoming-title">
      <h2 id="incoming-title">Shared with you</h2>
      <ErrorText error={load.error} />
      {token ? (
        <CopyField label="Your sending token for this channel (shown once)" value={token} secret />
      ) : null}
      <ul className="rows">
        {pending.map((s) => (
          <li key={s.id} className="row wrap">
            <span className="grow">
              <strong>{s.channelName ?? `Channel ${s.appid}`}</strong> from {s.ownerEmail ?? 'someone'} (
              {s.permission}) · {formatDate(s.createdAt)}
            </span>
            <button
              type="button"
              className="primary"
              onClick={() =>
                void act.run(async () => {
                  const c = await post<Channel>(`/share/${s.id}/accept`);
                  if (c.token) setToken(c.token);
                  await reload();
                  onChanged();
                })
              }
            >
              Accept
            </button>
            <button
              type="button"
              onClick={() =>
                void act.run(async () => {
                  await post(`/share/${s.id}/decline`);
                  await reload();
                })
              }
            >
              Decline
            </button>
          </li>
        ))}
      </ul>
      <ErrorText error={act.error} />
    </section>
  );
}

import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { del, get, post, put } from '../../api/client';
import type { Channel, ChannelKey } from '../../api/types';
import { CopyField, ErrorText, Field, formatDate, useAction } from '../../components/ui';
import { curlLine } from '../inbox/FirstMessage';

/** A secret shown once, with copy and the ready curl line. */
export function ShownOnce({ label, token }: { label: string; token: string }) {
  return (
    <div className="card stack shown-once" role="status">
      <CopyField label={label} value={token} secret />
      <CopyField label="Send a message with it" value={curlLine(location.origin, token)} />
      <p className="hint">Copy it now: Belfry keeps only a fingerprint and cannot show it again.</p>
    </div>
  );
}

function expiryText(ms: number): string {
  if (!ms) return 'no expiry';
  return ms < Date.now()
    ? `expired ${new Date(ms).toLocaleDateString()}`
    : `expires ${new Date(ms).toLocaleDateString()}`;
}

export function Keys({ channel }: { channel: Channel }) {
  const [keys, setKeys] = useState<ChannelKey[]>([]);
  const [shown, setShown] = useState<{ id: number; token: string } | null>(null);
  const [name, setName] = useState('');
  const [canRead, setCanRead] = useState(false);
  const [canWrite, setCanWrite] = useState(true);
  const [note, setNote] = useState('');
  const [expires, setExpires] = useState('');
  const load = useAction();
  const act = useAction();

  const reload = useCallback(
    () => load.run(async () => setKeys(await get<ChannelKey[]>(`/application/${channel.id}/token`))),
    [channel.id, load.run],
  );
  useEffect(() => void reload(), [reload]);

  const issue = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const expiresAt = expires ? new Date(`${expires}T23:59:59`).getTime() : 0;
      const k = await post<ChannelKey>(`/application/${channel.id}/token`, {
        name: name.trim(),
        canRead,
        canWrite,
        note,
        expiresAt,
      });
      setShown({ id: k.id, token: k.token });
      setName('');
      setNote('');
      setExpires('');
      await reload();
    });
  };
  const rotate = (k: ChannelKey) =>
    act.run(async () => {
      if (!confirm('Rotate this key? Programs using the old value stop working at once.')) return;
      const r = await post<ChannelKey>(`/token/${k.id}/rotate`);
      setShown({ id: r.id, token: r.token });
      await reload();
    });
  const revoke = (k: ChannelKey) =>
    act.run(async () => {
      if (!k.revoked && !confirm('Revoke this key? It stops working at once.')) return;
      await del(`/token/${k.id}`);
      await reload();
    });
  const toggle = (k: ChannelKey, field: 'canRead' | 'canWrite') =>
    act.run(async () => {
      await put(`/token/${k.id}`, { [field]: !k[field] });
      await reload();
    });

  return (
    <section className="card stack" aria-labelledby={`keys-${channel.id}`}>
      <h2 id={`keys-${channel.id}`}>Keys</h2>
      {shown ? <ShownOnce label="New key (shown once)" token={shown.token} /> : null}
      <ErrorText error={load.error} />
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Read</th>
            <th scope="col">Send</th>
            <th scope="col">Expiry</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} className={k.revoked ? 'muted' : ''}>
              <td>
                {k.primary ? 'Primary key' : k.name || '(unnamed)'}
                {k.note ? <small className="hint block">{k.note}</small> : null}
              </td>
              <td className="mono">{k.revoked ? 'revoked' : k.token}</td>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Read permission of ${k.name || 'key'}`}
                  checked={k.canRead}
                  disabled={k.revoked || act.busy}
                  onChange={() => void toggle(k, 'canRead')}
                />
              </td>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Send permission of ${k.name || 'key'}`}
                  checked={k.canWrite}
                  disabled={k.revoked || act.busy}
                  onChange={() => void toggle(k, 'canWrite')}
                />
              </td>
              <td>{expiryText(k.expiresAt)}</td>
              <td>{formatDate(k.lastUsed)}</td>
              <td className="actions">
                {!k.revoked ? (
                  <button type="button" onClick={() => void rotate(k)}>
                    Rotate
                  </button>
                ) : null}
                {!k.primary ? (
                  <button type="button" className="danger" onClick={() => void revoke(k)}>
                    {k.revoked ? 'Delete' : 'Revoke'}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="stack" onSubmit={issue} aria-label="New key">
        <h3>New key</h3>
        <div className="grid2">
          <Field label="Key name">
            {(id) => (
              <input
                id={id}
                value={name}
                onChange={(e) => setName(e.target.value)}
                maxLength={200}
                placeholder="backup script"
              />
            )}
          </Field>
          <Field label="Expires on" hint="Empty: never">
            {(id) => (
              <input id={id} type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
            )}
          </Field>
        </div>
        <Field label="Note">
          {(id) => <input id={id} value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />}
        </Field>
        <div className="row">
          <label className="check">
            <input type="checkbox" checked={canWrite} onChange={(e) => setCanWrite(e.target.checked)} /> Can
            send
          </label>
          <label className="check">
            <input type="checkbox" checked={canRead} onChange={(e) => setCanRead(e.target.checked)} /> Can
            read
          </label>
        </div>
        <ErrorText error={act.error} />
        <button type="submit" className="primary" disabled={act.busy}>
          Create key
        </button>
      </form>
    </section>
  );
}

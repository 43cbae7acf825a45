import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { del, get, post } from '../../api/client';
import type { ApiToken, Channel } from '../../api/types';
import { CopyField, ErrorText, Field, formatDate, useAction } from '../../components/ui';
import { parseTags } from '../channels/ChannelForm';

export function ApiTokens() {
  const [tokens, setTokens] = useState<ApiToken[]>([]);
  const [channels, setChannels] = useState<Channel[]>([]);
  const [shown, setShown] = useState<ApiToken | null>(null);
  const [name, setName] = useState('');
  const [access, setAccess] = useState<'read' | 'write'>('read');
  const [appIds, setAppIds] = useState<Set<number>>(new Set());
  const [tags, setTags] = useState('');
  const [expires, setExpires] = useState('');
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setTokens(await get<ApiToken[]>('/api-token'))),
    [load.run],
  );
  useEffect(() => {
    void reload();
    get<Channel[]>('/application').then(setChannels, () => {});
  }, [reload]);
  const byId = new Map(channels.map((c) => [c.id, c.name]));

  const create = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const t = await post<ApiToken>('/api-token', {
        name: name.trim(),
        access,
        appIds: [...appIds],
        appTags: parseTags(tags),
        ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}),
      });
      setShown(t);
      setName('');
      setAppIds(new Set());
      setTags('');
      setExpires('');
      await reload();
    });
  };
  const rotate = (t: ApiToken) =>
    act.run(async () => {
      if (!confirm(`Rotate “${t.name}”? Programs using the old value stop working at once.`)) return;
      setShown(await post<ApiToken>(`/api-token/${t.id}/rotate`));
      await reload();
    });
  const remove = (t: ApiToken) =>
    act.run(async () => {
      if (!confirm(`Delete “${t.name}”?`)) return;
      await del(`/api-token/${t.id}`);
      await reload();
    });

  return (
    <section className="stack" aria-labelledby="tokens-title">
      <h1 id="tokens-title">API tokens</h1>
      <p className="hint">
        API tokens let scripts read or manage your messages and channels. Unlike a channel key, they act for
        your account, limited to the channels you choose.
      </p>
      {shown ? (
        <div className="card stack shown-once" role="status">
          <CopyField label={`Token “${shown.name}” (shown once)`} value={shown.token} secret />
          <CopyField
            label="Try it"
            value={`curl -H 'Authorization: Bearer ${shown.token}' '${location.origin}/message?limit=5'`}
          />
        </div>
      ) : null}
      <ErrorText error={load.error} />
      <ErrorText error={act.error} />
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Token</th>
            <th scope="col">Access</th>
            <th scope="col">Scope</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td className="mono">{t.token}</td>
              <td>{t.access}</td>
              <td>
                {t.appIds.length === 0 && t.appTags.length === 0
                  ? 'all channels'
                  : [
                      ...t.appIds.map((id) => byId.get(id) ?? `#${id}`),
                      ...t.appTags.map((x) => `tag ${x}`),
                    ].join(', ')}
              </td>
              <td>{t.expiresAt ? formatDate(t.expiresAt) : 'never'}</td>
              <td className="actions">
                <button type="button" onClick={() => void rotate(t)} aria-label={`Rotate ${t.name}`}>
                  Rotate
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => void remove(t)}
                  aria-label={`Delete ${t.name}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {tokens.length === 0 && !load.busy ? <p className="empty">No API tokens.</p> : null}
      <form className="card stack" onSubmit={create} aria-label="New API token">
        <h2>New API token</h2>
        <div className="grid2">
          <Field label="Token name">
            {(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} required />}
          </Field>
          <Field label="Access">
            {(id) => (
              <select id={id} value={access} onChange={(e) => setAccess(e.target.value as 'read' | 'write')}>
                <option value="read">read</option>
                <option value="write">read and write</option>
              </select>
            )}
          </Field>
          <Field
            label="Channel tags"
            hint="Comma separated; with no channels and no tags the token sees all channels"
          >
            {(id) => <input id={id} value={tags} onChange={(e) => setTags(e.target.value)} />}
          </Field>
          <Field label="Token expires on" hint="Empty: never">
            {(id) => (
              <input id={id} type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
            )}
          </Field>
        </div>
        <fieldset className="chips">
          <legend>Channels</legend>
          {channels
            .filter((c) => !c.internal)
            .map((c) => (
              <label key={c.id} className="check">
                <input
                  type="checkbox"
                  checked={appIds.has(c.id)}
                  onChange={(e) => {
                    const next = new Set(appIds);
                    if (e.target.checked) next.add(c.id);
                    else next.delete(c.id);
                    setAppIds(next);
                  }}
                />{' '}
                {c.name}
              </label>
            ))}
        </fieldset>
        <button type="submit" className="primary" disabled={act.busy}>
          Create token
        </button>
      </form>
    </section>
  );
}

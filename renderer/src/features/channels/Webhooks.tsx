import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { del, get, post } from '../../api/client';
import type { Channel, Webhook } from '../../api/types';
import { CopyField, ErrorText, Field, formatDate, useAction } from '../../components/ui';

/** Public webhooks (docs/api.md "Public webhooks"): URLs that send to this channel without a header. */
export function Webhooks({ channel }: { channel: Channel }) {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [shown, setShown] = useState<Webhook | null>(null);
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'static' | 'dynamic'>('dynamic');
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [priority, setPriority] = useState('');
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setHooks(await get<Webhook[]>(`/application/${channel.id}/webhook`))),
    [channel.id, load.run],
  );
  useEffect(() => void reload(), [reload]);

  const create = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const w = await post<Webhook>(`/application/${channel.id}/webhook`, {
        name: name.trim(),
        mode,
        title,
        text,
        priority: priority === '' ? null : Number(priority),
      });
      setShown(w);
      setName('');
      setTitle('');
      setText('');
      await reload();
    });
  };
  const rotate = (w: Webhook) =>
    act.run(async () => {
      if (!confirm('Make a new URL? The old one stops working at once.')) return;
      setShown(await post<Webhook>(`/webhook-config/${w.id}/rotate`));
      await reload();
    });
  const remove = (w: Webhook) =>
    act.run(async () => {
      if (!confirm(`Delete the webhook “${w.name}”? Its URL stops working at once.`)) return;
      await del(`/webhook-config/${w.id}`);
      await reload();
    });

  return (
    <section className="card stack" aria-labelledby={`hooks-${channel.id}`}>
      <h2 id={`hooks-${channel.id}`}>Public webhooks</h2>
      {shown ? (
        <div className="shown-once stack" role="status">
          <CopyField label={`URL of “${shown.name}” (shown once)`} value={shown.url} secret />
          <CopyField
            label="Try it"
            value={
              shown.mode === 'static'
                ? `curl '${shown.url}'`
                : `curl '${shown.url}?message=Hello%20from%20a%20webhook'`
            }
          />
        </div>
      ) : null}
      <ErrorText error={load.error} />
      {hooks.length === 0 ? (
        <p className="hint">No public webhooks. Anyone who knows a webhook’s URL can send to this channel.</p>
      ) : null}
      <ul className="rows">
        {hooks.map((w) => (
          <li key={w.id} className="row wrap">
            <span className="grow">
              <strong>{w.name}</strong> <span className="tag">{w.mode}</span>{' '}
              <span className="mono hint">{w.url}</span>
              <small className="hint block">last used {formatDate(w.lastUsed)}</small>
            </span>
            <button type="button" onClick={() => void rotate(w)}>
              New URL
            </button>
            <button type="button" className="danger" onClick={() => void remove(w)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <form className="stack" onSubmit={create} aria-label="New webhook">
        <h3>New webhook</h3>
        <div className="grid2">
          <Field label="Webhook name">
            {(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} required />}
          </Field>
          <Field
            label="Mode"
            hint="Static: always the same message. Dynamic: the caller sends message, title, priority."
          >
            {(id) => (
              <select id={id} value={mode} onChange={(e) => setMode(e.target.value as 'static' | 'dynamic')}>
                <option value="dynamic">dynamic</option>
                <option value="static">static</option>
              </select>
            )}
          </Field>
          <Field label="Title">
            {(id) => <input id={id} value={title} onChange={(e) => setTitle(e.target.value)} />}
          </Field>
          <Field label="Priority" hint="Empty: the channel's default">
            {(id) => (
              <input
                id={id}
                type="number"
                min={0}
                max={10}
                value={priority}
                onChange={(e) => setPriority(e.target.value)}
              />
            )}
          </Field>
        </div>
        <Field label={mode === 'static' ? 'Text' : 'Default text'}>
          {(id) => (
            <input
              id={id}
              value={text}
              onChange={(e) => setText(e.target.value)}
              required={mode === 'static'}
            />
          )}
        </Field>
        <ErrorText error={act.error} />
        <button type="submit" className="primary" disabled={act.busy}>
          Create webhook
        </button>
      </form>
    </section>
  );
}

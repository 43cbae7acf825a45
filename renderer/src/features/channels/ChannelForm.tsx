import { type FormEvent, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { ErrorText, Field, useAction } from '../../components/ui';

const TAG_RE = /^[a-z0-9_-]+$/;
/** A new channel's default priority: the API's when the body has none (server/features/channels/service.ts). */
const DEFAULT_PRIORITY = 0;

export function parseTags(input: string): string[] {
  return [
    ...new Set(
      input
        .split(/[\s,]+/)
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

export function ChannelForm({
  channel,
  channels,
  onSaved,
  onCancel,
}: {
  channel?: Channel;
  channels: Channel[];
  onSaved: (c: Channel) => void;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(channel?.name ?? '');
  const [description, setDescription] = useState(channel?.description ?? '');
  const [parentId, setParentId] = useState<string>(channel?.parentId ? String(channel.parentId) : '');
  const [tags, setTags] = useState((channel?.tags ?? []).join(', '));
  const [priority, setPriority] = useState(channel?.defaultPriority ?? DEFAULT_PRIORITY);
  const [sortKey, setSortKey] = useState(channel?.sortKey ?? '');
  const [saved, setSaved] = useState(false);
  const { busy, error, setError, run } = useAction();
  const parents = channels.filter((c) => !c.internal && !c.shared && c.id !== channel?.id);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const tagList = parseTags(tags);
    const bad = tagList.find((t) => !TAG_RE.test(t));
    if (bad) return setError(new Error(`Tag “${bad}” may use only a-z, 0-9, _ and -.`));
    if (tagList.length > 10) return setError(new Error('At most 10 tags.'));
    void run(async () => {
      const body = {
        name: name.trim(),
        description,
        defaultPriority: priority,
        parentId: parentId ? Number(parentId) : channel ? null : undefined,
        tags: tagList,
        sortKey,
      };
      const c = channel
        ? await put<Channel>(`/application/${channel.id}`, body)
        : await post<Channel>('/application', body);
      setSaved(true);
      setTimeout(() => setSaved(false), 2000);
      onSaved(c);
    });
  };

  return (
    <form
      className="card stack"
      onSubmit={submit}
      aria-label={channel ? `Edit ${channel.name}` : 'New channel'}
    >
      <h2>{channel ? 'Channel settings' : 'New channel'}</h2>
      <Field label="Name">
        {(id) => (
          <input id={id} value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        )}
      </Field>
      <Field label="Description">
        {(id) => (
          <textarea id={id} value={description} onChange={(e) => setDescription(e.target.value)} rows={2} />
        )}
      </Field>
      <div className="grid2">
        <Field label="Parent channel">
          {(id) => (
            <select id={id} value={parentId} onChange={(e) => setParentId(e.target.value)}>
              <option value="">(none: top level)</option>
              {parents.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Default priority" hint="0 (silent) to 10 (urgent); used when a message has none">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={10}
              value={priority}
              onChange={(e) => setPriority(Number(e.target.value))}
            />
          )}
        </Field>
      </div>
      <Field
        label="Tags"
        hint="Up to 10, separated by commas; a-z, 0-9, _ and -. API tokens can be scoped by tag."
      >
        {(id) => (
          <input id={id} value={tags} onChange={(e) => setTags(e.target.value)} placeholder="ops, backups" />
        )}
      </Field>
      <Field label="Sort key" hint="Channels are listed by this, then by creation">
        {(id) => <input id={id} value={sortKey} onChange={(e) => setSortKey(e.target.value)} />}
      </Field>
      <ErrorText error={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {channel ? 'Save' : 'Create channel'}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
        {saved ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}

import { type FormEvent, useId, useState } from 'react';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, useAction } from '../../components/ui';
import { NameAndChannelFields, useNameAndChannel } from '../sources/NameAndChannel';
import { createInbox, updateInbox } from './api';
import type { EmailInbox, EmailInboxInput } from './types';

const FIELDS = ['name', 'appid', 'localPart', 'priority'] as const;

/** Make an inbox (with an optional local part) or edit one's name, channel and priority. */
export function InboxForm({
  inbox,
  channels,
  defaultAppid,
  onSaved,
  onCancel,
}: {
  inbox?: EmailInbox;
  channels: Channel[];
  defaultAppid?: number | null;
  onSaved: (i: EmailInbox) => void;
  onCancel: () => void;
}) {
  const nc = useNameAndChannel(channels, inbox, defaultAppid);
  const [localPart, setLocalPart] = useState(inbox?.localPart ?? '');
  const [priority, setPriority] = useState(inbox?.priority == null ? '' : String(inbox.priority));
  const save = useAction();
  const errs = fieldErrors(save.error, FIELDS);
  const titleId = useId();
  const heading = inbox ? `Edit inbox “${inbox.name}”` : 'New inbox';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const body: EmailInboxInput = {
        name: nc.name.trim(),
        appid: Number(nc.appid),
        priority: priority.trim() === '' ? null : Number(priority),
      };
      const lp = localPart.trim().toLowerCase();
      // On edit only a changed local part is sent: the address changes, the old one stops taking mail.
      if (lp && lp !== inbox?.localPart) body.localPart = lp;
      onSaved(inbox ? await updateInbox(inbox.id, body) : await createInbox(body));
    });
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby={titleId}>
      <h2 id={titleId}>{heading}</h2>
      <NameAndChannelFields {...nc} />
      <FieldProblem text={errs.of('name') ?? errs.of('appid')} />
      <div className="grid2">
        <Field
          label={inbox ? 'Local part' : 'Local part (optional)'}
          hint={
            inbox
              ? 'The part before @. A new one changes the address at once: the old address stops taking mail.'
              : 'The part before @: lowercase letters, digits, dot, dash, underscore, up to 64. Empty: 12 random characters, hard to guess.'
          }
        >
          {(id) => (
            <input
              id={id}
              className="mono"
              value={localPart}
              maxLength={64}
              pattern="[a-zA-Z0-9][a-zA-Z0-9._\-]{0,63}"
              autoCapitalize="none"
              spellCheck={false}
              onChange={(e) => setLocalPart(e.target.value)}
              required={inbox !== undefined}
            />
          )}
        </Field>
        <Field label="Priority" hint="0 to 10; empty: the channel's default. A rule may set its own.">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={10}
              step={1}
              value={priority}
              onChange={(e) => setPriority(e.target.value)}
            />
          )}
        </Field>
      </div>
      <FieldProblem text={errs.of('localPart') ?? errs.of('priority')} />
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          {inbox ? 'Save inbox' : 'Create inbox'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

import { type FormEvent, useId, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, useAction } from '../../components/ui';
import { NameAndChannelFields, useNameAndChannel } from '../sources/NameAndChannel';
import type { WebScript, WebScriptInput } from './types';
import { parseOrigins } from './webScripts';

const FIELDS = ['name', 'appid', 'allowedOrigins', 'priority'] as const;

/** Makes a web script, or edits its name, channel, allowed origins and priority. */
export function ScriptForm({
  script,
  channels,
  defaultAppid,
  asPage,
  onSaved,
  onCancel,
}: {
  script?: WebScript;
  channels: Channel[];
  defaultAppid?: number | null;
  asPage?: boolean;
  onSaved: (s: WebScript) => void;
  onCancel?: () => void;
}) {
  const who = useNameAndChannel(channels, script, defaultAppid);
  const [origins, setOrigins] = useState(
    script && !(script.allowedOrigins.length === 1 && script.allowedOrigins[0] === '*')
      ? script.allowedOrigins.join('\n')
      : '',
  );
  const [priority, setPriority] = useState(String(script?.priority ?? 6));
  const act = useAction();
  const titleId = useId();
  const errs = fieldErrors(act.error, FIELDS);
  const title = script ? `Edit “${script.name}”` : 'New web script';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const body: WebScriptInput = {
        name: who.name.trim(),
        appid: Number(who.appid),
        allowedOrigins: parseOrigins(origins),
        priority: Number(priority),
      };
      onSaved(
        script
          ? await put<WebScript>(`/web-script/${script.id}`, body)
          : await post<WebScript>('/web-script', body),
      );
    });
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby={titleId}>
      {asPage ? <h1 id={titleId}>{title}</h1> : <h2 id={titleId}>{title}</h2>}
      {script ? null : (
        <p className="hint">
          A web script is a small snippet for your site: it reports uncaught errors, unhandled promise
          rejections and messages you capture, with the visitor’s last clicks, navigations and requests.
          Belfry groups them into issues and tells the channel about new and regressed ones.
        </p>
      )}
      <NameAndChannelFields {...who} />
      <FieldProblem text={errs.of('name') ?? errs.of('appid')} />
      <div className="grid2">
        <Field
          label="Allowed origins"
          hint="One a line, like https://shop.example.com. Empty: any site may send (no origin check)."
        >
          {(id) => (
            <textarea
              id={id}
              rows={3}
              className="mono"
              value={origins}
              placeholder="https://example.com"
              onChange={(e) => setOrigins(e.target.value)}
            />
          )}
        </Field>
        <Field label="Priority" hint="0-10, of the new-issue and regression messages">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={10}
              value={priority}
              onChange={(e) => setPriority(e.target.value)}
              required
            />
          )}
        </Field>
      </div>
      <FieldProblem text={errs.of('allowedOrigins') ?? errs.of('priority')} />
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy || who.appid === ''}>
          {script ? 'Save web script' : 'Create web script'}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

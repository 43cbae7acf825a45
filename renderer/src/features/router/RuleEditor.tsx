import { type FormEvent, useId, useMemo, useState } from 'react';
import { ApiError, post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, formatDate, useAction } from '../../components/ui';
import { ChannelPicker } from './ChannelPicker';
import { bodyOf, conditionDraft, conditionsOf, draftOf, isProblem, type RuleDraft } from './draft';
import { missingExpressions, renderRule, whyNot } from './template';
import { MATCH_OPS, type MatchOp, METHODS, type RouterEvent, type RouterRule } from './types';

/** The fields a server 400 may name; its text is shown under that field. */
const FIELDS = [
  'name',
  'pathPattern',
  'method',
  'match',
  'appid',
  'title',
  'message',
  'priority',
  'enabled',
] as const;
const MAX_CONDITIONS = 10;

/**
 * Make or edit a rule. Starts from a saved rule, a from-event draft or nothing; the preview renders the
 * title and message against a chosen past event as you type, and says whether the rule would take it.
 */
export function RuleEditor({
  rule,
  initial,
  events,
  previewEventId,
  channels,
  defaultAppid,
  onSaved,
  onCancel,
}: {
  rule?: RouterRule;
  initial?: Partial<RouterRule>;
  events: RouterEvent[];
  previewEventId?: number | null;
  channels: Channel[];
  defaultAppid: number | null;
  onSaved: (r: RouterRule) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<RuleDraft>(() => draftOf(rule ?? initial, defaultAppid));
  const patch = (p: Partial<RuleDraft>) => setD((prev) => ({ ...prev, ...p }));
  const [eventId, setEventId] = useState<number | ''>(previewEventId ?? events[0]?.id ?? '');
  // The chosen event, else the newest (the list may arrive after the editor opened).
  const chosen = events.find((ev) => ev.id === eventId) ?? events[0] ?? null;
  const save = useAction();
  const errs = fieldErrors(save.error, FIELDS);
  const titleId = useId();
  const previewId = useId();
  const heading = rule ? `Edit rule “${rule.name}”` : 'New rule';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const body = bodyOf(d);
      // A value that is not JSON is named like the server's 400s, under its field.
      if (isProblem(body)) throw new ApiError(400, null, body.text);
      onSaved(
        rule
          ? await put<RouterRule>(`/webhook-router/rule/${rule.id}`, body)
          : await post<RouterRule>('/webhook-router/rule', body),
      );
    });
  };

  const setCondition = (key: number, p: { path?: string; op?: MatchOp; value?: string }) =>
    setD((prev) => ({ ...prev, match: prev.match.map((c) => (c.key === key ? { ...c, ...p } : c)) }));

  return (
    <form className="card stack router-rule-form" onSubmit={submit} aria-labelledby={titleId}>
      <h1 id={titleId}>{heading}</h1>
      <div className="grid2">
        <Field label="Name" hint="The sender name of its messages">
          {(id) => (
            <input
              id={id}
              value={d.name}
              maxLength={200}
              onChange={(e) => patch({ name: e.target.value })}
              required
            />
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={d.enabled} onChange={(e) => patch({ enabled: e.target.checked })} />{' '}
          Enabled
        </label>
      </div>
      <FieldProblem text={errs.of('name') ?? errs.of('enabled')} />

      <div className="grid2">
        <Field
          label="Path pattern"
          hint="* is one segment (/github/* takes /github/push, not /github/a/b); ** any number (/github/** takes both; ** alone takes every path)"
        >
          {(id) => (
            <input
              id={id}
              className="mono"
              value={d.pathPattern}
              onChange={(e) => patch({ pathPattern: e.target.value })}
              placeholder="**"
            />
          )}
        </Field>
        <Field label="Method">
          {(id) => (
            <select
              id={id}
              value={d.method}
              onChange={(e) => patch({ method: e.target.value as RuleDraft['method'] })}
            >
              <option value="">Any</option>
              {METHODS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <FieldProblem text={errs.of('pathPattern') ?? errs.of('method')} />

      <fieldset className="stack">
        <legend>Conditions on the body (all must hold)</legend>
        {d.match.length === 0 ? (
          <p className="hint">None: every event on the path and method is taken.</p>
        ) : null}
        <ul className="rows router-conditions" aria-label="Conditions">
          {d.match.map((c, i) => (
            <li key={c.key} className="router-condition">
              <Field label={`Condition ${i + 1} path`}>
                {(id) => (
                  <input
                    id={id}
                    className="mono"
                    value={c.path}
                    onChange={(e) => setCondition(c.key, { path: e.target.value })}
                    placeholder="$.action"
                    required
                  />
                )}
              </Field>
              <Field label={`Condition ${i + 1} test`}>
                {(id) => (
                  <select
                    id={id}
                    value={c.op}
                    onChange={(e) => setCondition(c.key, { op: e.target.value as MatchOp })}
                  >
                    {MATCH_OPS.map((o) => (
                      <option key={o.op} value={o.op}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {c.op === 'equals' ? (
                <Field label={`Condition ${i + 1} value`}>
                  {(id) => (
                    <input
                      id={id}
                      className="mono"
                      value={c.value}
                      onChange={(e) => setCondition(c.key, { value: e.target.value })}
                      placeholder={'"opened"'}
                    />
                  )}
                </Field>
              ) : (
                <span />
              )}
              <button
                type="button"
                className="ghost"
                aria-label={`Remove condition ${i + 1}`}
                onClick={() => patch({ match: d.match.filter((x) => x.key !== c.key) })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        <div className="actions">
          <button
            type="button"
            disabled={d.match.length >= MAX_CONDITIONS}
            onClick={() => patch({ match: [...d.match, conditionDraft()] })}
          >
            Add condition
          </button>
          <span className="hint">
            Path as <span className="mono">$.a.b</span>, <span className="mono">$.list[0]</span>,{' '}
            <span className="mono">$["odd key"]</span>; the value is JSON:{' '}
            <span className="mono">"push"</span>, <span className="mono">3</span>,{' '}
            <span className="mono">true</span>. Up to {MAX_CONDITIONS}.
          </span>
        </div>
        <FieldProblem text={errs.of('match')} />
      </fieldset>

      <div className="grid2">
        <ChannelPicker
          label="Channel"
          hint="Where its messages go"
          none="Choose a channel"
          channels={channels}
          value={d.appid}
          required
          onChange={(appid) => patch({ appid: appid ?? '' })}
        />
        <Field label="Priority" hint="0 to 10; empty: the channel's default">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={10}
              step={1}
              value={d.priority}
              onChange={(e) => patch({ priority: e.target.value })}
            />
          )}
        </Field>
      </div>
      <FieldProblem text={errs.of('appid') ?? errs.of('priority')} />

      <Field
        label="Title template"
        hint="{{a.b}} or {{body.a.b}} reads the body, {{headers.x-github-event}} a header, {{query.name}} the query, {{path}} and {{method}} the request; missing parts are left empty"
      >
        {(id) => (
          <input
            id={id}
            className="mono"
            value={d.title}
            maxLength={1000}
            onChange={(e) => patch({ title: e.target.value })}
          />
        )}
      </Field>
      <FieldProblem text={errs.of('title')} />
      <Field label="Message template" hint="Empty: the body as indented JSON">
        {(id) => (
          <textarea
            id={id}
            className="mono"
            rows={5}
            value={d.message}
            maxLength={10000}
            onChange={(e) => patch({ message: e.target.value })}
          />
        )}
      </Field>
      <FieldProblem text={errs.of('message')} />

      <section className="stack router-preview" aria-labelledby={previewId}>
        <h2 id={previewId}>Preview</h2>
        {events.length === 0 ? (
          <p className="hint">No events yet to preview with: send one to the router URL first.</p>
        ) : (
          <>
            <Field label="Preview with event">
              {(id) => (
                <select
                  id={id}
                  value={chosen?.id ?? ''}
                  onChange={(e) => setEventId(e.target.value ? Number(e.target.value) : '')}
                >
                  {events.map((ev) => (
                    <option key={ev.id} value={ev.id}>
                      {`#${ev.id} ${ev.method} ${ev.path} · ${formatDate(ev.receivedAt)}`}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Preview draft={d} event={chosen} />
          </>
        )}
      </section>

      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          {rule ? 'Save rule' : 'Create rule'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Preview({ draft, event }: { draft: RuleDraft; event: RouterEvent | null }) {
  const out = useMemo(() => (event ? renderRule(draft, event) : null), [draft, event]);
  const conditions = conditionsOf(draft.match);
  if (!event || !out) return null;
  const reason = Array.isArray(conditions)
    ? whyNot({ pathPattern: draft.pathPattern, method: draft.method || null, match: conditions }, event)
    : 'a condition’s value is not JSON';
  const missing = [...missingExpressions(draft.title, event), ...missingExpressions(draft.message, event)];
  return (
    <div className="stack" aria-live="polite">
      <p className={reason ? 'warning' : 'notice'}>
        {reason ? `This rule would not take this event: ${reason}.` : 'This rule would take this event.'}
        {draft.enabled ? '' : ' (It is disabled.)'}
      </p>
      <dl className="router-rendered">
        <dt>Title</dt>
        <dd data-testid="preview-title">{out.title}</dd>
        <dt>Message</dt>
        <dd>
          <pre className="mono router-body" data-testid="preview-message">
            {out.message}
          </pre>
        </dd>
      </dl>
      {missing.length ? (
        <p className="hint">
          Not in this event (rendered empty):{' '}
          <span className="mono">{missing.map((m) => `{{${m}}}`).join(', ')}</span>
        </p>
      ) : null}
    </div>
  );
}

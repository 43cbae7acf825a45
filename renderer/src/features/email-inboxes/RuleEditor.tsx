import { type FormEvent, useId, useState } from 'react';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, formatDate, useAction } from '../../components/ui';
import { createRule, updateRule } from './api';
import { asRegExp, failedPatterns, renderTitle } from './match';
import type { InboxRule, InboxRuleInput, MailEvent, RuleAction, RuleMatch } from './types';

const FIELDS = ['name', 'match', 'action', 'title', 'priority'] as const;

interface Draft {
  name: string;
  from: string;
  subject: string;
  body: string;
  action: RuleAction;
  title: string;
  priority: string;
}

function draftOf(r: Partial<InboxRule> | undefined): Draft {
  return {
    name: r?.name ?? '',
    from: r?.match?.from ?? '',
    subject: r?.match?.subject ?? '',
    body: r?.match?.body ?? '',
    action: r?.action ?? 'message',
    title: r?.title ?? '',
    priority: r?.priority == null ? '' : String(r.priority),
  };
}

function matchOf(d: Draft): RuleMatch {
  const m: RuleMatch = {};
  if (d.from.trim()) m.from = d.from.trim();
  if (d.subject.trim()) m.subject = d.subject.trim();
  if (d.body.trim()) m.body = d.body.trim();
  return m;
}

function bodyOf(d: Draft): InboxRuleInput {
  return {
    name: d.name.trim(),
    match: matchOf(d),
    action: d.action,
    title: d.action === 'message' && d.title.trim() ? d.title.trim() : null,
    priority: d.action === 'message' && d.priority.trim() !== '' ? Number(d.priority) : null,
  };
}

/** A pattern input with its own word on a `/re/` that does not compile. */
function PatternField({
  label,
  value,
  onChange,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  placeholder: string;
}) {
  const bad = asRegExp(value.trim()) === 'invalid';
  return (
    <Field label={label} {...(bad ? { hint: 'Not a valid regular expression.' } : {})}>
      {(id) => (
        <input
          id={id}
          className="mono"
          value={value}
          placeholder={placeholder}
          aria-invalid={bad || undefined}
          spellCheck={false}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/**
 * Make or edit an inbox rule; starts from a saved rule, a from-mail draft or nothing. With mail to
 * try it on, it says whether the rule would take the chosen mail and shows the title it would make.
 */
export function RuleEditor({
  inboxId,
  rule,
  initial,
  mails,
  previewMailId,
  onSaved,
  onCancel,
}: {
  inboxId: number;
  rule?: InboxRule;
  initial?: Partial<InboxRule>;
  mails: MailEvent[];
  previewMailId?: number | null;
  onSaved: (r: InboxRule) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(() => draftOf(rule ?? initial));
  const patch = (p: Partial<Draft>) => setD((prev) => ({ ...prev, ...p }));
  const [mailId, setMailId] = useState<number | ''>(previewMailId ?? mails[0]?.id ?? '');
  const chosen = mails.find((m) => m.id === mailId) ?? mails[0] ?? null;
  const save = useAction();
  const errs = fieldErrors(save.error, FIELDS);
  const titleId = useId();
  const patternsId = useId();
  const previewId = useId();
  const heading = rule ? `Edit rule “${rule.name}”` : 'New rule';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const body = bodyOf(d);
      onSaved(rule ? await updateRule(inboxId, rule.id, body) : await createRule(inboxId, body));
    });
  };

  const failed = chosen ? failedPatterns(matchOf(d), chosen) : [];

  return (
    <form className="card stack inbox-rule-form" onSubmit={submit} aria-labelledby={titleId}>
      <h1 id={titleId}>{heading}</h1>
      <Field label="Name">
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
      <FieldProblem text={errs.of('name')} />

      <fieldset className="stack" aria-describedby={patternsId}>
        <legend>Patterns (all that are filled in must match)</legend>
        <p className="hint" id={patternsId}>
          Plain text matches anywhere, ignoring case: <span className="mono">invoice</span> takes “Your
          Invoice 12”. Text between slashes is a regular expression, flags after the last slash:{' '}
          <span className="mono">/^build \d+ failed$/i</span>. Empty: not checked. All empty: every mail.
        </p>
        <div className="grid2">
          <PatternField
            label="From"
            value={d.from}
            onChange={(from) => patch({ from })}
            placeholder="alerts@example.com"
          />
          <PatternField
            label="Subject"
            value={d.subject}
            onChange={(subject) => patch({ subject })}
            placeholder="/^build \d+ failed$/i"
          />
        </div>
        <PatternField
          label="Body"
          value={d.body}
          onChange={(body) => patch({ body })}
          placeholder="unsubscribe"
        />
        <FieldProblem text={errs.of('match')} />
      </fieldset>

      <fieldset className="stack">
        <legend>Action</legend>
        <div className="row wrap">
          <label className="check">
            <input
              type="radio"
              name="rule-action"
              value="message"
              checked={d.action === 'message'}
              onChange={() => patch({ action: 'message' })}
            />{' '}
            Send a message
          </label>
          <label className="check">
            <input
              type="radio"
              name="rule-action"
              value="drop"
              checked={d.action === 'drop'}
              onChange={() => patch({ action: 'drop' })}
            />{' '}
            Drop (keep the mail in the list, no message)
          </label>
        </div>
        <FieldProblem text={errs.of('action')} />
      </fieldset>

      {d.action === 'message' ? (
        <>
          <div className="grid2">
            <Field
              label="Title template"
              hint="{{subject}}, {{from}} and {{to}} are replaced from the mail; empty: the subject"
            >
              {(id) => (
                <input
                  id={id}
                  className="mono"
                  value={d.title}
                  maxLength={1000}
                  placeholder="{{subject}}"
                  onChange={(e) => patch({ title: e.target.value })}
                />
              )}
            </Field>
            <Field label="Priority" hint="0 to 10; empty: the inbox's, else the channel's default">
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
          <FieldProblem text={errs.of('title') ?? errs.of('priority')} />
        </>
      ) : null}

      <section className="stack inbox-preview" aria-labelledby={previewId}>
        <h2 id={previewId}>Try it on a mail</h2>
        {mails.length === 0 || !chosen ? (
          <p className="hint">No mail yet to try the rule on.</p>
        ) : (
          <>
            <Field label="Mail">
              {(id) => (
                <select
                  id={id}
                  value={chosen.id}
                  onChange={(e) => setMailId(e.target.value ? Number(e.target.value) : '')}
                >
                  {mails.map((m) => (
                    <option key={m.id} value={m.id}>
                      {`${m.subject || '(no subject)'} · ${m.from} · ${formatDate(m.receivedAt)}`}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <div aria-live="polite">
              <p className={failed.length ? 'warning' : 'notice'} data-testid="rule-verdict">
                {failed.length
                  ? `This rule would not take this mail: ${failed.join(', ')} does not match.`
                  : d.action === 'drop'
                    ? 'This rule would take this mail and drop it.'
                    : 'This rule would take this mail.'}
              </p>
              {d.action === 'message' ? (
                <p>
                  Title: <strong data-testid="rule-title-preview">{renderTitle(d.title, chosen)}</strong>
                </p>
              ) : null}
            </div>
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

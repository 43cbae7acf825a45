import { type FormEvent, useId, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { ErrorText, Field, useAction } from '../../components/ui';
import { DurationInput, useDuration } from '../heartbeats/HeartbeatForm';
import { NameAndChannelFields, useNameAndChannel } from '../sources/NameAndChannel';
import { BrowserWorkflowFields } from './BrowserStepEditor';
import { ContentPicker } from './ContentPicker';
import { AnswerChecks, PairsEditor, RequestFields } from './KindFields';
import { draftOf, type KindDraft, kindBody, kindLabel, maskProblems, SECRET_MASK } from './kinds';
import { StepEditor } from './StepEditor';
import { ruleAsTest, TestResult } from './TestResult';
import type { ContentRule, Monitor, MonitorKindName, RuleAnswer, TestAnswer } from './types';

const RULES: { rule: ContentRule; label: string }[] = [
  { rule: 'changed', label: 'Tell me when it changes' },
  { rule: 'contains', label: 'Down unless it contains' },
  { rule: 'notContains', label: 'Down when it contains' },
  { rule: 'matches', label: 'Down unless it matches the regex' },
  { rule: 'numberAbove', label: 'Down unless its number is above' },
  { rule: 'numberBelow', label: 'Down unless its number is below' },
];

/**
 * Create or edit a monitor of one kind: the common fields (§2.2) and the kind's own (§2.3). **Test** runs
 * the check once on the server without saving (`POST /{kind}/test`; content: the rule preview
 * `POST /content-monitor/test-rule`) and shows the answer before anything is saved.
 */
export function MonitorForm({
  kind,
  monitor,
  channels,
  defaultAppid,
  onSaved,
  onCancel,
  asPage,
}: {
  kind: MonitorKindName;
  monitor?: Monitor;
  channels: Channel[];
  defaultAppid?: number | null;
  onSaved: (m: Monitor) => void;
  onCancel?: () => void;
  asPage?: boolean;
}) {
  const m = monitor;
  const who = useNameAndChannel(channels, m, defaultAppid);
  const { name, appid } = who;
  const browser = kind === 'browser-workflow';
  const interval = useDuration(m?.intervalSec ?? (browser ? 300 : 60));
  const resend = useDuration(m?.resendEverySec ?? 0);
  const [timeoutSec, setTimeoutSec] = useState(String(m?.timeoutSec ?? (browser ? 60 : 10)));
  const [retries, setRetries] = useState(String(m?.retries ?? 0));
  const [priority, setPriority] = useState(String(m?.priority ?? 8));
  const [d, setD] = useState<KindDraft>(() => draftOf(m));
  const patch = (p: Partial<KindDraft>) => setD((prev) => ({ ...prev, ...p }));
  const [result, setResult] = useState<TestAnswer | null>(null);
  const save = useAction();
  const test = useAction();
  const titleId = useId();
  const testHintId = useId();
  const title = m ? `Edit “${m.name}”` : `New ${kindLabel(kind).toLowerCase()} monitor`;

  const body = () => ({
    name: name.trim(),
    appid: Number(appid),
    intervalSec: interval.sec,
    timeoutSec: Number(timeoutSec),
    retries: Number(retries),
    resendEverySec: resend.sec,
    priority: Number(priority),
    ...kindBody(kind, d),
  });
  const problems = maskProblems(kind, d, m);
  // A test saves nothing, so the server has no stored secret to put in place of the mask.
  const cannotTest = kind !== 'content-monitor' && JSON.stringify(kindBody(kind, d)).includes(SECRET_MASK);

  const runTest = () =>
    test.run(async () => {
      setResult(null);
      if (kind === 'content-monitor') {
        const r = await post<RuleAnswer>('/content-monitor/test-rule', {
          url: d.url.trim(),
          selector: d.selector,
          rule: d.rule,
          render: d.render,
          ...(d.rule === 'changed' ? {} : { value: kindBody(kind, d).value }),
          ...(d.rule === 'changed' && m?.lastValue ? { previous: m.lastValue } : {}),
        });
        setResult(ruleAsTest(r));
      } else if (browser) {
        // "Run steps now": the unsaved steps once in the server's Chromium (a failure brings a screenshot).
        setResult(await post<TestAnswer>('/browser-workflow/test-step', kindBody(kind, d)));
      } else {
        const { name: _n, appid: _a, ...rest } = body();
        setResult(await post<TestAnswer>(`/${kind}/test`, rest));
      }
    });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (problems.length) return;
    void save.run(async () => {
      onSaved(m ? await put<Monitor>(`/${kind}/${m.id}`, body()) : await post<Monitor>(`/${kind}`, body()));
    });
  };

  const H = asPage ? 'h2' : 'h3';
  return (
    <form className="card stack mon-form" onSubmit={submit} aria-labelledby={titleId}>
      {asPage ? <h1 id={titleId}>{title}</h1> : <h2 id={titleId}>{title}</h2>}
      <NameAndChannelFields {...who} />

      <fieldset className="stack">
        <legend>What to check</legend>
        {kind === 'monitor' || kind === 'content-monitor' ? (
          <Field
            label="URL"
            hint={
              kind === 'monitor' ? 'Up when it answers 2xx or 3xx; redirects are not followed' : undefined
            }
          >
            {(id) => (
              <input
                id={id}
                className="mono"
                value={d.url}
                placeholder="https://example.com/"
                onChange={(e) => patch({ url: e.target.value })}
                required
              />
            )}
          </Field>
        ) : null}
        {kind === 'http-monitor' ? (
          <>
            <RequestFields value={d} onChange={patch} />
            <label className="check">
              <input
                type="checkbox"
                checked={d.ignoreTlsErrors}
                onChange={(e) => patch({ ignoreTlsErrors: e.target.checked })}
              />{' '}
              Ignore TLS certificate errors
            </label>
            <H className="mon-sub">Checks on the answer</H>
            <AnswerChecks value={d} onChange={patch} />
            <Field label="Certificate expires within (days) is down" hint="0: off">
              {(id) => (
                <input
                  id={id}
                  type="number"
                  min={0}
                  max={365}
                  value={d.tlsExpiryDays}
                  onChange={(e) => patch({ tlsExpiryDays: e.target.value })}
                />
              )}
            </Field>
          </>
        ) : null}
        {kind === 'content-monitor' ? (
          <>
            <label className="check">
              <input
                type="checkbox"
                checked={d.render === 'browser'}
                onChange={(e) => patch({ render: e.target.checked ? 'browser' : 'html' })}
              />{' '}
              The page builds its text with JavaScript (render it in Chromium)
            </label>
            <ContentPicker
              Heading={H}
              url={d.url}
              render={d.render}
              onPick={(selector) => patch({ selector })}
            />
            <div className="grid2">
              <Field label="CSS selector">
                {(id) => (
                  <input
                    id={id}
                    className="mono"
                    value={d.selector}
                    maxLength={500}
                    onChange={(e) => patch({ selector: e.target.value })}
                    required
                  />
                )}
              </Field>
              <Field label="Rule">
                {(id) => (
                  <select
                    id={id}
                    value={d.rule}
                    onChange={(e) => patch({ rule: e.target.value as ContentRule })}
                  >
                    {RULES.map((r) => (
                      <option key={r.rule} value={r.rule}>
                        {r.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {d.rule === 'changed' ? null : (
                <Field
                  label="Value"
                  hint={
                    d.rule === 'matches'
                      ? 'A regex: /…/flags or its source'
                      : d.rule.startsWith('number')
                        ? 'A number'
                        : 'Text'
                  }
                >
                  {(id) => (
                    <input
                      id={id}
                      type={d.rule.startsWith('number') ? 'number' : 'text'}
                      step="any"
                      value={d.value}
                      onChange={(e) => patch({ value: e.target.value })}
                      required
                    />
                  )}
                </Field>
              )}
            </div>
          </>
        ) : null}
        {kind === 'port-monitor' ? (
          <>
            <div className="grid2">
              <Field label="Host" hint="A name or an IP address">
                {(id) => (
                  <input
                    id={id}
                    className="mono"
                    value={d.host}
                    maxLength={253}
                    onChange={(e) => patch({ host: e.target.value })}
                    required
                  />
                )}
              </Field>
              <Field label="Port">
                {(id) => (
                  <input
                    id={id}
                    type="number"
                    min={1}
                    max={65_535}
                    value={d.port}
                    onChange={(e) => patch({ port: e.target.value })}
                    required
                  />
                )}
              </Field>
            </div>
            <label className="check">
              <input type="checkbox" checked={d.tls} onChange={(e) => patch({ tls: e.target.checked })} /> TLS
              handshake after connecting
            </label>
            {d.tls ? (
              <label className="check">
                <input
                  type="checkbox"
                  checked={d.ignoreTlsErrors}
                  onChange={(e) => patch({ ignoreTlsErrors: e.target.checked })}
                />{' '}
                Ignore TLS certificate errors
              </label>
            ) : null}
          </>
        ) : null}
        {kind === 'workflow-monitor' ? (
          <>
            <PairsEditor
              label="Variables"
              namePlaceholder="name"
              rows={d.variables}
              onChange={(variables) => patch({ variables })}
            />
            <StepEditor steps={d.steps} onChange={(steps) => patch({ steps })} />
          </>
        ) : null}
        {browser ? (
          <BrowserWorkflowFields
            variables={d.variables}
            steps={d.browserSteps}
            cookies={d.cookies}
            onChange={patch}
          />
        ) : null}
      </fieldset>

      <fieldset className="stack">
        <legend>Schedule and alerts</legend>
        <div className="grid2">
          <DurationInput
            label="Check every"
            value={interval.value}
            unit={interval.unit}
            min={1}
            onChange={interval.onChange}
          />
          <Field label="Timeout (seconds)">
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                max={browser ? 300 : 120}
                value={timeoutSec}
                onChange={(e) => setTimeoutSec(e.target.value)}
                required
              />
            )}
          </Field>
          <Field label="Retries" hint="Failed checks in a row tolerated before it is down">
            {(id) => (
              <input
                id={id}
                type="number"
                min={0}
                max={10}
                value={retries}
                onChange={(e) => setRetries(e.target.value)}
                required
              />
            )}
          </Field>
          <DurationInput
            label="Remind every"
            hint="While down; 0: no reminders"
            value={resend.value}
            unit={resend.unit}
            min={0}
            onChange={resend.onChange}
          />
          <Field label="Priority" hint="Of down messages (0-10); recoveries are sent at 2">
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
      </fieldset>

      {problems.map((p) => (
        <p key={p} className="error" role="alert">
          {p}
        </p>
      ))}
      <div className="actions">
        <button
          type="button"
          onClick={() => void runTest()}
          disabled={test.busy || cannotTest}
          aria-describedby={cannotTest ? testHintId : undefined}
        >
          {browser
            ? test.busy
              ? 'Running steps…'
              : 'Run steps now'
            : test.busy
              ? 'Testing…'
              : kind === 'content-monitor'
                ? 'Test rule'
                : 'Test'}
        </button>
        {cannotTest ? (
          <small className="hint" id={testHintId}>
            A test keeps nothing, so it cannot use the hidden values (********): type them again to test, or
            save and use Check now.
          </small>
        ) : null}
      </div>
      <ErrorText error={test.error} />
      {result ? <TestResult result={result} title={browser ? 'Run result' : 'Test result'} /> : null}
      <ErrorText error={save.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy || appid === '' || problems.length > 0}>
          {m ? 'Save monitor' : 'Create monitor'}
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

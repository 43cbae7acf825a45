import { useId, useState } from 'react';
import { post } from '../../api/client';
import { ErrorText, Field, useAction } from '../../components/ui';
import {
  BROWSER_ACTIONS,
  type BrowserStepDraft,
  browserStepToDraft,
  type CookieDraft,
  cookiesToDrafts,
  draftToBrowserStep,
  emptyBrowserStep,
  firstGotoUrl,
  selectorUse,
  valueLabel,
} from './browser';
import { PairsEditor } from './KindFields';
import { moveItem, type Pair, SECRET_MASK } from './kinds';
import type { BrowserAction, BrowserCookie, BrowserStep } from './types';

const STEPS_MAX = 50;
const COOKIES_MAX = 50;

/** One step: its action and the fields that action reads, its own timeout, move and remove. */
function StepRow({
  s,
  i,
  count,
  set,
  move,
  remove,
}: {
  s: BrowserStepDraft;
  i: number;
  count: number;
  set: (patch: Partial<BrowserStepDraft>) => void;
  move: (to: number) => void;
  remove: () => void;
}) {
  const n = i + 1;
  const sel = selectorUse(s.action);
  const val = valueLabel(s.action);
  const masked = s.action === 'fill' && s.secret && s.value === SECRET_MASK;
  return (
    <li className="card stack" aria-label={`Step ${n}`}>
      <div className="row wrap">
        <strong>Step {n}</strong>
        <Field label={`Step ${n} action`}>
          {(id) => (
            <select
              id={id}
              value={s.action}
              onChange={(e) => set({ action: e.target.value as BrowserAction })}
            >
              {BROWSER_ACTIONS.map((a) => (
                <option key={a.action} value={a.action}>
                  {a.label} ({a.action})
                </option>
              ))}
            </select>
          )}
        </Field>
        <span className="grow" />
        <button type="button" aria-label={`Move step ${n} up`} disabled={i === 0} onClick={() => move(i - 1)}>
          ↑
        </button>
        <button
          type="button"
          aria-label={`Move step ${n} down`}
          disabled={i === count - 1}
          onClick={() => move(i + 1)}
        >
          ↓
        </button>
        <button
          type="button"
          className="danger"
          aria-label={`Remove step ${n}`}
          disabled={count === 1}
          onClick={remove}
        >
          Remove
        </button>
      </div>
      <div className="grid2">
        {s.action === 'goto' ? (
          <Field label={`Step ${n} URL`} hint="http or https; {{variable}} is replaced">
            {(id) => (
              <input
                id={id}
                className="mono"
                value={s.url}
                placeholder="https://example.com/login"
                onChange={(e) => set({ url: e.target.value })}
                required
              />
            )}
          </Field>
        ) : null}
        {sel ? (
          <Field
            label={`Step ${n} selector`}
            hint={
              sel === 'required'
                ? 'CSS or Playwright: #email, text="Sign in", label input'
                : s.action === 'expectText'
                  ? 'Optional; default: the whole page (body)'
                  : 'Optional'
            }
          >
            {(id) => (
              <input
                id={id}
                className="mono"
                value={s.selector}
                maxLength={500}
                onChange={(e) => set({ selector: e.target.value })}
                required={sel === 'required'}
              />
            )}
          </Field>
        ) : null}
        {val ? (
          <Field
            label={`Step ${n} ${val.label.toLowerCase()}`}
            hint={masked ? 'Hidden: kept unless you change it' : val.hint}
          >
            {(id) => (
              <input
                id={id}
                className="mono"
                type={
                  s.action === 'fill' && s.secret ? 'password' : s.action === 'waitFor' ? 'number' : 'text'
                }
                min={s.action === 'waitFor' ? 0 : undefined}
                max={s.action === 'waitFor' ? 30_000 : undefined}
                autoComplete={s.action === 'fill' && s.secret ? 'new-password' : 'off'}
                value={s.value}
                onChange={(e) => set({ value: e.target.value })}
                required={s.action !== 'waitFor' && s.action !== 'fill'}
              />
            )}
          </Field>
        ) : null}
        <Field label={`Step ${n} timeout (ms)`} hint="100-60000; empty: 10000">
          {(id) => (
            <input
              id={id}
              type="number"
              min={100}
              max={60_000}
              value={s.timeoutMs}
              placeholder="10000"
              onChange={(e) => set({ timeoutMs: e.target.value })}
            />
          )}
        </Field>
      </div>
      {s.action === 'fill' ? (
        <label className="check">
          <input
            type="checkbox"
            checked={s.secret}
            onChange={(e) =>
              set({ secret: e.target.checked, ...(s.value === SECRET_MASK ? { value: '' } : {}) })
            }
          />{' '}
          Secret (a password: stored hidden, never shown again)
        </label>
      ) : null}
    </li>
  );
}

/**
 * A browser workflow's steps: add, remove, move up/down, each with its action's fields; a step can also be
 * made from a sentence (`POST /browser-workflow/build-step`: "click the Sign in button").
 */
export function BrowserStepEditor({
  steps,
  onChange,
}: {
  steps: BrowserStepDraft[];
  onChange: (steps: BrowserStepDraft[]) => void;
}) {
  const [description, setDescription] = useState('');
  const [addAction, setAddAction] = useState<BrowserAction>('click');
  const act = useAction();
  const describeId = useId();
  const addId = useId();
  const set = (i: number, patch: Partial<BrowserStepDraft>) =>
    onChange(steps.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const full = steps.length >= STEPS_MAX;

  const fromDescription = () =>
    act.run(async () => {
      const url = firstGotoUrl(steps);
      const { step } = await post<{ step: BrowserStep }>('/browser-workflow/build-step', {
        description,
        ...(url ? { url } : {}),
      });
      // The one empty step of a new workflow is replaced rather than kept before it.
      const only = steps.length === 1 && steps[0]?.action === 'goto' && !steps[0].url.trim() ? [] : steps;
      onChange([...only, browserStepToDraft(step, null)]);
      setDescription('');
    });

  return (
    <div className="stack">
      <ol className="mon-steps" aria-label="Steps">
        {steps.map((s, i) => (
          <StepRow
            key={s.key}
            s={s}
            i={i}
            count={steps.length}
            set={(patch) => set(i, patch)}
            move={(to) => onChange(moveItem(steps, i, to))}
            remove={() => onChange(steps.filter((_, j) => j !== i))}
          />
        ))}
      </ol>
      <div className="row wrap mon-add-step">
        <label htmlFor={addId} className="sr-only">
          Action of the new step
        </label>
        <select id={addId} value={addAction} onChange={(e) => setAddAction(e.target.value as BrowserAction)}>
          {BROWSER_ACTIONS.map((a) => (
            <option key={a.action} value={a.action}>
              {a.label}
            </option>
          ))}
        </select>
        <button
          type="button"
          onClick={() => onChange([...steps, emptyBrowserStep(addAction)])}
          disabled={full}
        >
          Add step
        </button>
      </div>
      <div className="stack mon-curl">
        <label htmlFor={describeId}>Describe a step</label>
        <input
          id={describeId}
          placeholder={'click "Sign in" · type "me@example.com" into "#email" · expect "Dashboard"'}
          value={description}
          maxLength={10_000}
          onChange={(e) => setDescription(e.target.value)}
        />
        <div>
          <button
            type="button"
            onClick={() => void fromDescription()}
            disabled={act.busy || !description.trim() || full}
          >
            Build step from the description
          </button>
        </div>
        <ErrorText error={act.error} />
      </div>
    </div>
  );
}

/** Cookies set before step 1 (a saved session); their values are stored hidden and come back masked. */
function CookiesEditor({
  cookies,
  onChange,
}: {
  cookies: CookieDraft[];
  onChange: (cookies: CookieDraft[]) => void;
}) {
  const set = (i: number, patch: Partial<CookieDraft>) =>
    onChange(cookies.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <>
      {cookies.map((c, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, never reordered
        <div className="row" key={i}>
          <input
            aria-label={`Cookie ${i + 1} name`}
            placeholder="name"
            className="mono"
            value={c.name}
            onChange={(e) => set(i, { name: e.target.value })}
          />
          <input
            aria-label={`Cookie ${i + 1} value`}
            placeholder="value"
            className="mono grow"
            type="password"
            autoComplete="off"
            value={c.value}
            onChange={(e) => set(i, { value: e.target.value })}
          />
          <input
            aria-label={`Cookie ${i + 1} domain`}
            placeholder="domain (first page's host)"
            className="mono"
            value={c.domain}
            onChange={(e) => set(i, { domain: e.target.value })}
          />
          <button
            type="button"
            className="ghost"
            aria-label={`Remove cookie ${i + 1}`}
            onClick={() => onChange(cookies.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      {cookies.some((c) => c.value === SECRET_MASK) ? (
        <small className="hint">Hidden values (********) are kept unless you change them.</small>
      ) : null}
      <div>
        <button
          type="button"
          disabled={cookies.length >= COOKIES_MAX}
          onClick={() => onChange([...cookies, { name: '', value: '', domain: '' }])}
        >
          Add cookie
        </button>
      </div>
    </>
  );
}

/**
 * "Log in and capture cookies" (`POST /browser-workflow/login`): opens the sign-in page, runs the steps
 * that follow its first `goto` (the sign-in), and puts every cookie the browser then holds in the form,
 * so the saved workflow starts signed in. Nothing is saved until the form is.
 */
function LoginCapture({
  steps,
  onCookies,
}: {
  steps: BrowserStepDraft[];
  onCookies: (cookies: CookieDraft[]) => void;
}) {
  const act = useAction();
  const [note, setNote] = useState<string | null>(null);
  const urlId = useId();
  const [url, setUrl] = useState('');
  const start = url.trim() || firstGotoUrl(steps);
  const capture = () =>
    act.run(async () => {
      setNote(null);
      const first = steps.findIndex((s) => s.action === 'goto');
      const signIn = steps.slice(first + 1).map(draftToBrowserStep);
      const r = await post<{ ok: boolean; finalUrl: string; cookies: BrowserCookie[]; error?: string }>(
        '/browser-workflow/login',
        { url: start, steps: signIn },
      );
      if (!r.ok) throw new Error(r.error ?? 'the sign-in failed');
      onCookies(cookiesToDrafts(r.cookies));
      setNote(
        `Signed in (${r.finalUrl}): ${r.cookies.length} cookie${r.cookies.length === 1 ? '' : 's'} captured. Save to keep them.`,
      );
    });
  return (
    <details>
      <summary>Start signed in (log in and capture cookies)</summary>
      <div className="stack">
        <p className="hint">
          Runs the steps after the first “Open a page” as a sign-in, starting at the address below, and keeps
          the cookies the browser then holds: the workflow starts signed in.
        </p>
        <Field label="Sign-in page" hint="Empty: the first page of the steps">
          {(id) => (
            <input
              id={id}
              aria-describedby={urlId}
              className="mono"
              value={url}
              placeholder={firstGotoUrl(steps) || 'https://example.com/login'}
              onChange={(e) => setUrl(e.target.value)}
            />
          )}
        </Field>
        <div>
          <button type="button" onClick={() => void capture()} disabled={act.busy || !start}>
            {act.busy ? 'Signing in…' : 'Log in and capture cookies'}
          </button>
        </div>
        <small id={urlId} className="hint">
          Cookie values are stored hidden.
        </small>
        {note ? (
          <p className="notice" role="status">
            {note}
          </p>
        ) : null}
        <ErrorText error={act.error} />
      </div>
    </details>
  );
}

/** The browser workflow's own fields: variables, the steps, and the cookies set before step 1. */
export function BrowserWorkflowFields({
  variables,
  steps,
  cookies,
  onChange,
}: {
  variables: Pair[];
  steps: BrowserStepDraft[];
  cookies: CookieDraft[];
  onChange: (patch: {
    variables?: Pair[];
    browserSteps?: BrowserStepDraft[];
    cookies?: CookieDraft[];
  }) => void;
}) {
  return (
    <>
      <BrowserStepEditor steps={steps} onChange={(browserSteps) => onChange({ browserSteps })} />
      <PairsEditor
        label="Variables"
        namePlaceholder="name"
        rows={variables}
        onChange={(v) => onChange({ variables: v })}
      />
      <small className="hint">
        Used as {'{{name}}'} in URLs and typed text; values of names like password, token or secret are stored
        hidden.
      </small>
      <fieldset className="stack mon-pairs">
        <legend>Cookies set before step 1</legend>
        <CookiesEditor cookies={cookies} onChange={(c) => onChange({ cookies: c })} />
        <LoginCapture steps={steps} onCookies={(c) => onChange({ cookies: c })} />
      </fieldset>
    </>
  );
}

import { StatusChip } from '../heartbeats/HealthDot';
import { Screenshot } from '../inbox/Screenshot';
import { BrowserSteps, NoBrowserHelp } from './BrowserResult';
import { isNoChromium } from './browser';
import type { BrowserStepResult, RuleAnswer, TestAnswer } from './types';

interface Assertion {
  name: string;
  ok: boolean;
  detail?: string;
}
interface StepResult {
  name: string;
  ok: boolean;
  statusCode?: number;
  responseTimeMs?: number | null;
  error?: string;
  extracted?: Record<string, string>;
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);

/** One check's answer (`/test`, `check-now`, §2.6): up or down, time, the error, and the kind's details. */
export function TestResult({ result, title = 'Test result' }: { result: TestAnswer; title?: string }) {
  const d = result.details ?? {};
  const assertions = Array.isArray(d.assertions) ? (d.assertions as Assertion[]) : [];
  const allSteps = Array.isArray(d.steps) ? (d.steps as (StepResult | BrowserStepResult)[]) : [];
  // A browser workflow's steps name their action; an HTTP workflow's their request.
  const browser = allSteps.some((s) => 'action' in s);
  const steps = browser ? [] : (allSteps as StepResult[]);
  const facts: [string, string | null][] = [
    ['Response time', result.responseTimeMs === null ? null : `${result.responseTimeMs} ms`],
    ['HTTP status', str(d.statusCode)],
    ['Final URL', str(d.finalUrl) || null],
    ['Page title', str(d.title) || null],
    ['Address', str(d.address)],
    ['Certificate expires in', d.tlsDaysLeft === undefined ? null : `${str(d.tlsDaysLeft)} days`],
    ['Text', str(d.text)],
    ['Number', str(d.number)],
    ['Elements matched', str(d.matched)],
  ];
  return (
    <section className="mon-result card stack" aria-label={title} aria-live="polite">
      <div className="row wrap">
        <strong>{title}:</strong>
        <StatusChip status={result.status} />
        {result.error ? <span className="mon-error">{result.error}</span> : null}
      </div>
      <dl className="hb-facts">
        {facts
          .filter(([, v]) => v !== null)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd className={k === 'Text' ? 'mono' : undefined}>{v}</dd>
            </div>
          ))}
      </dl>
      {assertions.length ? (
        <ul className="mon-assertions" aria-label="Assertions">
          {assertions.map((a, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the server's order, never reordered
            <li key={i} className={a.ok ? 'ok' : 'failed'}>
              <span aria-hidden="true">{a.ok ? '✓' : '✗'}</span> {a.name}
              {a.detail ? <span className="hint"> — {a.detail}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {steps.length ? (
        <div className="table-scroll">
          <table className="table" aria-label="Steps">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Result</th>
                <th scope="col">Status</th>
                <th scope="col">Time</th>
                <th scope="col">Extracted</th>
              </tr>
            </thead>
            <tbody>
              {steps.map((s, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: steps run in order
                <tr key={i} className={s.ok ? undefined : 'ping-failed'}>
                  <td>{s.name}</td>
                  <td>{s.ok ? 'ok' : (s.error ?? 'failed')}</td>
                  <td>{s.statusCode ?? '—'}</td>
                  <td>
                    {s.responseTimeMs === null || s.responseTimeMs === undefined
                      ? '—'
                      : `${s.responseTimeMs} ms`}
                  </td>
                  <td className="mono">
                    {Object.entries(s.extracted ?? {})
                      .map(([k, v]) => `${k} = ${v}`)
                      .join(', ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {browser ? <BrowserSteps steps={allSteps as BrowserStepResult[]} /> : null}
      {typeof d.screenshotKey === 'string' ? <Screenshot shotKey={d.screenshotKey} /> : null}
      {isNoChromium(result.error) ? <NoBrowserHelp /> : null}
      {typeof d.bodyExcerpt === 'string' && d.bodyExcerpt ? (
        <details>
          <summary>Body excerpt</summary>
          <pre className="ping-body">{d.bodyExcerpt}</pre>
        </details>
      ) : null}
    </section>
  );
}

/** The content rule's preview (`POST /content-monitor/test-rule`) as a test answer. */
export function ruleAsTest(r: RuleAnswer): TestAnswer {
  return {
    ok: r.ok,
    status: r.ok ? 'up' : 'down',
    responseTimeMs: null,
    ...(r.error ? { error: r.error } : {}),
    details: { text: r.text, matched: r.matched, ...(r.number !== undefined ? { number: r.number } : {}) },
  };
}

import { useEffect, useId, useRef, useState } from 'react';
import { del, get, post } from '../../api/client';
import { Link, navigate } from '../../app/router';
import { ErrorText, Field, formatDate, useAction } from '../../components/ui';
import { Stack } from './Stack';
import type { Analysis, Breadcrumbs, Issue, WebScript } from './types';
import { parseCulprit } from './webScripts';

/**
 * One issue: title, the latest event's stack (source-mapped; the culprit when it carried none) and
 * breadcrumbs, where and when it was seen, and the analysis (made on request, saved).
 */
export function IssueView({
  script,
  issueId,
  version,
  onChanged,
}: {
  script: WebScript;
  issueId: number;
  version: unknown;
  onChanged: () => void;
}) {
  const [issue, setIssue] = useState<Issue | null>(null);
  const [crumbs, setCrumbs] = useState<Breadcrumbs | null>(null);
  const [analysis, setAnalysis] = useState<Analysis | null>(null);
  const [lang, setLang] = useState<'en' | 'ru'>('en');
  const [bump, setBump] = useState(0);
  const load = useAction();
  const act = useAction();
  const ai = useAction();
  const headId = useId();
  const base = `/web-script/${script.id}/issues/${issueId}`;
  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` and `bump` are the refetch triggers
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const [all, b, a] = await Promise.all([
        get<Issue[]>(`/web-script/${script.id}/issues?status=all`),
        get<Breadcrumbs>(`${base}/breadcrumbs`),
        get<Analysis | null>(`${base}/analysis`),
      ]);
      if (at !== latest.current) return;
      const found = all.find((i) => i.id === issueId) ?? null;
      setIssue(found);
      setCrumbs(b);
      setAnalysis(a);
      if (a) setLang(a.lang);
    });
  }, [script.id, issueId, version, bump, load.run]);

  const back = `/web-scripts?id=${script.id}`;
  if (!issue)
    return (
      <section className="stack hb-page" aria-labelledby={headId}>
        <Link to={back}>← {script.name}</Link>
        <h1 id={headId}>Issue</h1>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : <p className="empty">This issue is gone.</p>}
      </section>
    );

  const mark = (what: 'resolve' | 'ignore') =>
    act.run(async () => {
      setIssue(await post<Issue>(`${base}/${what}`));
      onChanged();
    });
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the issue “${issue.title}” and its events? A new event starts it again.`)) return;
      await del(base);
      onChanged();
      navigate(back);
    });
  const analyze = (force: boolean) =>
    ai.run(async () => setAnalysis(await post<Analysis>(`${base}/analyze`, { lang, force })));
  const c = parseCulprit(issue.culprit);

  return (
    <section className="stack hb-page" aria-labelledby={headId}>
      <Link to={back}>← {script.name}</Link>
      <div className="row wrap hb-title">
        <h1 id={headId} className="ws-issue-h">
          {issue.title}
        </h1>
        <span className={`tag ws-status ${issue.status}`}>{issue.status}</span>
        <span className={`tag ws-type ${issue.type}`}>{issue.type}</span>
      </div>
      <dl className="hb-facts">
        <div>
          <dt>Events</dt>
          <dd>{issue.count.toLocaleString('en-US')}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{formatDate(issue.firstSeen)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{formatDate(issue.lastSeen)}</dd>
        </div>
        <div>
          <dt>Last release</dt>
          <dd className="mono">{issue.lastRelease ?? '—'}</dd>
        </div>
        <div className="ws-wide">
          <dt>Last page</dt>
          <dd className="mono ws-url">{issue.lastUrl ?? '—'}</dd>
        </div>
      </dl>
      <div className="actions">
        {issue.status !== 'resolved' ? (
          <button type="button" className="primary" onClick={() => void mark('resolve')}>
            Resolve
          </button>
        ) : null}
        {issue.status !== 'ignored' ? (
          <button type="button" onClick={() => void mark('ignore')}>
            Ignore
          </button>
        ) : null}
        <button type="button" onClick={() => setBump((n) => n + 1)} disabled={load.busy}>
          Refresh
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      <ErrorText error={act.error ?? load.error} />

      <section className="card stack" aria-labelledby={`${headId}-stack`}>
        <h2 id={`${headId}-stack`}>Stack</h2>
        {crumbs?.frames?.length ? (
          <>
            <Stack frames={crumbs.frames} />
            <p className="hint">
              The latest event’s stack, top first, resolved through this script’s source maps where one
              matches the file and release (the minified position below and on hover). Your page’s frames are
              marked; library frames are folded.
            </p>
          </>
        ) : issue.culprit ? (
          <>
            <pre className="mono ws-stack">{c.fn ? `at ${c.fn} (${c.location})` : `at ${c.location}`}</pre>
            <p className="hint">The latest event carried no stack; this is where the issue was first seen.</p>
          </>
        ) : (
          <p className="hint">The events carried no stack frame.</p>
        )}
      </section>

      <section className="card stack" aria-labelledby={`${headId}-crumbs`}>
        <h2 id={`${headId}-crumbs`}>Breadcrumbs</h2>
        {crumbs?.eventAt ? (
          <p className="hint">What the visitor did before the latest event ({formatDate(crumbs.eventAt)}).</p>
        ) : null}
        {crumbs && crumbs.breadcrumbs.length === 0 ? <p className="empty">No breadcrumbs.</p> : null}
        <ol className="ws-crumbs" aria-label="Breadcrumbs">
          {(crumbs?.breadcrumbs ?? []).map((b, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: breadcrumbs have no id and never reorder
            <li key={i} className={`ws-crumb ${b.type}`}>
              <time dateTime={b.at}>{new Date(b.at).toLocaleTimeString()}</time>
              <span className="tag">{b.type}</span>
              <span className="mono ws-crumb-msg">{b.message}</span>
            </li>
          ))}
          {crumbs?.eventAt ? (
            <li className="ws-crumb event">
              <time dateTime={crumbs.eventAt}>{new Date(crumbs.eventAt).toLocaleTimeString()}</time>
              <span className="tag">{issue.type}</span>
              <span className="mono ws-crumb-msg">{issue.title}</span>
            </li>
          ) : null}
        </ol>
      </section>

      <section className="card stack" aria-labelledby={`${headId}-ai`}>
        <h2 id={`${headId}-ai`}>Analysis</h2>
        <div className="row wrap ws-analyze">
          <Field label="Language">
            {(id) => (
              <select id={id} value={lang} onChange={(e) => setLang(e.target.value as 'en' | 'ru')}>
                <option value="en">English</option>
                <option value="ru">Русский</option>
              </select>
            )}
          </Field>
          <button type="button" className="primary" disabled={ai.busy} onClick={() => void analyze(false)}>
            {ai.busy ? 'Analyzing…' : 'Analyze'}
          </button>
          {analysis ? (
            <button type="button" disabled={ai.busy} onClick={() => void analyze(true)}>
              Analyze again
            </button>
          ) : null}
        </div>
        <ErrorText error={ai.error} />
        {analysis ? (
          <div className="stack ws-analysis" lang={analysis.lang} aria-live="polite">
            <p>
              <strong>Summary.</strong> {analysis.summary}
            </p>
            <p>
              <strong>Likely cause.</strong> {analysis.likelyCause}
            </p>
            {analysis.suggestions.length ? (
              <ul aria-label="Suggestions">
                {analysis.suggestions.map((s) => (
                  <li key={s}>{s}</li>
                ))}
              </ul>
            ) : null}
            <p className="hint">
              By <span className="mono">{analysis.provider}</span>, {formatDate(analysis.createdAt)}
            </p>
          </div>
        ) : (
          <p className="hint">
            Analyze reads the message, the culprit and the breadcrumbs and suggests what went wrong.
          </p>
        )}
      </section>
    </section>
  );
}

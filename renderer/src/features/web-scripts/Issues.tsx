import { useEffect, useId, useRef, useState } from 'react';
import { del, get, post, query } from '../../api/client';
import { Link } from '../../app/router';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { SparkBars, Sparkline, useErrorSeries } from './Charts';
import type { Issue, IssueFilter } from './types';
import { errorCounts, parseCulprit } from './webScripts';

const FILTERS: { value: IssueFilter; label: string }[] = [
  { value: 'unresolved', label: 'Unresolved' },
  { value: 'resolved', label: 'Resolved' },
  { value: 'ignored', label: 'Ignored' },
  { value: 'all', label: 'All' },
];

/** A script's issues by last seen, with a filter, counts, the hourly error sparkline and row actions. */
export function Issues({
  scriptId,
  version,
  onChanged,
}: {
  scriptId: number;
  version: unknown;
  onChanged: () => void;
}) {
  const [filter, setFilter] = useState<IssueFilter>('unresolved');
  const [issues, setIssues] = useState<Issue[] | null>(null);
  const [bump, setBump] = useState(0);
  const load = useAction();
  const act = useAction();
  const name = useId();
  const latest = useRef(0);
  const spark = useErrorSeries(scriptId, `${version}-${bump}`);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` and `bump` are the refetch triggers
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const l = await get<Issue[]>(`/web-script/${scriptId}/issues${query({ status: filter })}`);
      if (at === latest.current) setIssues(l);
    });
  }, [scriptId, filter, version, bump, load.run]);

  const change = (fn: () => Promise<unknown>) =>
    act.run(async () => {
      await fn();
      setBump((n) => n + 1);
      onChanged();
    });
  const base = `/web-script/${scriptId}/issues`;
  const headId = `issues-${scriptId}`;
  const errors = spark ? errorCounts(spark) : [];
  const total = errors.reduce((a, b) => a + b, 0);

  return (
    <section className="card stack" aria-labelledby={headId}>
      <div className="pane-head">
        <h2 id={headId}>Issues</h2>
        {spark ? (
          <Sparkline
            values={errors}
            label={`Errors and rejections, last 24 hours by hour: ${total} in all, ${errors.at(-1) ?? 0} in the last hour`}
          />
        ) : null}
      </div>
      <fieldset className="segmented-field">
        <legend>Show</legend>
        <div className="segmented">
          {FILTERS.map((f) => (
            <label key={f.value} className={filter === f.value ? 'on' : ''}>
              <input
                type="radio"
                name={name}
                checked={filter === f.value}
                onChange={() => setFilter(f.value)}
              />
              {f.label}
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorText error={load.error ?? act.error} />
      {issues && issues.length === 0 ? (
        <p className="empty">
          {filter === 'unresolved'
            ? 'No unresolved issues. Errors your pages report show up here, grouped by message and place.'
            : `No ${filter === 'all' ? '' : `${filter} `}issues.`}
        </p>
      ) : null}
      <ul className="rows ws-issues" aria-label="Issues" aria-busy={issues === null && load.busy}>
        {(issues ?? []).map((i) => {
          const c = parseCulprit(i.culprit);
          return (
            <li key={i.id} className="ws-issue" aria-label={i.title}>
              <div className="ws-issue-main">
                <Link to={`/web-scripts?id=${scriptId}&issue=${i.id}`} className="ws-issue-title">
                  {i.title}
                </Link>
                <span className="mono ws-culprit">
                  {c.fn ? <strong>{c.fn}</strong> : null} {c.location}
                </span>
                <span className="hint">
                  <span className={`tag ws-type ${i.type}`}>{i.type}</span>{' '}
                  <span className={`tag ws-status ${i.status}`}>{i.status}</span> last seen{' '}
                  {formatDate(i.lastSeen)}, first {formatDate(i.firstSeen)}
                </span>
              </div>
              {i.sparkline ? (
                <SparkBars
                  values={i.sparkline}
                  label={`${i.title}: events an hour, last 24 hours: ${i.sparkline.reduce((a, b) => a + b, 0)} in all`}
                />
              ) : null}
              <span className="ws-count" title="Events">
                <strong>{i.count.toLocaleString('en-US')}</strong>{' '}
                <span className="hint">{i.count === 1 ? 'event' : 'events'}</span>
              </span>
              <div className="actions ws-issue-actions">
                {i.status !== 'resolved' ? (
                  <button type="button" onClick={() => void change(() => post(`${base}/${i.id}/resolve`))}>
                    Resolve<span className="sr-only"> {i.title}</span>
                  </button>
                ) : null}
                {i.status !== 'ignored' ? (
                  <button type="button" onClick={() => void change(() => post(`${base}/${i.id}/ignore`))}>
                    Ignore<span className="sr-only"> {i.title}</span>
                  </button>
                ) : null}
                <button
                  type="button"
                  className="danger"
                  onClick={() =>
                    void change(async () => {
                      if (
                        !confirm(`Delete the issue “${i.title}” and its events? A new event starts it again.`)
                      )
                        return;
                      await del(`${base}/${i.id}`);
                    })
                  }
                >
                  Delete<span className="sr-only"> {i.title}</span>
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

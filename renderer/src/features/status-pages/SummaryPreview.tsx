import { useEffect, useId, useState } from 'react';
import { ApiError, api } from '../../api/client';
import { ErrorText, formatDate } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { formatUptime, UptimeBar } from '../heartbeats/UptimeBar';
import { asHistoryDays, bannerText } from './summary';
import type { StatusSummary } from './types';

/**
 * What the public sees, from the public summary (`GET /status/{slug}/summary`, asked without credentials
 * like any visitor): the overall banner, each service with its 90-day bars, open and past incidents and
 * planned maintenance. `version` refetches (live status signals, a save).
 */
export function SummaryPreview({
  slug,
  enabled,
  version,
}: {
  slug: string;
  enabled: boolean;
  version: number;
}) {
  const [summary, setSummary] = useState<StatusSummary | null>(null);
  const [error, setError] = useState<unknown>(null);
  const headId = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    api<StatusSummary>('GET', `/status/${encodeURIComponent(slug)}/summary`, { anonymous: true }).then(
      (s) => {
        if (!live) return;
        setSummary(s);
        setError(null);
      },
      (err) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [slug, enabled, version]);

  return (
    <section className="card stack" aria-labelledby={headId}>
      <h2 id={headId}>Preview</h2>
      {!enabled ? (
        <p className="empty">The page is not published: its public address answers 404.</p>
      ) : error ? (
        error instanceof ApiError && error.status === 404 ? (
          <p className="empty">The public address answers 404.</p>
        ) : (
          <ErrorText error={error} />
        )
      ) : !summary ? (
        <p className="loading">Loading…</p>
      ) : (
        <>
          <p className={`sp-banner ${summary.overall}`} data-overall={summary.overall}>
            <strong>{bannerText(summary.overall, summary.lang)}</strong>
            <span className="hint">90-day uptime {formatUptime(summary.overallUptime90d)}</span>
          </p>
          {summary.services.length === 0 ? (
            <p className="empty">
              No services yet: the page lists the heartbeats and monitors of its channel and sub-channels.
            </p>
          ) : null}
          <ul className="rows" aria-label="Services">
            {summary.services.map((s) => (
              <li key={s.name} className="hb-row" aria-label={s.name}>
                <div className="row wrap">
                  <StatusChip status={s.status} />
                  <span className="hb-name grow">{s.name}</span>
                  <span className="hint">{formatUptime(s.uptime90d)}</span>
                </div>
                <UptimeBar days={asHistoryDays(s.days)} uptime90={s.uptime90d} />
              </li>
            ))}
          </ul>
          {summary.maintenance.length ? (
            <>
              <h3 id={`${headId}-maint`}>Planned maintenance</h3>
              <ul aria-labelledby={`${headId}-maint`}>
                {summary.maintenance.map((m) => (
                  <li key={`${m.name}${m.startsAt}`}>
                    {m.name}: {formatDate(m.startsAt)} – {formatDate(m.endsAt)}
                    {m.active ? ' (now)' : ''}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {summary.incidents.length ? (
            <>
              <h3 id={`${headId}-incidents`}>Incidents</h3>
              <ul aria-labelledby={`${headId}-incidents`}>
                {summary.incidents.map((i) => (
                  <li key={`${i.title}${i.startedAt}`}>
                    {i.title}: {formatDate(i.startedAt)}
                    {i.resolvedAt ? ` – ${formatDate(i.resolvedAt)}` : ' (open)'}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </>
      )}
    </section>
  );
}

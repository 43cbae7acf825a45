import { type ReactNode, type RefObject, useEffect, useRef, useState } from 'react';
import { get } from '../../api/client';
import type { HistoryDay, SourceHistory, UptimeWindow } from './types';

/** `99.123 %`; the server truncates to 3 decimals so any down time shows below 100. */
export function formatUptime(u: number | null | undefined): string {
  if (u === null || u === undefined) return 'no data';
  return `${u === 100 ? '100' : String(u)} %`;
}

function dayText(d: HistoryDay): string {
  const what =
    d.status === 'none'
      ? 'no data'
      : d.status === 'maintenance'
        ? 'maintenance'
        : `${formatUptime(d.uptime)} up${d.downSec > 0 ? `, down ${Math.round(d.downSec / 60)} min` : ''}`;
  return `${d.date}: ${what}`;
}

/**
 * 90 UTC days, oldest first, one bar each, coloured by the day's status (history `days`). One image for
 * assistive technology, named by its summary; each day's figures are in its tooltip.
 */
export function UptimeBar({ days, uptime90 }: { days: HistoryDay[]; uptime90?: number | null }) {
  const downDays = days.filter((d) => d.status === 'down').length;
  const label = `${days.length}-day uptime ${formatUptime(uptime90)}${
    downDays ? `, ${downDays} day${downDays === 1 ? '' : 's'} with down time` : ''
  }`;
  return (
    <div className="uptime-bar" role="img" aria-label={label} title={label}>
      {days.map((d) => (
        <span key={d.date} className={`uptime-day ${d.status}`} title={dayText(d)} />
      ))}
    </div>
  );
}

const WINDOWS: UptimeWindow[] = ['24h', '7d', '30d', '90d'];

/**
 * A detail view's Uptime card: the figures of each window (`extra` figures after them), the 90-day bar
 * and what it counts.
 */
export function UptimeCard({
  id,
  history,
  extra,
}: {
  id: number;
  history: SourceHistory;
  extra?: ReactNode;
}) {
  return (
    <section className="card stack" aria-labelledby={`uptime-${id}`}>
      <h2 id={`uptime-${id}`}>Uptime</h2>
      <dl className="hb-facts uptime-figures">
        {WINDOWS.map((w) => (
          <div key={w}>
            <dt>{w === '24h' ? 'Last 24 hours' : `Last ${w.slice(0, -1)} days`}</dt>
            <dd>{formatUptime(history.uptime[w])}</dd>
          </div>
        ))}
        {extra}
      </dl>
      <UptimeBar days={history.days} uptime90={history.uptime['90d']} />
      <p className="hint">
        One bar per UTC day, oldest first. Time the server was asleep or off, in maintenance or paused does
        not count.
      </p>
    </section>
  );
}

/** True once the element has scrolled into view (stays true): list rows fetch their charts lazily. */
export function useInView(ref: RefObject<HTMLElement | null>): boolean {
  const [visible, setVisible] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || visible) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setVisible(true);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [ref, visible]);
  return visible;
}

/**
 * A list row's bar: its history is fetched once the row scrolls into view (a long list does not ask for
 * every heartbeat's history at once), and again when `version` changes (a live signal for its channel).
 */
export function LazyUptimeBar({ id, version }: { id: number; version: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const visible = useInView(ref);
  const [history, setHistory] = useState<SourceHistory | null>(null);
  const [failed, setFailed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    if (!visible) return;
    let live = true;
    get<SourceHistory>(`/monitor-history/heartbeat/${id}`).then(
      (h) => {
        if (!live) return;
        setHistory(h);
        setFailed(false);
      },
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [id, visible, version]);
  return (
    <div ref={ref} className="uptime-slot">
      {history ? (
        <UptimeBar days={history.days} uptime90={history.uptime['90d']} />
      ) : failed ? (
        <small className="hint">uptime unavailable</small>
      ) : (
        <div className="uptime-bar placeholder" aria-hidden="true" />
      )}
    </div>
  );
}

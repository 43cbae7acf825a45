import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { get, query } from '../../api/client';
import { ErrorText, useAction } from '../../components/ui';
import type { Bucket, ErrorPoint, FlushStats, LoadPoint, SeriesAnswer } from './types';
import { BUCKETS, bucketInfo, flushShares, plural, seriesWindow } from './webScripts';

/** A row's error count per bucket as a small line; its accessible name says what it shows. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const w = 120;
  const h = 28;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : 0;
  const d = values
    .map((v, i) => `${i ? 'L' : 'M'}${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`)
    .join(' ');
  return (
    <SparkSvg className="ws-spark" w={w} h={h} label={label}>
      {values.length ? <path d={d} fill="none" stroke="var(--danger)" strokeWidth={1.5} /> : null}
    </SparkSvg>
  );
}

/** The frame of a small chart: a w×h SVG that stretches to its box, named for screen readers. */
function SparkSvg({
  className,
  w,
  h,
  label,
  children,
}: {
  className: string;
  w: number;
  h: number;
  label: string;
  children: ReactNode;
}) {
  return (
    <svg
      className={className}
      viewBox={`0 0 ${w} ${h}`}
      role="img"
      aria-label={label}
      preserveAspectRatio="none"
    >
      <title>{label}</title>
      {children}
    </svg>
  );
}

/**
 * Counts per bucket as small bars, one a bucket (an empty bucket a thin baseline, so the bars can be
 * counted and the gaps seen); its accessible name says what it shows.
 */
export function SparkBars({ values, label }: { values: number[]; label: string }) {
  const w = 96;
  const h = 24;
  const max = Math.max(1, ...values);
  const bw = values.length ? w / values.length : 0;
  return (
    <SparkSvg className="ws-spark ws-bars" w={w} h={h} label={label}>
      {values.map((v, i) => {
        const bh = v > 0 ? Math.max(2, (v / max) * (h - 2)) : 1;
        return (
          <rect
            // biome-ignore lint/suspicious/noArrayIndexKey: one bar a bucket, in bucket order
            key={i}
            className={v > 0 ? 'on' : 'zero'}
            x={(i * bw + 0.5).toFixed(2)}
            y={(h - bh).toFixed(2)}
            width={Math.max(0.5, bw - 1).toFixed(2)}
            height={bh.toFixed(2)}
          />
        );
      })}
    </SparkSvg>
  );
}

/** Errors and rejections of a script over the last 24 hours, by hour (for a list row or the issues). */
export function useErrorSeries(scriptId: number, version: unknown) {
  const [points, setPoints] = useState<ErrorPoint[] | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    let live = true;
    get<SeriesAnswer<ErrorPoint>>(`/web-script/${scriptId}/error-series`).then(
      (a) => live && setPoints(a.points),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [scriptId, version]);
  return points;
}

function tickFormatter(b: Bucket) {
  return (t: number) => {
    const d = new Date(t);
    if (b === '1m') return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    if (b === '1h') return d.toLocaleString([], { weekday: 'short', hour: '2-digit' });
    return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  };
}

function sum<P>(points: P[], k: keyof P): number {
  return points.reduce((a, p) => a + Number(p[k] ?? 0), 0);
}

function SeriesChart<P extends { at: string }>({
  title,
  points,
  lines,
  bucket,
}: {
  title: string;
  points: P[];
  lines: { key: keyof P & string; label: string; color: string }[];
  bucket: Bucket;
}) {
  const data = points.map((p) => ({ ...p, t: Date.parse(p.at) }));
  const label = `${title}, ${bucketInfo(bucket).window} by ${bucket}: ${lines
    .map((l) => `${plural(sum(points, l.key), l.label.toLowerCase().replace(/s$/, ''))}`)
    .join(', ')}`;
  return (
    <figure className="ws-chart">
      <figcaption>{title}</figcaption>
      <div role="img" aria-label={label}>
        <ResponsiveContainer width="100%" height={200}>
          <LineChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={['dataMin', 'dataMax']}
              tickFormatter={tickFormatter(bucket)}
              tick={{ fontSize: 11 }}
            />
            <YAxis tick={{ fontSize: 11 }} allowDecimals={false} width={48} />
            <Tooltip labelFormatter={(t) => new Date(Number(t)).toLocaleString()} />
            <Legend />
            {lines.map((l) => (
              <Line
                key={l.key}
                type="monotone"
                dataKey={l.key}
                name={l.label}
                stroke={l.color}
                dot={false}
                isAnimationActive={false}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

/** Loads, batches and events; errors, rejections and new issues; and why batches were sent. */
export function ScriptCharts({ scriptId, version }: { scriptId: number; version: unknown }) {
  const [bucket, setBucket] = useState<Bucket>('1h');
  const [data, setData] = useState<{
    bucket: Bucket;
    loads: LoadPoint[];
    errors: ErrorPoint[];
    flush: FlushStats;
  } | null>(null);
  const load = useAction();
  const name = useId();
  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const q = query({ bucket, ...seriesWindow(bucket, Date.now()) });
      const [l, e, f] = await Promise.all([
        get<SeriesAnswer<LoadPoint>>(`/web-script/${scriptId}/series${q}`),
        get<SeriesAnswer<ErrorPoint>>(`/web-script/${scriptId}/error-series${q}`),
        get<FlushStats>(`/web-script/${scriptId}/flush-stats`),
      ]);
      if (at === latest.current) setData({ bucket, loads: l.points, errors: e.points, flush: f });
    });
  }, [scriptId, bucket, version, load.run]);

  const headId = `charts-${scriptId}`;
  return (
    <section className="card stack" aria-labelledby={headId}>
      <h2 id={headId}>Traffic and errors</h2>
      <fieldset className="segmented-field">
        <legend>Buckets</legend>
        <div className="segmented">
          {BUCKETS.map((b) => (
            <label key={b.bucket} className={bucket === b.bucket ? 'on' : ''}>
              <input
                type="radio"
                name={name}
                checked={bucket === b.bucket}
                onChange={() => setBucket(b.bucket)}
              />
              {`${b.bucket}: ${b.window}`}
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorText error={load.error} />
      {data ? (
        <div className="ws-charts">
          <SeriesChart
            title="Snippet loads, batches and events"
            bucket={data.bucket}
            points={data.loads}
            lines={[
              { key: 'loads', label: 'Loads', color: 'var(--accent)' },
              { key: 'batches', label: 'Batches', color: 'var(--ok)' },
              { key: 'events', label: 'Events', color: 'var(--muted)' },
            ]}
          />
          <SeriesChart
            title="Errors, rejections and new issues"
            bucket={data.bucket}
            points={data.errors}
            lines={[
              { key: 'errors', label: 'Errors', color: 'var(--danger)' },
              { key: 'rejections', label: 'Rejections', color: 'var(--warn, #b7791f)' },
              { key: 'newIssues', label: 'New issues', color: 'var(--accent)' },
            ]}
          />
        </div>
      ) : load.busy ? (
        <p className="loading">Loading…</p>
      ) : null}
      {data ? <FlushBreakdown stats={data.flush} /> : null}
    </section>
  );
}

function FlushBreakdown({ stats }: { stats: FlushStats }) {
  return (
    <div className="stack">
      <h3>Why batches were sent (last 7 days, {plural(stats.total, 'request')})</h3>
      <table className="ws-flush" aria-label="Flush reasons">
        <thead>
          <tr>
            <th scope="col">Reason</th>
            <th scope="col">Requests</th>
            <th scope="col">Share</th>
          </tr>
        </thead>
        <tbody>
          {flushShares(stats).map((r) => (
            <tr key={r.reason}>
              <th scope="row">
                {r.label} <span className="mono hint">{r.reason}</span>
              </th>
              <td>{r.count}</td>
              <td>
                <span className="ws-bar" style={{ width: `${r.pct}%` }} aria-hidden="true" />
                {r.pct}%
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

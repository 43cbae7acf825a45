import { useEffect, useId, useRef, useState } from 'react';
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ResponsiveContainer,
  Tooltip,
  type TooltipContentProps,
  XAxis,
  YAxis,
} from 'recharts';
import { get, query } from '../../api/client';
import { ErrorText, useAction } from '../../components/ui';
import {
  BUCKETS,
  bucketInfo,
  type ChartPoint,
  chartPoints,
  chartSummary,
  formatValue,
  seriesWindow,
} from './metrics';
import type { Bucket, Metric, SeriesAnswer } from './types';

function tickFormatter(b: Bucket) {
  return (t: number) => {
    const d = new Date(t);
    if (b === '1m') return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    if (b === '1h') return d.toLocaleString([], { weekday: 'short', hour: '2-digit' });
    return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  };
}

function PointTooltip({
  active,
  payload,
  unit,
}: Pick<TooltipContentProps, 'active' | 'payload'> & { unit: string }) {
  const p = payload?.[0]?.payload as ChartPoint | undefined;
  if (!active || !p) return null;
  return (
    <div className="metric-tooltip">
      <strong>{new Date(p.t).toLocaleString()}</strong>
      <dl>
        {(['avg', 'min', 'max', 'last'] as const).map((k) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{formatValue(p[k], unit)}</dd>
          </div>
        ))}
        <div>
          <dt>count</dt>
          <dd>{p.count}</dd>
        </div>
      </dl>
    </div>
  );
}

/**
 * One series drawn over the chosen bucket's window: the average as a line over the min–max band, the
 * unit on the axis, every figure in the tooltip and in a data table below. Fetched again on `version`
 * (live signals and the page's gentle refresh).
 */
export function SeriesChart({
  sourceId,
  metric,
  version,
}: {
  sourceId: number;
  metric: Metric;
  version: number;
}) {
  const [bucket, setBucket] = useState<Bucket>('1m');
  // The data table stays open across bucket changes (the chart is rebuilt for each).
  const [tableOpen, setTableOpen] = useState(false);
  const [data, setData] = useState<{ answer: SeriesAnswer; start: number; end: number } | null>(null);
  const load = useAction();
  const name = useId();
  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` and `lastAt` are the refetch triggers
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const w = seriesWindow(bucket, Date.now(), metric.lastAt);
      const answer = await get<SeriesAnswer>(
        `/metric-source/${sourceId}/metrics/${metric.id}/series${query({ bucket, ...w })}`,
      );
      if (at === latest.current) setData({ answer, start: w.start, end: w.end });
    });
  }, [sourceId, metric.id, metric.lastAt, bucket, version, load.run]);

  const shown = data && data.answer.bucket === bucket ? data.answer : null;
  const points = chartPoints(shown?.points ?? []);
  const label = chartSummary(metric, bucket, shown?.points ?? []);
  const fmt = tickFormatter(bucket);
  const from = data?.start ?? 0;
  const to = data?.end ?? 0;
  const unit = metric.unit;

  return (
    <div className="stack metric-chart-box">
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
      {!shown ? (
        <p className="loading">Loading…</p>
      ) : points.length === 0 ? (
        <p className="empty">
          No points in the {bucketInfo(bucket).window}.
          {metric.lastAt ? ' Try a longer window.' : ' Send one to the ingest URL and it shows here.'}
        </p>
      ) : (
        <>
          <div className="metric-chart" role="img" aria-label={label} data-points={points.length}>
            <ResponsiveContainer width="100%" height={240}>
              <ComposedChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis
                  dataKey="t"
                  type="number"
                  scale="time"
                  domain={[from, to]}
                  tickFormatter={fmt}
                  tick={{ fontSize: 11 }}
                  minTickGap={24}
                />
                <YAxis
                  tick={{ fontSize: 11 }}
                  width={unit ? 80 : 60}
                  domain={['auto', 'auto']}
                  tickFormatter={(v: number) => formatValue(v)}
                  label={
                    unit
                      ? { value: unit, angle: -90, position: 'insideLeft', fontSize: 11, dy: 20 }
                      : undefined
                  }
                />
                <Tooltip
                  content={(p) => <PointTooltip active={p.active} payload={p.payload} unit={unit} />}
                />
                <Area
                  type="linear"
                  dataKey="band"
                  name="min–max"
                  stroke="none"
                  fill="var(--accent)"
                  fillOpacity={0.18}
                  isAnimationActive={false}
                  activeDot={false}
                />
                <Line
                  type="linear"
                  dataKey="avg"
                  name="average"
                  stroke="var(--accent)"
                  strokeWidth={2}
                  dot={points.length <= 60 ? { r: 3 } : false}
                  isAnimationActive={false}
                />
              </ComposedChart>
            </ResponsiveContainer>
          </div>
          <details open={tableOpen} onToggle={(e) => setTableOpen(e.currentTarget.open)}>
            <summary>Data table ({points.length} buckets)</summary>
            <section
              className="table-scroll"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls sideways is reached by keyboard
              tabIndex={0}
              aria-label="Data table, scrolls sideways"
            >
              <table className="metric-table" aria-label={`Points of ${metric.name} by ${bucket}`}>
                <thead>
                  <tr>
                    <th scope="col">Bucket</th>
                    <th scope="col">Average</th>
                    <th scope="col">Min</th>
                    <th scope="col">Max</th>
                    <th scope="col">Last</th>
                    <th scope="col">Points</th>
                  </tr>
                </thead>
                <tbody>
                  {[...points].reverse().map((p) => (
                    <tr key={p.t}>
                      <td>
                        <time dateTime={p.at}>
                          {new Date(p.t).toLocaleString([], {
                            month: 'short',
                            day: 'numeric',
                            hour: '2-digit',
                            minute: '2-digit',
                          })}
                        </time>
                      </td>
                      <td>{formatValue(p.avg, unit)}</td>
                      <td>{formatValue(p.min, unit)}</td>
                      <td>{formatValue(p.max, unit)}</td>
                      <td>{formatValue(p.last, unit)}</td>
                      <td>{p.count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          </details>
        </>
      )}
    </div>
  );
}

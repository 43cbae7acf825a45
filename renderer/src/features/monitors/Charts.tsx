import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { CheckEntry } from './types';

export interface ResponsePoint {
  at: number;
  ms: number | null;
  ok: boolean;
}

/** Checks (newest first, as the log answers) as chart points, oldest first. */
export function responsePoints(checks: CheckEntry[]): ResponsePoint[] {
  return [...checks]
    .reverse()
    .map((c) => ({ at: Date.parse(c.at), ms: c.ok ? c.responseTimeMs : null, ok: c.ok }));
}

/** A short summary of the points, the charts' accessible name. */
export function responseSummary(points: ResponsePoint[]): string {
  const ms = points.map((p) => p.ms).filter((m): m is number => m !== null);
  const failed = points.filter((p) => !p.ok).length;
  if (!points.length) return 'Response time: no checks yet';
  const avg = ms.length ? Math.round(ms.reduce((a, b) => a + b, 0) / ms.length) : null;
  return `Response time over the last ${points.length} check${points.length === 1 ? '' : 's'}: ${
    avg === null ? 'none succeeded' : `average ${avg} ms, latest ${ms.at(-1)} ms`
  }${failed ? `, ${failed} failed` : ''}`;
}

/** A list row's response-time line: no axes, the failed checks are the gaps. */
export function Sparkline({ checks }: { checks: CheckEntry[] }) {
  const points = responsePoints(checks);
  const label = responseSummary(points);
  return (
    <div className="mon-spark" role="img" aria-label={label} title={label}>
      {points.length ? (
        <ResponsiveContainer width="100%" height={32}>
          <LineChart data={points} margin={{ top: 4, right: 4, bottom: 4, left: 4 }}>
            <YAxis hide domain={[0, 'auto']} />
            <Line
              type="monotone"
              dataKey="ms"
              stroke="var(--accent)"
              strokeWidth={1.5}
              dot={points.length === 1 ? { r: 2 } : false}
              connectNulls={false}
              isAnimationActive={false}
            />
          </LineChart>
        </ResponsiveContainer>
      ) : null}
    </div>
  );
}

const time = (at: number) => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** The detail view's chart over the loaded check log: milliseconds per successful check, over time. */
export function ResponseChart({ checks }: { checks: CheckEntry[] }) {
  const points = responsePoints(checks);
  const label = responseSummary(points);
  return (
    <div className="mon-chart" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -8 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis
            dataKey="at"
            type="number"
            scale="time"
            domain={['dataMin', 'dataMax']}
            tickFormatter={time}
            tick={{ fontSize: 11 }}
          />
          <YAxis tick={{ fontSize: 11 }} unit=" ms" width={70} domain={[0, 'auto']} />
          <Tooltip
            labelFormatter={(at) => new Date(Number(at)).toLocaleString()}
            formatter={(v) => [v === null || v === undefined ? 'failed' : `${v} ms`, 'Response time']}
          />
          <Line
            type="monotone"
            dataKey="ms"
            stroke="var(--accent)"
            strokeWidth={2}
            dot={points.length <= 60}
            connectNulls={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

import type { Bucket, Metric, SeriesPoint, Tags } from './types';

/** Each bucket's window: as many buckets as stay within the server's cap of 1,440 a request. */
export const BUCKETS: { bucket: Bucket; label: string; ms: number; count: number; window: string }[] = [
  { bucket: '1m', label: 'Minutes', ms: 60_000, count: 1_440, window: 'last 24 hours' },
  { bucket: '1h', label: 'Hours', ms: 3_600_000, count: 168, window: 'last 7 days' },
  { bucket: '1d', label: 'Days', ms: 86_400_000, count: 90, window: 'last 90 days' },
];

export function bucketInfo(b: Bucket) {
  return BUCKETS.find((x) => x.bucket === b) ?? BUCKETS[1]!;
}

/**
 * The `from`/`to` of a chart: `count` UTC-aligned buckets, the last one holding now (the server counts
 * the buckets from `from`'s to `to`'s, both included, up to 1,440). A series whose last point is later
 * than this device's clock (a server clock ahead of it) moves the end there, so the newest point is
 * never cut off. `end` is where the last bucket ends: the chart's right edge.
 */
export function seriesWindow(
  b: Bucket,
  now: number,
  lastAt?: string | null,
): { from: string; to: string; start: number; end: number } {
  const { ms, count } = bucketInfo(b);
  const last = lastAt ? Date.parse(lastAt) : Number.NaN;
  const at = Math.max(now, Number.isFinite(last) ? last : now);
  const lastBucket = Math.floor(at / ms) * ms;
  const start = lastBucket - (count - 1) * ms;
  return {
    from: new Date(start).toISOString(),
    to: new Date(at).toISOString(),
    start,
    end: lastBucket + ms,
  };
}

/** `{host="nas", mount="/"}`, or '' without tags: how a series is named beside its metric. */
export function formatTags(tags: Tags | null | undefined): string {
  const e = Object.entries(tags ?? {});
  if (!e.length) return '';
  return `{${e.map(([k, v]) => `${k}="${v}"`).join(', ')}}`;
}

/** A tag filter typed as `host=nas, mount=/` (quotes optional); an error names the bad part. */
export function parseTags(text: string): { tags: Tags } | { error: string } {
  const tags: Tags = {};
  const s = text
    .trim()
    .replace(/^\{([\s\S]*)\}$/, '$1')
    .trim();
  // key=value or key="value, with commas", separated by commas.
  const re = /\s*([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|([^,"]*))\s*(?:,|$)/y;
  let at = 0;
  while (at < s.length) {
    re.lastIndex = at;
    const m = re.exec(s);
    if (!m || re.lastIndex === at) {
      const bad = s.slice(at).split(',')[0]!.trim();
      return { error: `tags: “${bad}” is not key=value` };
    }
    tags[m[1]!] = m[2] ?? (m[3] ?? '').trim();
    at = re.lastIndex;
  }
  if (Object.keys(tags).length > 10) return { error: 'tags: at most 10' };
  return { tags };
}

/** A number as people read it: up to 4 significant decimals, no exponent below a trillion. */
export function formatValue(v: number | null | undefined, unit?: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const abs = Math.abs(v);
  const text =
    abs !== 0 && (abs >= 1e12 || abs < 1e-4)
      ? v.toExponential(3)
      : Number.isInteger(v)
        ? v.toLocaleString('en-US', { useGrouping: false })
        : String(Number(v.toPrecision(6)));
  return unit ? `${text} ${unit}` : text;
}

/** A point of the chart: `band` is the [min, max] range the area draws. */
export interface ChartPoint extends SeriesPoint {
  t: number;
  band: [number, number];
}

export function chartPoints(points: SeriesPoint[]): ChartPoint[] {
  return points
    .map((p) => ({ ...p, t: Date.parse(p.at), band: [p.min, p.max] as [number, number] }))
    .sort((a, b) => a.t - b.t);
}

/** The chart's accessible name: what it shows and its latest figures. */
export function chartSummary(m: Pick<Metric, 'name' | 'tags' | 'unit'>, b: Bucket, points: SeriesPoint[]) {
  const what = `${m.name}${formatTags(m.tags)}, ${bucketInfo(b).window} by ${b}`;
  if (!points.length) return `${what}: no points`;
  const last = points[points.length - 1]!;
  const min = Math.min(...points.map((p) => p.min));
  const max = Math.max(...points.map((p) => p.max));
  return `${what}: ${points.length} bucket${points.length === 1 ? '' : 's'}, from ${formatValue(min, m.unit)} to ${formatValue(max, m.unit)}, latest average ${formatValue(last.avg, m.unit)}`;
}

/** The ready-made lines that send points to a source's ingest URL (full, or masked for reading). */
export function ingestExamples(url: string) {
  const json = "-H 'Content-Type: application/json'";
  const text = "-H 'Content-Type: text/plain'";
  return [
    {
      label: 'curl: one JSON point',
      value: `curl -fsS ${json} -d '{"name":"cpu_temp","value":48.5,"tags":{"host":"nas"}}' ${url}`,
    },
    {
      label: 'curl: a JSON batch (up to 1,000 points, each with an optional time)',
      value: `curl -fsS ${json} -d '{"metrics":[{"name":"disk_free_bytes","value":81234567890,"tags":{"mount":"/"}},{"name":"backup_seconds","value":312,"at":"2026-01-15T03:00:00Z"}]}' ${url}`,
    },
    {
      label: 'curl: a Prometheus text file',
      value: `curl -fsS --data-binary @metrics.txt ${text} ${url}`,
    },
    {
      label: 'Pushgateway style: a few samples from a script',
      value: `printf 'backup_last_success_timestamp_seconds %s\\nbackup_size_bytes %s\\n' "$(date +%s)" "$(stat -c %s /backup/latest.tar)" | curl -fsS --data-binary @- ${text} ${url}`,
    },
    {
      label: 'node_exporter: push its textfile collector’s file every minute (crontab)',
      value: `* * * * * curl -fsS --data-binary @/var/lib/node_exporter/textfile_collector/backup.prom ${text} ${url}`,
    },
    {
      label: 'node_exporter: push a few of its own series (crontab)',
      value: `* * * * * curl -fsS http://localhost:9100/metrics | grep -E '^node_(load1|memory_MemAvailable_bytes|filesystem_avail_bytes\\{mountpoint="/"\\})' | curl -fsS --data-binary @- ${text} ${url}`,
    },
  ];
}

/** What metrics.txt looks like (Prometheus text exposition 0.0.4). */
export const PROMETHEUS_SAMPLE = `# HELP room_temperature_celsius Temperature of the room
# TYPE room_temperature_celsius gauge
room_temperature_celsius{room="office"} 21.5
room_temperature_celsius{room="cellar"} 14.25
ups_battery_charge_percent 97
`;

const UNITS = [
  { unit: 'd', sec: 86_400 },
  { unit: 'h', sec: 3_600 },
  { unit: 'm', sec: 60 },
  { unit: 's', sec: 1 },
] as const;

/** Two largest units, like the server's messages: `2d 3h`, `5m 10s`, `42s`. */
export function formatDuration(sec: number): string {
  let rest = Math.max(0, Math.floor(sec));
  const parts: string[] = [];
  for (const u of UNITS) {
    const n = Math.floor(rest / u.sec);
    rest -= n * u.sec;
    if (n > 0) parts.push(`${n}${u.unit}`);
    if (parts.length === 2 || (parts.length === 1 && n === 0)) break;
  }
  return parts.length ? parts.join(' ') : '0s';
}

import type { Bucket, ErrorPoint, FlushReason, FlushStats } from './types';

/** The ready-made lines for a page: the tag, the tag with a release, and the capture API. */
export function snippetExamples(url: string) {
  return [
    { label: 'Snippet', value: `<script src="${url}" async></script>` },
    {
      label: 'Snippet with a release',
      value: `<script src="${url}" data-release="1.4.2" async></script>`,
    },
    {
      label: 'Capture a message or a caught error',
      value: `window.Belfry && window.Belfry.capture('Checkout failed: ' + err.message);`,
    },
    { label: 'Set the release later', value: `window.Belfry && window.Belfry.setRelease('1.4.3');` },
  ];
}

/** Allowed origins as typed, one a line (or separated by commas/spaces); empty means anywhere. */
export function parseOrigins(text: string): string[] {
  const list = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? [...new Set(list)] : ['*'];
}

export const BUCKETS: { bucket: Bucket; label: string; ms: number; count: number; window: string }[] = [
  { bucket: '1m', label: 'Minutes', ms: 60_000, count: 120, window: 'last 2 hours' },
  { bucket: '1h', label: 'Hours', ms: 3_600_000, count: 48, window: 'last 48 hours' },
  { bucket: '1d', label: 'Days', ms: 86_400_000, count: 30, window: 'last 30 days' },
];

export function bucketInfo(b: Bucket) {
  return BUCKETS.find((x) => x.bucket === b) ?? BUCKETS[1]!;
}

/** `count` UTC buckets ending with the one that holds now. */
export function seriesWindow(b: Bucket, now: number) {
  const { ms, count } = bucketInfo(b);
  const last = Math.floor(now / ms) * ms;
  return { from: new Date(last - (count - 1) * ms).toISOString(), to: new Date(now).toISOString() };
}

/** Errors + rejections a bucket: what a sparkline draws. */
export function errorCounts(points: ErrorPoint[]): number[] {
  return points.map((p) => p.errors + p.rejections);
}

export const FLUSH_REASONS: { reason: FlushReason; label: string }[] = [
  { reason: 'interval', label: 'Every 5 s' },
  { reason: 'size', label: '20 events queued' },
  { reason: 'error', label: 'After an error' },
  { reason: 'unload', label: 'Page hidden or left' },
  { reason: 'ping', label: 'Pings (no events)' },
];

/** Each reason's share of the total, as whole percents. */
export function flushShares(
  s: FlushStats,
): { reason: FlushReason; label: string; count: number; pct: number }[] {
  return FLUSH_REASONS.map((r) => {
    const count = s.reasons[r.reason] ?? 0;
    return { ...r, count, pct: s.total ? Math.round((count / s.total) * 100) : 0 };
  });
}

/** `fn (file:line:col)` split for display; `""` or anything else stays as the file. */
export function parseCulprit(culprit: string): { fn: string; location: string } {
  const m = /^(.*) \((.*)\)$/.exec(culprit);
  return m ? { fn: m[1]!, location: m[2]! } : { fn: '', location: culprit };
}

export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { RATE_WINDOW_MS } from '../../lib/limits';
import { tokenDigest, tokenPrefix } from '../../lib/tokens';
import { statusChanged } from '../sources/messages';
import { type EvalPoint, evaluatePoints, refreshStatus, withAlertFrames } from './alerts';
import {
  INGESTS_PER_MINUTE,
  type ParsedBody,
  parseJsonBody,
  pointsOfProm,
  type Rejection,
  SERIES_PER_SOURCE,
  tagsText,
} from './points';
import { helpFor, parsePrometheus } from './prometheus';
import {
  describeSeries,
  findSource,
  findSourceByDigest,
  insertPoints,
  insertSeries,
  KEEP_MS,
  RAW_KEEP_MS,
  RESOLUTIONS,
  type SeriesRow,
  type SourceRow,
  seriesKeysOfSource,
  touchSource,
  upsertRollups,
} from './store';

/**
 * Ingest (§8.1): one transaction per request. Series ids come from a per-source map in memory (name +
 * sorted tags → id, loaded on first use); raw points go in a few multi-row INSERTs; each touched
 * (series, resolution, bucket) is folded in JS and upserted once. Alerts are evaluated on the points in
 * the same transaction (alerts.ts).
 */

interface MetricsState {
  /** source id → (series key → series id). */
  series: Map<number, Map<string, number>>;
  rates: Map<number, { start: number; count: number }>;
  sweptAt: number;
}

const states = new WeakMap<AppContext, MetricsState>();

function state(ctx: AppContext): MetricsState {
  let s = states.get(ctx);
  if (!s) {
    s = { series: new Map(), rates: new Map(), sweptAt: 0 };
    states.set(ctx, s);
  }
  return s;
}

function seriesKey(name: string, tags: string): string {
  return `${name}\u0000${tags}`;
}

function seriesMap(ctx: AppContext, sourceId: number): Map<string, number> {
  const s = state(ctx);
  let m = s.series.get(sourceId);
  if (!m) {
    m = new Map();
    for (const r of seriesKeysOfSource(ctx.db, sourceId)) m.set(seriesKey(r.name, r.tags), r.id);
    s.series.set(sourceId, m);
  }
  return m;
}

export function forgetSourceCache(ctx: AppContext, sourceId: number): void {
  states.get(ctx)?.series.delete(sourceId);
}

export function forgetSeriesCache(ctx: AppContext, sourceId: number, series: SeriesRow): void {
  states.get(ctx)?.series.get(sourceId)?.delete(seriesKey(series.name, series.tags));
}

/** 600 requests a minute per source (its token), fixed windows in memory; then 429 with Retry-After. */
function rateLimit(ctx: AppContext, sourceId: number, now: number): void {
  const s = state(ctx);
  if (now - s.sweptAt >= RATE_WINDOW_MS) {
    for (const [k, v] of s.rates) if (now - v.start >= RATE_WINDOW_MS) s.rates.delete(k);
    s.sweptAt = now;
  }
  let w = s.rates.get(sourceId);
  if (!w || now - w.start >= RATE_WINDOW_MS) {
    w = { start: now, count: 0 };
    s.rates.set(sourceId, w);
  }
  if (w.count >= INGESTS_PER_MINUTE)
    throw errors.retryLater(
      'too many requests for this metric source',
      (w.start + RATE_WINDOW_MS - now) / 1000,
    );
  w.count++;
}

/** The source of an M token in the URL, or 404 (an API token is never looked up here, §0.2). */
export function sourceOfToken(ctx: AppContext, token: string): SourceRow {
  const row = tokenPrefix(token) === 'M' ? findSourceByDigest(ctx.db, tokenDigest(token)) : undefined;
  if (!row) throw errors.notFound('metric source');
  return row;
}

export type IngestBody = { kind: 'json'; body: unknown } | { kind: 'text'; text: string };

export interface IngestAnswer {
  accepted: number;
  rejected: Rejection[];
  paused?: true;
}

export function ingest(ctx: AppContext, token: string, input: IngestBody): IngestAnswer {
  const source = sourceOfToken(ctx, token);
  const now = ctx.clock.now();
  rateLimit(ctx, source.id, now);
  if (source.status === 'paused') return { accepted: 0, rejected: [], paused: true };
  const parsed: ParsedBody | string =
    input.kind === 'json' ? parseJsonBody(input.body, now) : pointsOfProm(parsePrometheus(input.text), now);
  if (typeof parsed === 'string') throw errors.badRequest(parsed);
  const { points, rejected } = parsed;

  // Series: known ids from the map; new keys within the source's cap, the rest rejected.
  const known = seriesMap(ctx, source.id);
  const ids = new Array<number>(points.length);
  const fresh = new Map<string, { name: string; tags: string; description: string }>();
  const freshAt: (string | undefined)[] = new Array(points.length);
  const kept: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const tags = tagsText(p.tags);
    const key = seriesKey(p.name, tags);
    const id = known.get(key);
    if (id !== undefined) {
      ids[i] = id;
      kept.push(i);
      continue;
    }
    if (!fresh.has(key)) {
      if (known.size + fresh.size >= SERIES_PER_SOURCE) {
        rejected.push({ index: p.index, error: `${p.ref}: too many series` });
        continue;
      }
      const help = parsed.help ? helpFor(parsed.help, p.name) : undefined;
      fresh.set(key, { name: p.name, tags, description: (help ?? '').slice(0, 500) });
    }
    freshAt[i] = key;
    kept.push(i);
  }
  rejected.sort((a, b) => a.index - b.index);
  if (kept.length === 0) throw errors.badRequest(rejected[0]?.error ?? 'metrics: no point accepted');

  const before = source.status;
  const inserted = withAlertFrames(ctx, () =>
    ctx.db.transaction(() => {
      const created = fresh.size === 0 ? [] : insertSeries(ctx.db, source.id, [...fresh.values()], now);
      const createdIds = new Map<string, number>();
      for (const r of created) createdIds.set(seriesKey(r.name, r.tags), r.id);
      for (const i of kept) if (freshAt[i] !== undefined) ids[i] = createdIds.get(freshAt[i]!)!;
      writePoints(ctx, points, ids, kept, now);
      if (parsed.help && parsed.help.size > 0) describeKnown(ctx, points, ids, kept, parsed.help, createdIds);
      touchSource(ctx.db, source.id, now);
      const evalPoints: EvalPoint[] = kept.map((i) => {
        const p = points[i]!;
        return { seriesId: ids[i]!, name: p.name, tags: p.tags, value: p.value, at: p.at };
      });
      evaluatePoints(ctx, source, evalPoints, now);
      refreshStatus(ctx, { ...source, last_check_at: now }, now);
      return createdIds;
    }),
  );
  for (const [key, id] of inserted) known.set(key, id);
  ctx.due.poke();
  if (findSource(ctx.db, source.id)?.status !== before) statusChanged(ctx, source.channel_id);
  return { accepted: kept.length, rejected };
}

/** Raw points (within their 24 h) and the rollup deltas of every touched bucket, in a few statements. */
function writePoints(
  ctx: AppContext,
  points: readonly { value: number; at: number }[],
  ids: readonly number[],
  kept: readonly number[],
  now: number,
): void {
  const raw: number[] = [];
  const rawFrom = now - RAW_KEEP_MS;
  // (series, res, bucket) → [min, max, sum, count, last, lastAt]
  const buckets = new Map<string, number[]>();
  const order: [number, number, number][] = [];
  for (const i of kept) {
    const p = points[i]!;
    const sid = ids[i]!;
    if (p.at >= rawFrom) raw.push(sid, p.at, p.value);
    for (const res of RESOLUTIONS) {
      if (p.at < now - KEEP_MS[res]!) continue;
      const bucket = p.at - (p.at % res);
      const key = `${sid}:${res}:${bucket}`;
      const agg = buckets.get(key);
      if (!agg) {
        buckets.set(key, [p.value, p.value, p.value, 1, p.value, p.at]);
        order.push([sid, res, bucket]);
      } else {
        if (p.value < agg[0]!) agg[0] = p.value;
        if (p.value > agg[1]!) agg[1] = p.value;
        agg[2]! += p.value;
        agg[3]!++;
        if (p.at >= agg[5]!) {
          agg[4] = p.value;
          agg[5] = p.at;
        }
      }
    }
  }
  if (raw.length > 0) insertPoints(ctx.db, raw);
  const flat: number[] = [];
  for (const [sid, res, bucket] of order) {
    const a = buckets.get(`${sid}:${res}:${bucket}`)!;
    flat.push(sid, res, bucket, a[0]!, a[1]!, a[2]!, a[3]!, a[4]!, a[5]!);
  }
  if (flat.length > 0) upsertRollups(ctx.db, flat);
}

/** `# HELP` fills the empty description of series that existed before this request. */
function describeKnown(
  ctx: AppContext,
  points: readonly { name: string }[],
  ids: readonly number[],
  kept: readonly number[],
  help: ReadonlyMap<string, string>,
  created: ReadonlyMap<string, number>,
): void {
  const createdIds = new Set(created.values());
  const done = new Set<number>();
  for (const i of kept) {
    const id = ids[i]!;
    if (createdIds.has(id) || done.has(id)) continue;
    done.add(id);
    const text = helpFor(help, points[i]!.name);
    if (text !== undefined && text !== '') describeSeries(ctx.db, id, text.slice(0, 500));
  }
}

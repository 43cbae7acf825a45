import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { issueToken } from '../../lib/tokens';
import { channelInScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { forgetSource, recordStatus } from '../history/service';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import { statusChanged } from '../sources/messages';
import { rearmAbsent, refreshStatus } from './alerts';
import { forgetSeriesCache, forgetSourceCache } from './ingest';
import { METRIC_SOURCES_PER_USER, parseTime, SERIES_QUERY_MAX_BUCKETS } from './points';
import {
  countSourcesOfUser,
  countsSince,
  deleteSeries,
  deleteSource,
  findSeries,
  findSource,
  insertSource,
  lastOfSeries,
  RES_1D,
  RES_1H,
  RES_1M,
  type RollupRow,
  recipientSources,
  rollupRange,
  rotateSourceToken,
  type SeriesRow,
  type SourceRow,
  seriesOfSource,
  sourcesOfUser,
  updateSeriesMeta,
  updateSource,
  writeSourceStatus,
} from './store';

export const KIND = 'metric-source';

// ---------------------------------------------------------------- access

/** The caller's own metric source, inside an API token's scope; anything else is 404 (§0.2). */
export function ownSource(ctx: AppContext, p: Principal, id: number): SourceRow {
  const row = findSource(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('metric source');
  return row;
}

export function ownSeries(ctx: AppContext, p: Principal, sourceId: number, seriesId: number) {
  const source = ownSource(ctx, p, sourceId);
  const series = findSeries(ctx.db, seriesId);
  if (!series || series.source_id !== source.id) throw errors.notFound('metric');
  return { source, series };
}

// ---------------------------------------------------------------- sources

export function listSources(ctx: AppContext, p: Principal, appid?: number): SourceRow[] {
  return sourcesInView(ctx, p, sourcesOfUser(ctx.db, p.userId), appid);
}

export function createSource(
  ctx: AppContext,
  p: Principal,
  input: { appid: number; name: string; paused?: boolean | undefined },
): { row: SourceRow; token: string } {
  const channel = writableChannel(ctx, p, input.appid);
  const { token, digest, hint } = issueToken('M');
  const now = ctx.clock.now();
  const paused = input.paused ?? false;
  const id = ctx.db.transaction(() => {
    if (countSourcesOfUser(ctx.db, p.userId) >= METRIC_SOURCES_PER_USER)
      throw errors.userCap(METRIC_SOURCES_PER_USER, 'metric sources');
    const id = insertSource(
      ctx.db,
      { userId: p.userId, channelId: channel.id, name: input.name, paused, digest, hint },
      now,
    );
    recordStatus(ctx, KIND, id, paused ? 'paused' : 'pending', now);
    return id;
  });
  statusChanged(ctx, channel.id);
  return { row: findSource(ctx.db, id)!, token };
}

export function changeSource(
  ctx: AppContext,
  p: Principal,
  id: number,
  input: { appid?: number | undefined; name?: string | undefined; paused?: boolean | undefined },
): SourceRow {
  const row = ownSource(ctx, p, id);
  let channelId = row.channel_id;
  if (input.appid !== undefined && input.appid !== row.channel_id)
    channelId = writableChannel(ctx, p, input.appid).id;
  // Resuming asks what creating asks: a channel the caller may still write to (§0.3).
  if (input.paused === false && row.status === 'paused') writableChannel(ctx, p, channelId);
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    updateSource(ctx.db, id, { channelId, name: input.name ?? row.name });
    if (input.paused === true && row.status !== 'paused') pauseRow(ctx, row, now);
    else if (input.paused === false && row.status === 'paused') {
      const next = row.last_check_at === null ? 'pending' : 'ok';
      writeSourceStatus(ctx.db, id, next, now);
      recordStatus(ctx, KIND, id, next, now);
      rearmAbsent(ctx, id, now);
    }
  });
  ctx.due.poke();
  statusChanged(ctx, row.channel_id);
  if (channelId !== row.channel_id) statusChanged(ctx, channelId);
  return findSource(ctx.db, id)!;
}

/** Paused: no point is stored and no alert is evaluated; alerts go back to ok without a message. */
function pauseRow(ctx: AppContext, row: SourceRow, now: number): void {
  ctx.db.run(
    "UPDATE metric_alerts SET state = 'ok', since = CASE WHEN state = 'firing' THEN ? ELSE since END, due_at = NULL WHERE source_id = ?",
    [now, row.id],
  );
  ctx.db.run(
    'DELETE FROM metric_breaches WHERE alert_id IN (SELECT id FROM metric_alerts WHERE source_id = ?)',
    [row.id],
  );
  writeSourceStatus(ctx.db, row.id, 'paused', now);
  recordStatus(ctx, KIND, row.id, 'paused', now);
}

export function removeSource(ctx: AppContext, p: Principal, id: number): void {
  const row = ownSource(ctx, p, id);
  ctx.db.transaction(() => {
    deleteSource(ctx.db, id);
    forgetSource(ctx, KIND, id);
  });
  forgetSourceCache(ctx, id);
  statusChanged(ctx, row.channel_id);
}

export function rotateToken(ctx: AppContext, p: Principal, id: number): { row: SourceRow; token: string } {
  ownSource(ctx, p, id);
  const { token, digest, hint } = issueToken('M');
  ctx.db.transaction(() => rotateSourceToken(ctx.db, id, digest, hint));
  return { row: findSource(ctx.db, id)!, token };
}

/** A recipient who lost `send` on the channel: their metric sources there are paused (§0.3). */
export function pauseLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  const lost = recipientSources(ctx.db, appid, channel.user_id).filter((row) => {
    const v = receivedChannel(ctx, row.user_id, appid);
    return !v || !maySend(v);
  });
  if (lost.length === 0) return;
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    for (const row of lost) pauseRow(ctx, row, now);
  });
  statusChanged(ctx, appid);
}

// ---------------------------------------------------------------- series (§8.2)

export function listMetrics(ctx: AppContext, p: Principal, sourceId: number) {
  const source = ownSource(ctx, p, sourceId);
  const now = ctx.clock.now();
  const from1m = Math.floor((now - RES_1D) / RES_1M) * RES_1M;
  const from1h = Math.ceil(from1m / RES_1H) * RES_1H;
  const last = lastOfSeries(ctx.db, source.id);
  const counts = countsSince(ctx.db, source.id, from1m, from1h);
  return seriesOfSource(ctx.db, source.id).map((s) => {
    const l = last.get(s.id);
    return {
      ...presentSeries(s),
      unit: s.unit,
      description: s.description,
      lastValue: l ? l.last : null,
      lastAt: l ? rfc3339(l.last_at) : null,
      count24h: counts.get(s.id) ?? 0,
    };
  });
}

export function presentSeries(s: SeriesRow) {
  return { id: s.id, name: s.name, tags: JSON.parse(s.tags) as Record<string, string> };
}

export function changeMetric(
  ctx: AppContext,
  p: Principal,
  sourceId: number,
  seriesId: number,
  input: { unit?: string | undefined; description?: string | undefined },
) {
  const { series } = ownSeries(ctx, p, sourceId, seriesId);
  ctx.db.transaction(() =>
    updateSeriesMeta(ctx.db, series.id, input.unit ?? series.unit, input.description ?? series.description),
  );
  return listMetrics(ctx, p, sourceId).find((m) => m.id === series.id)!;
}

export function removeMetric(ctx: AppContext, p: Principal, sourceId: number, seriesId: number): void {
  const { series } = ownSeries(ctx, p, sourceId, seriesId);
  ctx.db.transaction(() => deleteSeries(ctx.db, series.id));
  forgetSeriesCache(ctx, sourceId, series);
  // A breach of that series may have been the one keeping an alert firing.
  ctx.db.transaction(() => refreshStatus(ctx, findSource(ctx.db, sourceId)!, ctx.clock.now()));
}

const BUCKETS: Readonly<Record<string, number>> = { '1m': RES_1M, '1h': RES_1H, '1d': RES_1D };

export interface SeriesQuery {
  bucket?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** `from`/`to` of the query string: RFC 3339 or unix seconds. */
function queryTime(v: string | undefined, field: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const t = parseTime(/^[+-]?\d+(?:\.\d+)?$/.test(v) ? Number(v) : v);
  if (t === undefined) throw errors.badRequest(`${field}: must be an RFC 3339 time or unix seconds`);
  return t;
}

export function readSeries(
  ctx: AppContext,
  p: Principal,
  sourceId: number,
  seriesId: number,
  q: SeriesQuery,
) {
  const { series } = ownSeries(ctx, p, sourceId, seriesId);
  const name = q.bucket ?? '1h';
  const size = BUCKETS[name];
  if (size === undefined) throw errors.badRequest('bucket: must be 1m, 1h or 1d');
  const to = queryTime(q.to, 'to') ?? ctx.clock.now();
  const last = Math.floor(to / size) * size;
  const fromGiven = queryTime(q.from, 'from');
  if (fromGiven !== undefined && fromGiven > to) throw errors.badRequest('from: must not be after to');
  const first = fromGiven === undefined ? last - 99 * size : Math.floor(fromGiven / size) * size;
  if ((last - first) / size + 1 > SERIES_QUERY_MAX_BUCKETS)
    throw errors.badRequest(`from: at most ${SERIES_QUERY_MAX_BUCKETS} buckets`);
  const rows = rollupsOf(ctx, series.id, size, first, last);
  const head = JSON.stringify({
    metric: presentSeries(series),
    bucket: name,
    from: rfc3339(first),
    to: rfc3339(to),
  });
  const points = JSON.stringify(
    rows.map((r) => ({
      at: rfc3339(r.bucket),
      min: r.min,
      max: r.max,
      avg: r.sum / r.count,
      last: r.last,
      count: r.count,
    })),
  );
  // `points` is ASCII (dates, numbers, fixed keys): its UTF-8 length is its length, so only the small head
  // is measured, not the ~160 kB of a 1,440-bucket answer.
  return {
    text: `${head.slice(0, -1)},"points":${points}}`,
    bytes: Buffer.byteLength(head) + POINTS_KEY_BYTES + points.length,
  };
}

/** `,"points":` in place of the head's closing `}`, which comes back after the points. */
const POINTS_KEY_BYTES = ',"points":'.length;

/**
 * Every bucket is answered from its rollup: ingest folds each point into its 1 m, 1 h and 1 d bucket
 * in the same transaction that stores it, so a recent 1 m bucket equals the raw points it covers (the
 * raw points are kept 24 h for that equivalence, not read here).
 */
function rollupsOf(
  ctx: AppContext,
  seriesId: number,
  size: number,
  first: number,
  last: number,
): RollupRow[] {
  return rollupRange(ctx.db, seriesId, size, first, last);
}

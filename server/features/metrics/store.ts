import type { Db, Param } from '../../db/database';

export type SourceStatus = 'pending' | 'ok' | 'firing' | 'paused';

export interface SourceRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  status: SourceStatus;
  status_since: number;
  token_digest: string;
  token_hint: string;
  last_check_at: number | null;
  created_at: number;
}

export interface SeriesRow {
  id: number;
  source_id: number;
  name: string;
  tags: string;
  unit: string;
  description: string;
  created_at: number;
}

export interface RollupRow {
  bucket: number;
  min: number;
  max: number;
  sum: number;
  count: number;
  last: number;
}

export type Condition = 'above' | 'below' | 'absent';

export interface AlertRow {
  id: number;
  source_id: number;
  metric: string;
  tags: string;
  condition: Condition;
  threshold: number | null;
  for_sec: number;
  priority: number;
  message: string;
  enabled: number;
  state: 'ok' | 'firing';
  since: number;
  last_value: number | null;
  last_point_at: number | null;
  /** Creation or the last enable/resume: where an absent alert's silence starts without a point. */
  armed_at: number;
  due_at: number | null;
  created_at: number;
}

export interface BreachRow {
  alert_id: number;
  series_id: number;
  since: number;
  value: number;
}

/** Bucket sizes (ms) of the three rollups, and how long each is kept. */
export const RES_1M = 60_000;
export const RES_1H = 3_600_000;
export const RES_1D = 86_400_000;
export const RESOLUTIONS = [RES_1M, RES_1H, RES_1D] as const;
export const RAW_KEEP_MS = 86_400_000;
export const KEEP_MS: Readonly<Record<number, number>> = {
  [RES_1M]: 7 * RES_1D,
  [RES_1H]: 90 * RES_1D,
  [RES_1D]: 730 * RES_1D,
};
/** Raw points kept on the whole server at most (oldest go first), whatever their age. */
export const RAW_POINTS_MAX = 1_000_000;

// ---------------------------------------------------------------- sources

export function findSource(db: Db, id: number): SourceRow | undefined {
  return db.first<SourceRow>('SELECT * FROM metric_sources WHERE id = ?', [id]);
}

export function findSourceByDigest(db: Db, digest: string): SourceRow | undefined {
  return db.first<SourceRow>('SELECT * FROM metric_sources WHERE token_digest = ?', [digest]);
}

export function sourcesOfUser(db: Db, userId: number): SourceRow[] {
  return db.all<SourceRow>('SELECT * FROM metric_sources WHERE user_id = ? ORDER BY id', [userId]);
}

export function sourcesOfChannels(db: Db, channelIds: readonly number[]): SourceRow[] {
  if (channelIds.length === 0) return [];
  return db.all<SourceRow>(
    `SELECT * FROM metric_sources WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    channelIds as number[],
  );
}

export function countSourcesOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_sources WHERE user_id = ?', [userId])!.n;
}

export function insertSource(
  db: Db,
  s: { userId: number; channelId: number; name: string; paused: boolean; digest: string; hint: string },
  now: number,
): number {
  return db.run(
    `INSERT INTO metric_sources (user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [s.userId, s.channelId, s.name, s.paused ? 'paused' : 'pending', now, s.digest, s.hint, now],
  ).lastInsertRowid;
}

export function updateSource(db: Db, id: number, s: { channelId: number; name: string }): void {
  db.run('UPDATE metric_sources SET channel_id = ?, name = ? WHERE id = ?', [s.channelId, s.name, id]);
}

export function writeSourceStatus(db: Db, id: number, status: SourceStatus, since: number): void {
  db.run('UPDATE metric_sources SET status = ?, status_since = ? WHERE id = ?', [status, since, id]);
}

export function touchSource(db: Db, id: number, at: number): void {
  db.run('UPDATE metric_sources SET last_check_at = ? WHERE id = ?', [at, id]);
}

export function rotateSourceToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE metric_sources SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function deleteSource(db: Db, id: number): void {
  db.run('DELETE FROM metric_sources WHERE id = ?', [id]);
}

/** Sources of users other than the channel's owner on that channel (share recipients), not paused. */
export function recipientSources(db: Db, channelId: number, ownerId: number): SourceRow[] {
  return db.all<SourceRow>(
    "SELECT * FROM metric_sources WHERE channel_id = ? AND user_id <> ? AND status <> 'paused'",
    [channelId, ownerId],
  );
}

// ---------------------------------------------------------------- series

export function seriesOfSource(db: Db, sourceId: number): SeriesRow[] {
  return db.all<SeriesRow>('SELECT * FROM metric_series WHERE source_id = ? ORDER BY name, tags, id', [
    sourceId,
  ]);
}

export function seriesKeysOfSource(db: Db, sourceId: number): { id: number; name: string; tags: string }[] {
  return db.all('SELECT id, name, tags FROM metric_series WHERE source_id = ?', [sourceId]);
}

export function findSeries(db: Db, id: number): SeriesRow | undefined {
  return db.first<SeriesRow>('SELECT * FROM metric_series WHERE id = ?', [id]);
}

export function countSeries(db: Db, sourceId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_series WHERE source_id = ?', [sourceId])!
    .n;
}

/** New series in one statement; their ids by `name \0 tags`. */
export function insertSeries(
  db: Db,
  sourceId: number,
  list: readonly { name: string; tags: string; description: string }[],
  now: number,
): { id: number; name: string; tags: string }[] {
  const out: { id: number; name: string; tags: string }[] = [];
  for (const size of chunks(list.length)) {
    const part = list.slice(out.length, out.length + size);
    const params: Param[] = [];
    for (const s of part) params.push(sourceId, s.name, s.tags, s.description, now);
    out.push(
      ...db.all<{ id: number; name: string; tags: string }>(
        `INSERT INTO metric_series (source_id, name, tags, description, created_at) VALUES ${rows(size, 5)}
         RETURNING id, name, tags`,
        params,
      ),
    );
  }
  return out;
}

export function updateSeriesMeta(db: Db, id: number, unit: string, description: string): void {
  db.run('UPDATE metric_series SET unit = ?, description = ? WHERE id = ?', [unit, description, id]);
}

/** Fills empty descriptions (`# HELP`). */
export function describeSeries(db: Db, id: number, description: string): void {
  db.run("UPDATE metric_series SET description = ? WHERE id = ? AND description = ''", [description, id]);
}

export function deleteSeries(db: Db, id: number): void {
  db.run('DELETE FROM metric_series WHERE id = ?', [id]);
  db.run('DELETE FROM metric_points WHERE series_id = ?', [id]);
}

/** Latest point of each series of a source (from the 1 d rollups, which hold it for two years). */
export function lastOfSeries(db: Db, sourceId: number): Map<number, { last: number; last_at: number }> {
  const rows = db.all<{ series_id: number; last: number; last_at: number; b: number }>(
    `SELECT series_id, last, last_at, MAX(bucket) AS b FROM metric_rollups
       WHERE series_id IN (SELECT id FROM metric_series WHERE source_id = ?) AND res = ? GROUP BY series_id`,
    [sourceId, RES_1D],
  );
  return new Map(rows.map((r) => [r.series_id, { last: r.last, last_at: r.last_at }]));
}

/** Points since `from1m` (a minute start) per series: 1 m buckets up to `from1h`, 1 h buckets after. */
export function countsSince(db: Db, sourceId: number, from1m: number, from1h: number): Map<number, number> {
  const rows = db.all<{ series_id: number; n: number }>(
    `SELECT series_id, SUM(count) AS n FROM metric_rollups
       WHERE series_id IN (SELECT id FROM metric_series WHERE source_id = ?)
         AND ((res = ? AND bucket >= ? AND bucket < ?) OR (res = ? AND bucket >= ?))
       GROUP BY series_id`,
    [sourceId, RES_1M, from1m, from1h, RES_1H, from1h],
  );
  return new Map(rows.map((r) => [r.series_id, r.n]));
}

export function rollupRange(db: Db, seriesId: number, res: number, from: number, to: number): RollupRow[] {
  return db.all<RollupRow>(
    `SELECT bucket, min, max, sum, count, last FROM metric_rollups
       WHERE series_id = ? AND res = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket`,
    [seriesId, res, from, to],
  );
}

// ---------------------------------------------------------------- ingest writes

/**
 * Chunk sizes for `n` rows: 256-row statements, then the rest as powers of two, so a handful of
 * statement texts (and cached prepared statements) serve every batch size.
 */
export function chunks(n: number): number[] {
  const out: number[] = [];
  let rest = n;
  while (rest >= 256) {
    out.push(256);
    rest -= 256;
  }
  for (let size = 128; size >= 1; size >>= 1)
    if (rest >= size) {
      out.push(size);
      rest -= size;
    }
  return out;
}

const rowsCache = new Map<string, string>();
function rows(n: number, width: number): string {
  const key = `${n}:${width}`;
  let s = rowsCache.get(key);
  if (s === undefined) {
    const one = `(${new Array(width).fill('?').join(',')})`;
    s = new Array(n).fill(one).join(',');
    rowsCache.set(key, s);
  }
  return s;
}

/** Raw points as flat triples [series, at, value, series, at, value, ...]. */
export function insertPoints(db: Db, flat: readonly number[]): void {
  const n = flat.length / 3;
  let offset = 0;
  for (const size of chunks(n)) {
    db.run(
      `INSERT INTO metric_points (series_id, at, value) VALUES ${rows(size, 3)}`,
      flat.slice(offset * 3, (offset + size) * 3),
    );
    offset += size;
  }
}

/** Per (series, res, bucket) deltas as flat 9-tuples; each touched bucket is written once. */
export function upsertRollups(db: Db, flat: readonly number[]): void {
  const n = flat.length / 9;
  let offset = 0;
  for (const size of chunks(n)) {
    db.run(
      `INSERT INTO metric_rollups (series_id, res, bucket, min, max, sum, count, last, last_at)
       VALUES ${rows(size, 9)}
       ON CONFLICT (series_id, res, bucket) DO UPDATE SET
         min = MIN(min, excluded.min), max = MAX(max, excluded.max), sum = sum + excluded.sum,
         count = count + excluded.count,
         last = CASE WHEN excluded.last_at >= last_at THEN excluded.last ELSE last END,
         last_at = MAX(last_at, excluded.last_at)`,
      flat.slice(offset * 9, (offset + size) * 9),
    );
    offset += size;
  }
}

// ---------------------------------------------------------------- retention

export function pruneMetrics(db: Db, now: number): number {
  let removed = db.run('DELETE FROM metric_points WHERE at < ?', [now - RAW_KEEP_MS]).changes;
  // Beyond the server-wide cap the oldest raw points go, whatever their age.
  const edge = db.first<{ at: number }>('SELECT at FROM metric_points ORDER BY at DESC LIMIT 1 OFFSET ?', [
    RAW_POINTS_MAX,
  ]);
  if (edge) removed += db.run('DELETE FROM metric_points WHERE at <= ?', [edge.at]).changes;
  for (const res of RESOLUTIONS)
    removed += db.run('DELETE FROM metric_rollups WHERE res = ? AND bucket < ?', [
      res,
      now - KEEP_MS[res]!,
    ]).changes;
  return removed;
}

// ---------------------------------------------------------------- alerts

export function alertsOfSource(db: Db, sourceId: number): AlertRow[] {
  return db.all<AlertRow>('SELECT * FROM metric_alerts WHERE source_id = ? ORDER BY id', [sourceId]);
}

export function enabledAlertsOfSource(db: Db, sourceId: number): AlertRow[] {
  return db.all<AlertRow>('SELECT * FROM metric_alerts WHERE source_id = ? AND enabled = 1 ORDER BY id', [
    sourceId,
  ]);
}

export function findAlert(db: Db, id: number): AlertRow | undefined {
  return db.first<AlertRow>('SELECT * FROM metric_alerts WHERE id = ?', [id]);
}

export function countAlerts(db: Db, sourceId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_alerts WHERE source_id = ?', [sourceId])!
    .n;
}

export function firingAlertCount(db: Db, sourceId: number): number {
  return db.first<{ n: number }>(
    "SELECT COUNT(*) AS n FROM metric_alerts WHERE source_id = ? AND state = 'firing'",
    [sourceId],
  )!.n;
}

export interface AlertSettings {
  metric: string;
  tags: string;
  condition: Condition;
  threshold: number | null;
  for_sec: number;
  priority: number;
  message: string;
  enabled: number;
}

export function insertAlert(db: Db, sourceId: number, s: AlertSettings, now: number): number {
  return db.run(
    `INSERT INTO metric_alerts (source_id, metric, tags, condition, threshold, for_sec, priority, message,
       enabled, state, since, armed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', ?, ?, ?)`,
    [
      sourceId,
      s.metric,
      s.tags,
      s.condition,
      s.threshold,
      s.for_sec,
      s.priority,
      s.message,
      s.enabled,
      now,
      now,
      now,
    ],
  ).lastInsertRowid;
}

export function updateAlertSettings(db: Db, id: number, s: AlertSettings): void {
  db.run(
    `UPDATE metric_alerts SET metric = ?, tags = ?, condition = ?, threshold = ?, for_sec = ?, priority = ?,
       message = ?, enabled = ? WHERE id = ?`,
    [s.metric, s.tags, s.condition, s.threshold, s.for_sec, s.priority, s.message, s.enabled, id],
  );
}

export interface AlertState {
  state: 'ok' | 'firing';
  since: number;
  last_value: number | null;
  last_point_at: number | null;
  armed_at: number;
  due_at: number | null;
}

export function writeAlertState(db: Db, id: number, s: AlertState): void {
  db.run(
    'UPDATE metric_alerts SET state = ?, since = ?, last_value = ?, last_point_at = ?, armed_at = ?, due_at = ? WHERE id = ?',
    [s.state, s.since, s.last_value, s.last_point_at, s.armed_at, s.due_at, id],
  );
}

export function deleteAlert(db: Db, id: number): void {
  db.run('DELETE FROM metric_alerts WHERE id = ?', [id]);
}

export function nextAlertDue(db: Db): number | null {
  return db.first<{ at: number | null }>(
    'SELECT MIN(due_at) AS at FROM metric_alerts WHERE due_at IS NOT NULL',
  )!.at;
}

export function dueAlerts(db: Db, now: number, limit: number): AlertRow[] {
  return db.all<AlertRow>(
    'SELECT * FROM metric_alerts WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at LIMIT ?',
    [now, limit],
  );
}

export function breachesOf(db: Db, alertId: number): BreachRow[] {
  return db.all<BreachRow>('SELECT * FROM metric_breaches WHERE alert_id = ? ORDER BY since, series_id', [
    alertId,
  ]);
}

export function setBreach(db: Db, alertId: number, seriesId: number, since: number, value: number): void {
  db.run(
    `INSERT INTO metric_breaches (alert_id, series_id, since, value) VALUES (?, ?, ?, ?)
     ON CONFLICT (alert_id, series_id) DO UPDATE SET value = excluded.value`,
    [alertId, seriesId, since, value],
  );
}

export function clearBreach(db: Db, alertId: number, seriesId: number): void {
  db.run('DELETE FROM metric_breaches WHERE alert_id = ? AND series_id = ?', [alertId, seriesId]);
}

export function clearBreaches(db: Db, alertId: number): void {
  db.run('DELETE FROM metric_breaches WHERE alert_id = ?', [alertId]);
}

import type { Db } from '../../db/database';

export type ScriptStatus = 'pending' | 'ok' | 'issues' | 'paused';
export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';

export interface ScriptRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  status: ScriptStatus;
  status_since: number;
  token_digest: string;
  token_hint: string;
  allowed_origins: string;
  priority: number;
  last_check_at: number | null;
  created_at: number;
}

export interface IssueRow {
  id: number;
  script_id: number;
  fingerprint: string;
  title: string;
  culprit: string;
  type: string;
  count: number;
  first_seen: number;
  last_seen: number;
  status: IssueStatus;
  last_url: string | null;
  last_release: string | null;
}

export interface EventRow {
  id: number;
  issue_id: number;
  at: number;
  message: string;
  stack: string | null;
  url: string | null;
  release: string | null;
  user_agent: string | null;
  breadcrumbs: string;
}

export interface SourceMapRow {
  id: number;
  script_id: number;
  url: string;
  release: string;
  size: number;
  sources: string;
  created_at: number;
}

export interface AnalysisRow {
  issue_id: number;
  lang: string;
  summary: string;
  likely_cause: string;
  suggestions: string;
  provider: string;
  created_at: number;
}

export const RES_1M = 60_000;
export const RES_1H = 3_600_000;
export const RES_1D = 86_400_000;
export const RESOLUTIONS = [RES_1M, RES_1H, RES_1D] as const;
export const STATS_KEEP_MS: Readonly<Record<number, number>> = {
  [RES_1M]: 7 * RES_1D,
  [RES_1H]: 90 * RES_1D,
  [RES_1D]: 730 * RES_1D,
};
/** Events kept per issue (§9.2). */
export const EVENTS_PER_ISSUE = 100;

// ---------------------------------------------------------------- scripts

export function findScript(db: Db, id: number): ScriptRow | undefined {
  return db.first<ScriptRow>('SELECT * FROM web_scripts WHERE id = ?', [id]);
}

export function findScriptByDigest(db: Db, digest: string): ScriptRow | undefined {
  return db.first<ScriptRow>('SELECT * FROM web_scripts WHERE token_digest = ?', [digest]);
}

export function scriptsOfUser(db: Db, userId: number): ScriptRow[] {
  return db.all<ScriptRow>('SELECT * FROM web_scripts WHERE user_id = ? ORDER BY id', [userId]);
}

export function scriptsOfChannels(db: Db, channelIds: readonly number[]): ScriptRow[] {
  if (channelIds.length === 0) return [];
  return db.all<ScriptRow>(
    `SELECT * FROM web_scripts WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    channelIds as number[],
  );
}

export function countScriptsOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM web_scripts WHERE user_id = ?', [userId])!.n;
}

export function insertScript(
  db: Db,
  s: {
    userId: number;
    channelId: number;
    name: string;
    paused: boolean;
    digest: string;
    hint: string;
    allowedOrigins: string[];
    priority: number;
  },
  now: number,
): number {
  return db.run(
    `INSERT INTO web_scripts (user_id, channel_id, name, status, status_since, token_digest, token_hint,
       allowed_origins, priority, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      s.userId,
      s.channelId,
      s.name,
      s.paused ? 'paused' : 'pending',
      now,
      s.digest,
      s.hint,
      JSON.stringify(s.allowedOrigins),
      s.priority,
      now,
    ],
  ).lastInsertRowid;
}

export function updateScript(
  db: Db,
  id: number,
  s: { channelId: number; name: string; allowedOrigins: string; priority: number },
): void {
  db.run('UPDATE web_scripts SET channel_id = ?, name = ?, allowed_origins = ?, priority = ? WHERE id = ?', [
    s.channelId,
    s.name,
    s.allowedOrigins,
    s.priority,
    id,
  ]);
}

export function writeScriptStatus(db: Db, id: number, status: ScriptStatus, since: number): void {
  db.run('UPDATE web_scripts SET status = ?, status_since = ? WHERE id = ?', [status, since, id]);
}

export function touchScript(db: Db, id: number, at: number): void {
  db.run('UPDATE web_scripts SET last_check_at = ? WHERE id = ?', [at, id]);
}

export function rotateScriptToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE web_scripts SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function deleteScript(db: Db, id: number): void {
  db.run('DELETE FROM web_scripts WHERE id = ?', [id]);
}

export function recipientScripts(db: Db, channelId: number, ownerId: number): ScriptRow[] {
  return db.all<ScriptRow>(
    "SELECT * FROM web_scripts WHERE channel_id = ? AND user_id != ? AND status != 'paused'",
    [channelId, ownerId],
  );
}

export function unresolvedCount(db: Db, scriptId: number): number {
  return db.first<{ n: number }>(
    "SELECT COUNT(*) AS n FROM web_script_issues WHERE script_id = ? AND status = 'unresolved'",
    [scriptId],
  )!.n;
}

// ---------------------------------------------------------------- issues and events

export function findIssue(db: Db, id: number): IssueRow | undefined {
  return db.first<IssueRow>('SELECT * FROM web_script_issues WHERE id = ?', [id]);
}

export function issueByFingerprint(db: Db, scriptId: number, fp: string): IssueRow | undefined {
  return db.first<IssueRow>('SELECT * FROM web_script_issues WHERE script_id = ? AND fingerprint = ?', [
    scriptId,
    fp,
  ]);
}

export function issuesOfScript(
  db: Db,
  scriptId: number,
  status: IssueStatus | 'all',
  limit: number,
): IssueRow[] {
  if (status === 'all')
    return db.all<IssueRow>(
      'SELECT * FROM web_script_issues WHERE script_id = ? ORDER BY last_seen DESC, id DESC LIMIT ?',
      [scriptId, limit],
    );
  return db.all<IssueRow>(
    'SELECT * FROM web_script_issues WHERE script_id = ? AND status = ? ORDER BY last_seen DESC, id DESC LIMIT ?',
    [scriptId, status, limit],
  );
}

export function insertIssue(
  db: Db,
  i: { scriptId: number; fingerprint: string; title: string; culprit: string; type: string; at: number },
): number {
  return db.run(
    `INSERT INTO web_script_issues (script_id, fingerprint, title, culprit, type, count, first_seen, last_seen, status)
     VALUES (?, ?, ?, ?, ?, 0, ?, ?, 'unresolved')`,
    [i.scriptId, i.fingerprint, i.title, i.culprit, i.type, i.at, i.at],
  ).lastInsertRowid;
}

export function bumpIssue(
  db: Db,
  id: number,
  u: { count: number; lastSeen: number; url: string | null; release: string | null; status: IssueStatus },
): void {
  db.run(
    `UPDATE web_script_issues SET count = count + ?, last_seen = MAX(last_seen, ?), last_url = ?,
       last_release = COALESCE(?, last_release), status = ? WHERE id = ?`,
    [u.count, u.lastSeen, u.url, u.release, u.status, id],
  );
}

export function setIssueStatus(db: Db, id: number, status: IssueStatus): void {
  db.run('UPDATE web_script_issues SET status = ? WHERE id = ?', [status, id]);
}

export function deleteIssue(db: Db, id: number): void {
  db.run('DELETE FROM web_script_issues WHERE id = ?', [id]);
}

export function insertEvents(db: Db, flat: (string | number | null)[], rows: number): void {
  if (rows === 0) return;
  const one = '(?, ?, ?, ?, ?, ?, ?, ?)';
  db.run(
    `INSERT INTO web_script_events (issue_id, at, message, stack, url, release, user_agent, breadcrumbs)
     VALUES ${new Array(rows).fill(one).join(',')}`,
    flat,
  );
}

/** Keeps the newest EVENTS_PER_ISSUE events of an issue. */
export function trimEvents(db: Db, issueId: number): void {
  db.run(
    `DELETE FROM web_script_events WHERE issue_id = ? AND id <= (
       SELECT id FROM web_script_events WHERE issue_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    [issueId, issueId, EVENTS_PER_ISSUE],
  );
}

export function latestEvent(db: Db, issueId: number): EventRow | undefined {
  return db.first<EventRow>(
    'SELECT * FROM web_script_events WHERE issue_id = ? ORDER BY at DESC, id DESC LIMIT 1',
    [issueId],
  );
}

// ---------------------------------------------------------------- events an hour per issue (sparklines)

/** Hours kept per issue: the 24 of a sparkline and a day of slack. */
export const ISSUE_HOURS_KEEP_MS = 2 * 86_400_000;

/** Adds `[issueId, hourStart, count]` triples. */
export function addIssueHours(db: Db, triples: readonly (readonly [number, number, number])[]): void {
  for (let i = 0; i < triples.length; i += 100) {
    const part = triples.slice(i, i + 100);
    db.run(
      `INSERT INTO web_script_issue_hours (issue_id, bucket, count) VALUES ${part.map(() => '(?, ?, ?)').join(', ')}
       ON CONFLICT (issue_id, bucket) DO UPDATE SET count = count + excluded.count`,
      part.flat(),
    );
  }
}

/** The hours in [first, last] of these issues, in one query. */
export function issueHours(
  db: Db,
  issueIds: readonly number[],
  first: number,
  last: number,
): { issue_id: number; bucket: number; count: number }[] {
  if (issueIds.length === 0) return [];
  return db.all(
    `SELECT issue_id, bucket, count FROM web_script_issue_hours
     WHERE issue_id IN (${issueIds.map(() => '?').join(',')}) AND bucket >= ? AND bucket <= ?`,
    [...issueIds, first, last],
  );
}

export function pruneIssueHours(db: Db, now: number): number {
  return db.run('DELETE FROM web_script_issue_hours WHERE bucket < ?', [now - ISSUE_HOURS_KEEP_MS]).changes;
}

// ---------------------------------------------------------------- analyses

export function findAnalysis(db: Db, issueId: number): AnalysisRow | undefined {
  return db.first<AnalysisRow>('SELECT * FROM web_script_analyses WHERE issue_id = ?', [issueId]);
}

export function saveAnalysis(db: Db, a: AnalysisRow): void {
  db.run(
    `INSERT OR REPLACE INTO web_script_analyses (issue_id, lang, summary, likely_cause, suggestions, provider, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [a.issue_id, a.lang, a.summary, a.likely_cause, a.suggestions, a.provider, a.created_at],
  );
}

// ---------------------------------------------------------------- counters

export const STAT_COLUMNS = [
  'loads',
  'pings',
  'batches',
  'events',
  'errors',
  'rejections',
  'messages',
  'new_issues',
  'r_interval',
  'r_size',
  'r_unload',
  'r_error',
  'r_ping',
] as const;
export type StatColumn = (typeof STAT_COLUMNS)[number];
export type StatDelta = Partial<Record<StatColumn, number>>;

/** Adds the deltas to the script's bucket at every resolution. */
export function addStats(db: Db, scriptId: number, at: number, delta: StatDelta): void {
  const cols = STAT_COLUMNS.filter((c) => (delta[c] ?? 0) !== 0);
  if (cols.length === 0) return;
  const rows: (number | string)[] = [];
  for (const res of RESOLUTIONS) {
    rows.push(scriptId, res, at - (at % res));
    for (const c of cols) rows.push(delta[c]!);
  }
  const one = `(${new Array(3 + cols.length).fill('?').join(', ')})`;
  db.run(
    `INSERT INTO web_script_stats (script_id, res, bucket, ${cols.join(', ')})
     VALUES ${RESOLUTIONS.map(() => one).join(', ')}
     ON CONFLICT (script_id, res, bucket) DO UPDATE SET ${cols.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
    rows,
  );
}

export type StatRow = { bucket: number } & Record<StatColumn, number>;

export function statsRange(db: Db, scriptId: number, res: number, first: number, last: number): StatRow[] {
  return db.all<StatRow>(
    'SELECT * FROM web_script_stats WHERE script_id = ? AND res = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket',
    [scriptId, res, first, last],
  );
}

export function pruneStats(db: Db, now: number): number {
  let n = 0;
  for (const res of RESOLUTIONS)
    n += db.run('DELETE FROM web_script_stats WHERE res = ? AND bucket < ?', [
      res,
      now - STATS_KEEP_MS[res]!,
    ]).changes;
  return n;
}

// ---------------------------------------------------------------- source maps

export function mapsOfScript(db: Db, scriptId: number): SourceMapRow[] {
  return db.all<SourceMapRow>(
    'SELECT id, script_id, url, release, size, sources, created_at FROM web_script_sourcemaps WHERE script_id = ? ORDER BY id',
    [scriptId],
  );
}

export function findMap(db: Db, id: number): SourceMapRow | undefined {
  return db.first<SourceMapRow>(
    'SELECT id, script_id, url, release, size, sources, created_at FROM web_script_sourcemaps WHERE id = ?',
    [id],
  );
}

export function sourceMapContent(db: Db, id: number): string | undefined {
  return db.first<{ content: string }>('SELECT content FROM web_script_sourcemaps WHERE id = ?', [id])
    ?.content;
}

/** Same url + release replaces (the old id goes). Returns the new id and the replaced one. */
export function putMap(
  db: Db,
  m: { scriptId: number; url: string; release: string; size: number; sources: string; content: string },
  now: number,
): { id: number; replaced: number | undefined } {
  const old = db.first<{ id: number }>(
    'SELECT id FROM web_script_sourcemaps WHERE script_id = ? AND url = ? AND release = ?',
    [m.scriptId, m.url, m.release],
  );
  if (old) db.run('DELETE FROM web_script_sourcemaps WHERE id = ?', [old.id]);
  const id = db.run(
    `INSERT INTO web_script_sourcemaps (script_id, url, release, size, sources, content, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [m.scriptId, m.url, m.release, m.size, m.sources, m.content, now],
  ).lastInsertRowid;
  return { id, replaced: old?.id };
}

export function deleteMap(db: Db, id: number): void {
  db.run('DELETE FROM web_script_sourcemaps WHERE id = ?', [id]);
}

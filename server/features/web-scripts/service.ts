import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { issueToken } from '../../lib/tokens';
import { channelInScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { forgetSource, recordStatus } from '../history/service';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import { statusChanged } from '../sources/messages';
import { framesOfEvent } from './stack';
import {
  addStats,
  countScriptsOfUser,
  deleteIssue,
  deleteScript,
  findIssue,
  findScript,
  type IssueRow,
  type IssueStatus,
  insertScript,
  issueHours,
  issuesOfScript,
  latestEvent,
  RES_1D,
  RES_1H,
  RES_1M,
  recipientScripts,
  rotateScriptToken,
  type ScriptRow,
  type ScriptStatus,
  scriptsOfUser,
  setIssueStatus,
  statsRange,
  unresolvedCount,
  updateScript,
  writeScriptStatus,
} from './store';

export const KIND = 'web-script';
/** §0.7. */
export const WEB_SCRIPTS_PER_USER = 100;
export const DEFAULT_PRIORITY = 6;
export const ORIGINS_MAX = 50;
export const ISSUES_LISTED_MAX = 500;
export const SERIES_MAX_BUCKETS = 1440;

// ---------------------------------------------------------------- access

/** The caller's own web script, inside an API token's scope; anything else is 404 (§0.2). */
export function ownScript(ctx: AppContext, p: Principal, id: number): ScriptRow {
  const row = findScript(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('web script');
  return row;
}

export function ownIssue(ctx: AppContext, p: Principal, scriptId: number, issueId: number) {
  const script = ownScript(ctx, p, scriptId);
  const issue = findIssue(ctx.db, issueId);
  if (!issue || issue.script_id !== script.id) throw errors.notFound('issue');
  return { script, issue };
}

// ---------------------------------------------------------------- status

/** pending until the first batch or ping; then `issues` while an issue is unresolved, else `ok`. */
export function statusOf(ctx: AppContext, row: ScriptRow): ScriptStatus {
  if (row.status === 'paused') return 'paused';
  if (row.last_check_at === null) return 'pending';
  return unresolvedCount(ctx.db, row.id) > 0 ? 'issues' : 'ok';
}

/** Inside a transaction: writes the derived status when it changed; true when it did. */
export function refreshStatus(ctx: AppContext, id: number, now: number): boolean {
  const row = findScript(ctx.db, id);
  if (!row) return false;
  const next = statusOf(ctx, row);
  if (next === row.status) return false;
  writeScriptStatus(ctx.db, id, next, now);
  recordStatus(ctx, KIND, id, next, now);
  return true;
}

// ---------------------------------------------------------------- records

export interface ScriptInput {
  appid?: number | undefined;
  name?: string | undefined;
  paused?: boolean | undefined;
  allowedOrigins?: string[] | undefined;
  priority?: number | undefined;
}

export function listScripts(ctx: AppContext, p: Principal, appid?: number): ScriptRow[] {
  return sourcesInView(ctx, p, scriptsOfUser(ctx.db, p.userId), appid);
}

export function createScript(
  ctx: AppContext,
  p: Principal,
  input: ScriptInput & { appid: number; name: string },
): { row: ScriptRow; token: string } {
  const channel = writableChannel(ctx, p, input.appid);
  const { token, digest, hint } = issueToken('T');
  const now = ctx.clock.now();
  const paused = input.paused ?? false;
  const id = ctx.db.transaction(() => {
    if (countScriptsOfUser(ctx.db, p.userId) >= WEB_SCRIPTS_PER_USER)
      throw errors.userCap(WEB_SCRIPTS_PER_USER, 'web scripts');
    const id = insertScript(
      ctx.db,
      {
        userId: p.userId,
        channelId: channel.id,
        name: input.name,
        paused,
        digest,
        hint,
        allowedOrigins: input.allowedOrigins ?? ['*'],
        priority: input.priority ?? DEFAULT_PRIORITY,
      },
      now,
    );
    recordStatus(ctx, KIND, id, paused ? 'paused' : 'pending', now);
    return id;
  });
  statusChanged(ctx, channel.id);
  return { row: findScript(ctx.db, id)!, token };
}

export function changeScript(ctx: AppContext, p: Principal, id: number, input: ScriptInput): ScriptRow {
  const row = ownScript(ctx, p, id);
  let channelId = row.channel_id;
  if (input.appid !== undefined && input.appid !== row.channel_id)
    channelId = writableChannel(ctx, p, input.appid).id;
  // Resuming asks what creating asks: a channel the caller may still write to (§0.3).
  if (input.paused === false && row.status === 'paused') writableChannel(ctx, p, channelId);
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    updateScript(ctx.db, id, {
      channelId,
      name: input.name ?? row.name,
      allowedOrigins: input.allowedOrigins ? JSON.stringify(input.allowedOrigins) : row.allowed_origins,
      priority: input.priority ?? row.priority,
    });
    if (input.paused === true && row.status !== 'paused') {
      writeScriptStatus(ctx.db, id, 'paused', now);
      recordStatus(ctx, KIND, id, 'paused', now);
    } else if (input.paused === false && row.status === 'paused') {
      const next = statusOf(ctx, { ...row, status: 'pending' });
      writeScriptStatus(ctx.db, id, next, now);
      recordStatus(ctx, KIND, id, next, now);
    }
  });
  statusChanged(ctx, row.channel_id);
  if (channelId !== row.channel_id) statusChanged(ctx, channelId);
  return findScript(ctx.db, id)!;
}

export function removeScript(ctx: AppContext, p: Principal, id: number): void {
  const row = ownScript(ctx, p, id);
  ctx.db.transaction(() => {
    deleteScript(ctx.db, id);
    forgetSource(ctx, KIND, id);
  });
  statusChanged(ctx, row.channel_id);
}

export function rotateToken(ctx: AppContext, p: Principal, id: number): { row: ScriptRow; token: string } {
  ownScript(ctx, p, id);
  const { token, digest, hint } = issueToken('T');
  ctx.db.transaction(() => rotateScriptToken(ctx.db, id, digest, hint));
  return { row: findScript(ctx.db, id)!, token };
}

/** A recipient who lost `send` on the channel: their web scripts there are paused (§0.3). */
export function pauseLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  const lost = recipientScripts(ctx.db, appid, channel.user_id).filter((row) => {
    const v = receivedChannel(ctx, row.user_id, appid);
    return !v || !maySend(v);
  });
  if (lost.length === 0) return;
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    for (const row of lost) {
      writeScriptStatus(ctx.db, row.id, 'paused', now);
      recordStatus(ctx, KIND, row.id, 'paused', now);
    }
  });
  statusChanged(ctx, appid);
}

// ---------------------------------------------------------------- issues (§9.2)

export function presentIssue(i: IssueRow) {
  return {
    id: i.id,
    scriptId: i.script_id,
    title: i.title,
    culprit: i.culprit,
    type: i.type,
    count: i.count,
    firstSeen: rfc3339(i.first_seen),
    lastSeen: rfc3339(i.last_seen),
    status: i.status,
    lastUrl: i.last_url,
    lastRelease: i.last_release,
  };
}

/** Hours of a list row's sparkline: the 24 UTC hours ending with the one that holds now. */
export const SPARKLINE_HOURS = 24;

/**
 * The issues list (§9.2) with each row's `sparkline` (an extension): events an hour over the last 24 hours,
 * oldest first, read for the whole page in one query.
 */
export function listIssues(ctx: AppContext, p: Principal, id: number, status: IssueStatus | 'all') {
  const script = ownScript(ctx, p, id);
  const rows = issuesOfScript(ctx.db, script.id, status, ISSUES_LISTED_MAX);
  const last = Math.floor(ctx.clock.now() / RES_1H) * RES_1H;
  const first = last - (SPARKLINE_HOURS - 1) * RES_1H;
  const spark = new Map<number, number[]>(rows.map((r) => [r.id, new Array(SPARKLINE_HOURS).fill(0)]));
  for (const h of issueHours(
    ctx.db,
    rows.map((r) => r.id),
    first,
    last,
  ))
    spark.get(h.issue_id)![(h.bucket - first) / RES_1H] = h.count;
  return rows.map((r) => ({ ...presentIssue(r), sparkline: spark.get(r.id)! }));
}

export function issueCount(ctx: AppContext, p: Principal, id: number) {
  return { unresolved: unresolvedCount(ctx.db, ownScript(ctx, p, id).id) };
}

export function markIssue(ctx: AppContext, p: Principal, id: number, iid: number, status: IssueStatus) {
  const { script, issue } = ownIssue(ctx, p, id, iid);
  const changed = ctx.db.transaction(() => {
    setIssueStatus(ctx.db, issue.id, status);
    return refreshStatus(ctx, script.id, ctx.clock.now());
  });
  if (changed) statusChanged(ctx, script.channel_id);
  return presentIssue(findIssue(ctx.db, issue.id)!);
}

export function removeIssue(ctx: AppContext, p: Principal, id: number, iid: number): void {
  const { script, issue } = ownIssue(ctx, p, id, iid);
  const changed = ctx.db.transaction(() => {
    deleteIssue(ctx.db, issue.id);
    return refreshStatus(ctx, script.id, ctx.clock.now());
  });
  if (changed) statusChanged(ctx, script.channel_id);
}

export interface Breadcrumb {
  at: string;
  type: string;
  message: string;
}

/** The latest event's breadcrumbs (§9.2) and, as an extension, its whole stack (stack.ts). */
export async function breadcrumbs(ctx: AppContext, p: Principal, id: number, iid: number) {
  const { script, issue } = ownIssue(ctx, p, id, iid);
  const e = latestEvent(ctx.db, issue.id);
  return {
    eventAt: rfc3339OrNull(e?.at),
    breadcrumbs: e ? (JSON.parse(e.breadcrumbs) as Breadcrumb[]) : [],
    frames: await framesOfEvent(ctx, script.id, e),
  };
}

// ---------------------------------------------------------------- series

const BUCKETS: Readonly<Record<string, number>> = { '1m': RES_1M, '1h': RES_1H, '1d': RES_1D };

/** `from`/`to` of a query: RFC 3339 or unix seconds (as §8.2). */
function queryTime(v: string | undefined, field: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  let ms: number;
  if (/^\d{1,12}(?:\.\d+)?$/.test(v)) ms = Math.round(Number(v) * 1000);
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i.test(v))
    ms = Date.parse(v);
  else ms = Number.NaN;
  if (!Number.isFinite(ms)) throw errors.badRequest(`${field}: must be an RFC 3339 time or unix seconds`);
  return ms;
}

export interface RangeQuery {
  bucket?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** Buckets of a series query: default 1h over the last 24 h; every bucket present. */
function range(ctx: AppContext, q: RangeQuery) {
  const name = q.bucket ?? '1h';
  const size = BUCKETS[name];
  if (size === undefined) throw errors.badRequest('bucket: must be 1m, 1h or 1d');
  const to = queryTime(q.to, 'to') ?? ctx.clock.now();
  const fromGiven = queryTime(q.from, 'from');
  if (fromGiven !== undefined && fromGiven > to) throw errors.badRequest('from: must not be after to');
  const from = fromGiven ?? to - RES_1D;
  const last = Math.floor(to / size) * size;
  const first = Math.min(
    last,
    fromGiven === undefined ? Math.floor(from / size) * size + size : Math.floor(from / size) * size,
  );
  if ((last - first) / size + 1 > SERIES_MAX_BUCKETS)
    throw errors.badRequest(`from: at most ${SERIES_MAX_BUCKETS} buckets`);
  return { name, size, from, to, first, last };
}

function zeroFilled<T>(
  ctx: AppContext,
  scriptId: number,
  q: RangeQuery,
  pick: (r: Record<string, number> | undefined) => T,
) {
  const r = range(ctx, q);
  const rows = new Map(statsRange(ctx.db, scriptId, r.size, r.first, r.last).map((s) => [s.bucket, s]));
  const points: ({ at: string } & T)[] = [];
  for (let b = r.first; b <= r.last; b += r.size) points.push({ at: rfc3339(b), ...pick(rows.get(b)) });
  return { bucket: r.name, from: rfc3339(r.first), to: rfc3339(r.to), points };
}

export function series(ctx: AppContext, p: Principal, id: number, q: RangeQuery) {
  const script = ownScript(ctx, p, id);
  return zeroFilled(ctx, script.id, q, (s) => ({
    loads: s?.loads ?? 0,
    pings: s?.pings ?? 0,
    batches: s?.batches ?? 0,
    events: s?.events ?? 0,
  }));
}

export function errorSeries(ctx: AppContext, p: Principal, id: number, q: RangeQuery) {
  const script = ownScript(ctx, p, id);
  return zeroFilled(ctx, script.id, q, (s) => ({
    errors: s?.errors ?? 0,
    rejections: s?.rejections ?? 0,
    messages: s?.messages ?? 0,
    newIssues: s?.new_issues ?? 0,
  }));
}

/** Flush reasons of batches and pings in [from, to] (default the last 7 days), from the hourly counters. */
export function flushStats(ctx: AppContext, p: Principal, id: number, q: RangeQuery) {
  const script = ownScript(ctx, p, id);
  const to = queryTime(q.to, 'to') ?? ctx.clock.now();
  const from = queryTime(q.from, 'from') ?? to - 7 * RES_1D;
  if (from > to) throw errors.badRequest('from: must not be after to');
  const reasons = { interval: 0, size: 0, unload: 0, error: 0, ping: 0 };
  for (const s of statsRange(ctx.db, script.id, RES_1H, Math.floor(from / RES_1H) * RES_1H, to)) {
    reasons.interval += s.r_interval;
    reasons.size += s.r_size;
    reasons.unload += s.r_unload;
    reasons.error += s.r_error;
    reasons.ping += s.r_ping;
  }
  const total = reasons.interval + reasons.size + reasons.unload + reasons.error + reasons.ping;
  return { from: rfc3339(from), to: rfc3339(to), total, reasons };
}

export { addStats };

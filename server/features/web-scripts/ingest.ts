import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { RATE_WINDOW_MS } from '../../lib/limits';
import { tokenDigest, tokenPrefix } from '../../lib/tokens';
import { sendSourceMessage, statusChanged } from '../sources/messages';
import { culpritOf, type Frame, fingerprint, parseStack, titleOf } from './frames';
import { KIND, refreshStatus } from './service';
import { SNIPPET_SOURCE } from './snippet/source';
import { resolveFrames } from './sourcemaps';
import {
  addIssueHours,
  addStats,
  bumpIssue,
  EVENTS_PER_ISSUE,
  findScript,
  findScriptByDigest,
  type IssueRow,
  type IssueStatus,
  insertEvents,
  insertIssue,
  issueByFingerprint,
  mapsOfScript,
  RES_1H,
  type ScriptRow,
  type StatDelta,
  touchScript,
  trimEvents,
} from './store';

/** Public endpoints of a web script (§9.1): the snippet, batches of events and pings. */

export const REQUESTS_PER_MINUTE = 600;
export const EVENTS_PER_BATCH = 100;
export const BATCH_MAX_BYTES = 256 * 1024;
export const MESSAGE_MAX_CHARS = 2000;
export const STACK_MAX_BYTES = 16 * 1024;
export const BREADCRUMBS_MAX = 50;
export const BREADCRUMB_MAX_CHARS = 1000;
/** Events an issue may hold beyond its 100 before they are trimmed. */
export const TRIM_STEP = 25;
export const FLUSH_REASONS = ['interval', 'size', 'unload', 'error', 'ping'] as const;
export type FlushReason = (typeof FLUSH_REASONS)[number];
const EVENT_TYPES = ['error', 'rejection', 'message'] as const;
const CRUMB_TYPES = new Set(['click', 'navigation', 'fetch', 'xhr', 'console', 'custom']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

interface State {
  rates: Map<number, { start: number; count: number }>;
  sweptAt: number;
}
const states = new WeakMap<AppContext, State>();

function rateLimit(ctx: AppContext, scriptId: number, now: number): void {
  let s = states.get(ctx);
  if (!s) {
    s = { rates: new Map(), sweptAt: 0 };
    states.set(ctx, s);
  }
  if (now - s.sweptAt >= RATE_WINDOW_MS) {
    for (const [k, v] of s.rates) if (now - v.start >= RATE_WINDOW_MS) s.rates.delete(k);
    s.sweptAt = now;
  }
  let w = s.rates.get(scriptId);
  if (!w || now - w.start >= RATE_WINDOW_MS) {
    w = { start: now, count: 0 };
    s.rates.set(scriptId, w);
  }
  if (w.count >= REQUESTS_PER_MINUTE)
    throw errors.retryLater('too many requests for this web script', (w.start + RATE_WINDOW_MS - now) / 1000);
  w.count++;
}

/** The script of a T token in the URL, or 404 (no other kind of token is looked up here). */
export function scriptOfToken(ctx: AppContext, token: string): ScriptRow {
  const row = tokenPrefix(token) === 'T' ? findScriptByDigest(ctx.db, tokenDigest(token)) : undefined;
  if (!row) throw errors.notFound('web script');
  return row;
}

/** Whether a browser origin may use the script (§9.1): no Origin header, `*`, or listed exactly. */
export function originAllowed(row: ScriptRow, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  const list = JSON.parse(row.allowed_origins) as string[];
  return list.includes('*') || list.includes(origin.toLowerCase());
}

/** Token lookup, origin and rate limit: what every public request passes first. */
export function admit(ctx: AppContext, token: string, origin: string | undefined): ScriptRow {
  const row = scriptOfToken(ctx, token);
  if (!originAllowed(row, origin)) throw errors.originNotAllowed();
  rateLimit(ctx, row.id, ctx.clock.now());
  return row;
}

/** The snippet with this token's endpoint baked in; counts one load. */
export function loadSnippet(ctx: AppContext, row: ScriptRow, token: string): string {
  if (row.status !== 'paused') {
    const now = ctx.clock.now();
    ctx.db.relaxed(() => addStats(ctx.db, row.id, now, { loads: 1 }));
  }
  const endpoint = `${ctx.publicUrl()}/script/${token}`;
  return SNIPPET_SOURCE.replace('__BELFRY_ENDPOINT__', endpoint.replace(/['\\\n\r<]/g, ''));
}

// ---------------------------------------------------------------- batches

interface Crumb {
  at: string;
  type: string;
  message: string;
}

export interface ParsedEvent {
  type: (typeof EVENT_TYPES)[number];
  message: string;
  stack: string | null;
  url: string | null;
  source: string | null;
  line: number | null;
  col: number | null;
  userAgent: string | null;
  at: number;
  release: string | null;
  breadcrumbs: Crumb[];
}

function optString(v: unknown, max: number): string | null | false {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max) return false;
  return v;
}

function optPos(v: unknown): number | null | false {
  if (v === undefined || v === null) return null;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 10_000_000 ? v : false;
}

function timeOf(v: unknown, now: number): number | undefined {
  if (v === undefined || v === null) return now;
  let ms: number;
  if (typeof v === 'number' && Number.isFinite(v)) ms = Math.round(v);
  else if (typeof v === 'string' && RFC3339.test(v)) ms = Date.parse(v);
  else return undefined;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, now);
}

function crumbsOf(v: unknown, now: number): Crumb[] | false {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > BREADCRUMBS_MAX) return false;
  const out: Crumb[] = [];
  for (const c of v) {
    if (typeof c !== 'object' || c === null) return false;
    const { at, type, message } = c as Record<string, unknown>;
    if (typeof type !== 'string' || !CRUMB_TYPES.has(type)) return false;
    if (typeof message !== 'string' || message.length > BREADCRUMB_MAX_CHARS) return false;
    const t = timeOf(at, now);
    if (t === undefined) return false;
    out.push({ at: new Date(t).toISOString(), type, message });
  }
  return out;
}

/** One event of a batch, or null when it is invalid (dropped, not counted: §9.1). */
export function parseEvent(v: unknown, batchRelease: string | null, now: number): ParsedEvent | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const e = v as Record<string, unknown>;
  if (typeof e.type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(e.type)) return null;
  if (typeof e.message !== 'string' || e.message.length > MESSAGE_MAX_CHARS) return null;
  const stack = optString(e.stack, STACK_MAX_BYTES);
  if (stack !== null && stack !== false && Buffer.byteLength(stack) > STACK_MAX_BYTES) return null;
  const url = optString(e.url, 2000);
  const source = optString(e.source, 2000);
  const userAgent = optString(e.userAgent, 1000);
  const release = optString(e.release, 200);
  const line = optPos(e.line);
  const col = optPos(e.col);
  const at = timeOf(e.at, now);
  const breadcrumbs = crumbsOf(e.breadcrumbs, now);
  if (
    stack === false ||
    url === false ||
    source === false ||
    userAgent === false ||
    release === false ||
    line === false ||
    col === false ||
    at === undefined ||
    breadcrumbs === false
  )
    return null;
  return {
    type: e.type as ParsedEvent['type'],
    message: e.message,
    stack,
    url,
    source,
    line,
    col,
    userAgent,
    at,
    release: release ?? batchRelease,
    breadcrumbs,
  };
}

export interface Batch {
  events: ParsedEvent[];
  reason: FlushReason;
  release: string | null;
}

/** The body of a POST (§9.1): `{events, flushReason, release?}`; 400 naming the field otherwise. */
export function parseBatch(body: unknown, now: number): Batch {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw errors.badRequest('body: must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.flushReason !== 'string' || !(FLUSH_REASONS as readonly string[]).includes(b.flushReason))
    throw errors.badRequest(`flushReason: must be one of ${FLUSH_REASONS.join(', ')}`);
  const release = optString(b.release, 200);
  if (release === false) throw errors.badRequest('release: must be a string of at most 200 characters');
  const raw = b.events ?? [];
  if (!Array.isArray(raw)) throw errors.badRequest('events: must be an array');
  if (raw.length > EVENTS_PER_BATCH) throw errors.badRequest(`events: at most ${EVENTS_PER_BATCH} a request`);
  const events: ParsedEvent[] = [];
  for (const v of raw) {
    const e = parseEvent(v, release, now);
    if (e) events.push(e);
  }
  return { events, reason: b.flushReason as FlushReason, release };
}

/** Frames of an event: its stack, or the position `error` events carry without one. */
export function framesOf(e: ParsedEvent): Frame[] {
  const frames = parseStack(e.stack ?? undefined);
  if (frames.length === 0 && e.source && e.line)
    return [{ fn: undefined, file: e.source, line: e.line, col: e.col ?? 1 }];
  return frames;
}

export interface IngestAnswer {
  accepted: number;
  paused?: true;
}

/** A ping: a bodiless POST. */
export function ping(ctx: AppContext, row: ScriptRow): IngestAnswer {
  if (row.status === 'paused') return { accepted: 0, paused: true };
  const now = ctx.clock.now();
  const changed = ctx.db.transaction(() => {
    addStats(ctx.db, row.id, now, { pings: 1, r_ping: 1 });
    touchScript(ctx.db, row.id, now);
    return refreshStatus(ctx, row.id, now);
  });
  if (changed) statusChanged(ctx, row.channel_id);
  return { accepted: 0 };
}

interface Grouped {
  fp: string;
  e: ParsedEvent;
  title: string;
  culprit: string;
}

/** A batch: frames resolved through source maps, then grouped, stored and announced in one transaction. */
export async function ingestBatch(ctx: AppContext, row: ScriptRow, body: unknown): Promise<IngestAnswer> {
  if (row.status === 'paused') return { accepted: 0, paused: true };
  const batch = parseBatch(body, ctx.clock.now());
  const maps = batch.events.length > 0 ? mapsOfScript(ctx.db, row.id) : [];
  const grouped: Grouped[] = [];
  for (const e of batch.events) {
    const frames = await resolveFrames(ctx, row.id, framesOf(e), e.release ?? undefined, maps);
    grouped.push({
      fp: fingerprint(e.type, e.message, frames[0]),
      e,
      title: titleOf(e.message),
      culprit: culpritOf(frames[0]),
    });
  }
  const now = ctx.clock.now();
  const out = ctx.db.transaction(() => {
    const script = findScript(ctx.db, row.id);
    if (!script || script.status === 'paused') return null;
    return store(ctx, script, batch, grouped, now);
  });
  if (out === null) return { accepted: 0, paused: true };
  if (out) statusChanged(ctx, row.channel_id);
  return { accepted: batch.events.length };
}

function store(ctx: AppContext, script: ScriptRow, batch: Batch, grouped: Grouped[], now: number): boolean {
  const delta: StatDelta = { batches: 1, events: grouped.length, [`r_${batch.reason}`]: 1 };
  const src = { kind: KIND, id: script.id, name: script.name, channelId: script.channel_id };
  const touched = new Map<
    number,
    { issue: IssueRow; status: IssueStatus; count: number; last: ParsedEvent }
  >();
  const announce: { issue: IssueRow; event: 'new' | 'regression'; e: ParsedEvent }[] = [];
  const flat: (string | number | null)[] = [];
  const byFp = new Map<string, number>();
  const found = new Map<number, IssueRow>();
  /** `issueId:hourStart` → events (the sparklines). */
  const hours = new Map<string, number>();
  for (const g of grouped) {
    const e = g.e;
    if (e.type === 'error') delta.errors = (delta.errors ?? 0) + 1;
    else if (e.type === 'rejection') delta.rejections = (delta.rejections ?? 0) + 1;
    else delta.messages = (delta.messages ?? 0) + 1;
    let id = byFp.get(g.fp);
    if (id === undefined) {
      const row = issueByFingerprint(ctx.db, script.id, g.fp);
      if (row) {
        id = row.id;
        found.set(id, row);
      } else {
        id = insertIssue(ctx.db, {
          scriptId: script.id,
          fingerprint: g.fp,
          title: g.title,
          culprit: g.culprit,
          type: e.type,
          at: e.at,
        });
        delta.new_issues = (delta.new_issues ?? 0) + 1;
        announce.push({ issue: { id, title: g.title, culprit: g.culprit } as IssueRow, event: 'new', e });
      }
      byFp.set(g.fp, id);
    }
    let t = touched.get(id);
    if (!t) {
      const issue =
        found.get(id) ??
        ({ id, title: g.title, culprit: g.culprit, count: 0, status: 'unresolved' } as IssueRow);
      let status = issue.status;
      if (status === 'resolved') {
        status = 'unresolved';
        announce.push({ issue, event: 'regression', e });
      }
      t = { issue, status, count: 0, last: e };
      touched.set(id, t);
    }
    t.count++;
    if (e.at >= t.last.at) t.last = e;
    const hour = `${id}:${e.at - (e.at % RES_1H)}`;
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
    flat.push(id, e.at, e.message, e.stack, e.url, e.release, e.userAgent, JSON.stringify(e.breadcrumbs));
  }
  for (let i = 0; i < flat.length; i += 8 * 50)
    insertEvents(ctx.db, flat.slice(i, i + 8 * 50), Math.min(50, (flat.length - i) / 8));
  for (const [id, t] of touched) {
    bumpIssue(ctx.db, id, {
      count: t.count,
      lastSeen: t.last.at,
      url: t.last.url,
      release: t.last.release,
      status: t.status,
    });
    // The newest 100 are kept; trimming runs each time the count passes a multiple of TRIM_STEP, so
    // at most 100 + TRIM_STEP - 1 rows exist between two trims (readers look at the newest only).
    const before = t.issue.count;
    if (
      before + t.count > EVENTS_PER_ISSUE &&
      Math.floor(before / TRIM_STEP) !== Math.floor((before + t.count) / TRIM_STEP)
    )
      trimEvents(ctx.db, id);
  }
  addIssueHours(
    ctx.db,
    [...hours].map(([k, n]) => {
      const [issue, hour] = k.split(':');
      return [Number(issue), Number(hour), n] as const;
    }),
  );
  addStats(ctx.db, script.id, now, delta);
  touchScript(ctx.db, script.id, now);
  const changed = refreshStatus(ctx, script.id, now);
  for (const a of announce) {
    sendSourceMessage(ctx, src, a.event, {
      title: `${script.name}: ${a.event === 'new' ? 'new issue' : 'issue regressed'}`,
      message: `${a.issue.title}\n${a.issue.culprit}\n${a.e.url ?? ''}`,
      priority: script.priority,
      date: a.e.at,
      sourceFields: { issueId: a.issue.id },
    });
  }
  return changed;
}

import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { BusMessage } from '../../lib/bus';
import { rfc3339 } from '../../lib/clock';
import { HEARTBEAT_PINGS_PER_MINUTE, HEARTBEATS_PER_USER, RATE_WINDOW_MS } from '../../lib/limits';
import { issueToken, tokenDigest, tokenPrefix } from '../../lib/tokens';
import { channelInScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { forgetSource, recordCheck, recordGap, recordStatus } from '../history/service';
import { coveredNow, isCovered } from '../maintenance/coverage';
import { type SendInput, sendMessages } from '../messages/service';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import {
  formatDuration,
  RECOVERY_PRIORITY,
  type SourceRef,
  sendSourceMessage,
  sourceExtras,
  statusChanged,
} from '../sources/messages';
import { checkSchedule, isTimeZone, nextAfter } from './schedule';
import {
  activeHeartbeats,
  countHeartbeatsOfUser,
  deleteHeartbeat,
  dueHeartbeats,
  findHeartbeat,
  findHeartbeatByDigest,
  type HeartbeatRow,
  type HeartbeatSettings,
  type HeartbeatState,
  type HeartbeatStatus,
  heartbeatsDueBy,
  heartbeatsInMaintenance,
  insertHeartbeat,
  listHeartbeatsOfChannels,
  listHeartbeatsOfUser,
  nextDueAt,
  recipientHeartbeats,
  rotateHeartbeatToken,
  updateSettings,
  writeMaintenance,
  writeState,
} from './store';

export const KIND = 'heartbeat';
/** A success after a `/start` reports its duration when the start is at most this old (§1.1). */
const MAX_RUN_MS = 72 * 3_600_000;
/**
 * Due rows read per query, and the CPU time one transaction of them may take: the loop yields to the
 * event loop between slices, so 10,000 deadlines in a minute never stall requests for long.
 */
const DUE_BATCH = 100;
const DUE_SLICE_MS = 8;

export type PingKind = 'success' | 'start' | 'fail' | 'log';
export type HeartbeatEvent = 'down' | 'fail' | 'recovery' | 'test-alert' | 'test-recovery';

// ---------------------------------------------------------------- access

/** The caller's own heartbeat, inside an API token's scope; anything else is 404 (§0.2). */
function ownHeartbeat(ctx: AppContext, p: Principal, id: number): HeartbeatRow {
  const row = findHeartbeat(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('heartbeat');
  return row;
}

export function listHeartbeats(ctx: AppContext, p: Principal, appid?: number): HeartbeatRow[] {
  return sourcesInView(ctx, p, listHeartbeatsOfUser(ctx.db, p.userId), appid);
}

export function getHeartbeat(ctx: AppContext, p: Principal, id: number): HeartbeatRow {
  return ownHeartbeat(ctx, p, id);
}

// ---------------------------------------------------------------- settings

export interface HeartbeatInput {
  appid?: number;
  name?: string;
  paused?: boolean;
  intervalSec?: number | null;
  schedule?: string | null;
  timezone?: string;
  graceSec?: number;
  alertMessage?: string;
  manualResume?: boolean;
  priority?: number;
}

function settingsOf(row: HeartbeatRow): HeartbeatSettings {
  return {
    channelId: row.channel_id,
    name: row.name,
    intervalSec: row.interval_sec,
    schedule: row.schedule,
    timezone: row.timezone,
    graceSec: row.grace_sec,
    alertMessage: row.alert_message,
    manualResume: row.manual_resume === 1,
    priority: row.priority,
  };
}

/** Applies a partial body to settings (§0.1 update rules, §1.1 interval/schedule exclusivity). */
function merge(ctx: AppContext, base: HeartbeatSettings, input: HeartbeatInput): HeartbeatSettings {
  if (
    input.intervalSec !== undefined &&
    input.intervalSec !== null &&
    input.schedule !== undefined &&
    input.schedule !== null
  )
    throw errors.badRequest('schedule: cannot be combined with intervalSec');
  const next: HeartbeatSettings = { ...base };
  if (input.name !== undefined) next.name = input.name;
  if (input.timezone !== undefined) next.timezone = input.timezone;
  if (input.graceSec !== undefined) next.graceSec = input.graceSec;
  if (input.alertMessage !== undefined) next.alertMessage = input.alertMessage;
  if (input.manualResume !== undefined) next.manualResume = input.manualResume;
  if (input.priority !== undefined) next.priority = input.priority;
  if (input.schedule !== undefined && input.schedule !== null) {
    next.schedule = input.schedule;
    next.intervalSec = null;
  } else if (input.intervalSec !== undefined && input.intervalSec !== null) {
    next.intervalSec = input.intervalSec;
    next.schedule = null;
  } else {
    if (input.schedule === null) next.schedule = null;
    if (input.intervalSec === null) next.intervalSec = null;
  }
  // Neither left: the default period.
  if (next.schedule === null && next.intervalSec === null) next.intervalSec = 300;
  const min = ctx.config.minIntervalSec;
  if (next.intervalSec !== null && next.intervalSec < min)
    throw errors.badRequest(`intervalSec: must be at least ${min}`);
  if (!isTimeZone(next.timezone)) throw errors.badRequest('timezone: unknown time zone');
  if (next.schedule !== null) checkSchedule(next.schedule, next.timezone, min, ctx.clock.now());
  return next;
}

const DEFAULTS = {
  intervalSec: 300,
  schedule: null,
  timezone: 'UTC',
  graceSec: 60,
  alertMessage: '',
  manualResume: false,
  priority: 8,
};

export function createHeartbeat(
  ctx: AppContext,
  p: Principal,
  input: HeartbeatInput & { appid: number; name: string },
): { row: HeartbeatRow; token: string } {
  const channel = writableChannel(ctx, p, input.appid);
  const settings = merge(ctx, { ...DEFAULTS, channelId: channel.id, name: input.name }, input);
  const { token, digest, hint } = issueToken('H');
  const now = ctx.clock.now();
  const paused = input.paused ?? false;
  const id = ctx.db.transaction(() => {
    if (countHeartbeatsOfUser(ctx.db, p.userId) >= HEARTBEATS_PER_USER)
      throw errors.userCap(HEARTBEATS_PER_USER, 'heartbeats');
    const id = insertHeartbeat(ctx.db, p.userId, settings, paused, digest, hint, now);
    recordStatus(ctx, KIND, id, paused ? 'paused' : 'new', now);
    return id;
  });
  coverIfActive(ctx, id);
  statusChanged(ctx, channel.id);
  return { row: findHeartbeat(ctx.db, id)!, token };
}

export function updateHeartbeat(
  ctx: AppContext,
  p: Principal,
  id: number,
  input: HeartbeatInput,
): HeartbeatRow {
  const row = ownHeartbeat(ctx, p, id);
  const base = settingsOf(row);
  if (input.appid !== undefined && input.appid !== row.channel_id)
    base.channelId = writableChannel(ctx, p, input.appid).id;
  const next = merge(ctx, base, input);
  // Resuming through PUT asks what POST /resume asks: a channel the caller may still write to.
  if (input.paused === false && row.status === 'paused') writableChannel(ctx, p, next.channelId);
  const timingChanged =
    next.intervalSec !== row.interval_sec ||
    next.schedule !== row.schedule ||
    next.timezone !== row.timezone ||
    next.graceSec !== row.grace_sec;
  const now = ctx.clock.now();
  const effects: Effects = { events: [], channels: new Set([row.channel_id, next.channelId]) };
  ctx.db.transaction(() => {
    updateSettings(ctx.db, id, next);
    let current = findHeartbeat(ctx.db, id)!;
    if (input.paused === true) pauseRow(ctx, current, now);
    else if (input.paused === false && current.status === 'paused') resumeRow(ctx, current, now);
    current = findHeartbeat(ctx.db, id)!;
    if (timingChanged && (current.status === 'up' || current.status === 'late'))
      recompute(ctx, current, now, effects);
  });
  finish(ctx, effects);
  coverIfActive(ctx, id);
  return poked(ctx, id);
}

export function removeHeartbeat(ctx: AppContext, p: Principal, id: number): void {
  const row = ownHeartbeat(ctx, p, id);
  ctx.db.transaction(() => {
    deleteHeartbeat(ctx.db, id);
    forgetSource(ctx, KIND, id);
  });
  statusChanged(ctx, row.channel_id);
}

export function rotateToken(ctx: AppContext, p: Principal, id: number): { row: HeartbeatRow; token: string } {
  ownHeartbeat(ctx, p, id);
  const { token, digest, hint } = issueToken('H');
  ctx.db.transaction(() => rotateHeartbeatToken(ctx.db, id, digest, hint));
  return { row: findHeartbeat(ctx.db, id)!, token };
}

export function pauseHeartbeat(ctx: AppContext, p: Principal, id: number): HeartbeatRow {
  const row = ownHeartbeat(ctx, p, id);
  if (row.status !== 'paused') {
    ctx.db.transaction(() => pauseRow(ctx, row, ctx.clock.now()));
    statusChanged(ctx, row.channel_id);
  }
  return findHeartbeat(ctx.db, id)!;
}

export function resumeHeartbeat(ctx: AppContext, p: Principal, id: number): HeartbeatRow {
  const row = ownHeartbeat(ctx, p, id);
  if (row.status === 'paused') {
    // A recipient who lost `send` on the channel resumes only after moving it (§0.3).
    writableChannel(ctx, p, row.channel_id);
    ctx.db.transaction(() => resumeRow(ctx, row, ctx.clock.now()));
    coverIfActive(ctx, id);
    statusChanged(ctx, row.channel_id);
  }
  return poked(ctx, id);
}

// ---------------------------------------------------------------- the state machine (§1.4)

function stateOf(row: HeartbeatRow): HeartbeatState {
  return {
    status: row.status,
    status_since: row.status_since,
    last_ping_at: row.last_ping_at,
    last_success_at: row.last_success_at,
    expected_at: row.expected_at,
    deadline_at: row.deadline_at,
    due_at: row.due_at,
    last_fail_reason: row.last_fail_reason,
    started_at: row.started_at,
    last_duration_ms: row.last_duration_ms,
  };
}

/** expectedAt/deadlineAt from `base` and the next due event (expectedAt when grace > 0). */
function scheduleFrom(row: HeartbeatRow, s: HeartbeatState, base: number): void {
  const expected = nextAfter(
    { intervalSec: row.interval_sec, schedule: row.schedule, timezone: row.timezone },
    base,
  );
  if (expected === null) {
    // A schedule that never fires again: nothing is ever due.
    clearDeadlines(s);
    return;
  }
  s.expected_at = expected;
  s.deadline_at = expected + row.grace_sec * 1000;
  s.due_at = row.grace_sec > 0 ? s.expected_at : s.deadline_at;
}

/** `up` from `base` (a success ping, a resume, the end of a gap). */
function upFrom(row: HeartbeatRow, s: HeartbeatState, base: number, now: number): void {
  scheduleFrom(row, s, base);
  setStatus(s, 'up', now);
}

function clearDeadlines(s: HeartbeatState): void {
  s.expected_at = null;
  s.deadline_at = null;
  s.due_at = null;
}

function setStatus(s: HeartbeatState, status: HeartbeatStatus, at: number): void {
  if (s.status !== status) {
    s.status = status;
    s.status_since = at;
  }
}

/** What a change leaves to do after commit: live frames and channel summaries. */
interface Effects {
  events: { appid: number; kind: string; data: Record<string, unknown>; at: number }[];
  channels: Set<number>;
}

/** Writes the new state, records a status interval when it changed. Inside the caller's transaction. */
function commitState(ctx: AppContext, row: HeartbeatRow, s: HeartbeatState, effects?: Effects): void {
  writeState(ctx.db, row.id, s);
  if (s.status !== row.status) {
    recordStatus(ctx, KIND, row.id, s.status, s.status_since);
    effects?.channels.add(row.channel_id);
  }
}

function pauseRow(ctx: AppContext, row: HeartbeatRow, now: number): void {
  if (row.status === 'paused') return;
  const s = stateOf(row);
  clearDeadlines(s);
  setStatus(s, 'paused', now);
  commitState(ctx, row, s);
}

function resumeRow(ctx: AppContext, row: HeartbeatRow, now: number): void {
  const s = stateOf(row);
  if (row.last_ping_at === null) {
    clearDeadlines(s);
    setStatus(s, 'new', now);
  } else upFrom(row, s, now, now);
  commitState(ctx, row, s);
}

/** After a change of period or grace: recompute from the last success; a passed deadline is down now. */
function recompute(ctx: AppContext, row: HeartbeatRow, now: number, effects: Effects): void {
  const s = stateOf(row);
  scheduleFrom(row, s, row.last_success_at ?? now);
  if (s.deadline_at !== null && s.deadline_at <= now) {
    goDown(ctx, row, s, now, effects);
    return;
  }
  const late = row.grace_sec > 0 && s.expected_at !== null && s.expected_at <= now;
  setStatus(s, late ? 'late' : 'up', now);
  if (late) s.due_at = s.deadline_at;
  commitState(ctx, row, s, effects);
}

/** up/late → down at `at` with the down message dated `at`. */
function goDown(ctx: AppContext, row: HeartbeatRow, s: HeartbeatState, at: number, effects: Effects): void {
  const text = downText(row, s.expected_at);
  clearDeadlines(s);
  setStatus(s, 'down', at);
  commitState(ctx, row, s, effects);
  const messageId = alert(ctx, row, 'down', {
    title: `${row.name} is down`,
    message: text,
    priority: row.priority,
    date: at,
  });
  effects.events.push(alertFrame(row, 'down', 'down', messageId, at));
}

function downText(row: HeartbeatRow, expectedAt: number | null): string {
  if (row.alert_message !== '') return row.alert_message;
  const last = row.last_success_at === null ? 'never' : rfc3339(row.last_success_at);
  const expected = expectedAt === null ? 'never' : rfc3339(expectedAt);
  return `No ping since ${last}; expected by ${expected} (grace ${row.grace_sec} s).`;
}

function failText(row: HeartbeatRow, reason: string): string {
  return row.alert_message === '' ? reason : `${row.alert_message}\n\nReason: ${reason}`;
}

function recoveryText(downMs: number): string {
  return `Ping received after ${formatDuration(downMs)} down.`;
}

function ref(row: HeartbeatRow): SourceRef {
  return { kind: KIND, id: row.id, name: row.name, channelId: row.channel_id };
}

function extrasOf(row: HeartbeatRow, event: HeartbeatEvent): Record<string, unknown> {
  return sourceExtras(ref(row), event);
}

/** A source message inside the caller's transaction; null when the daily quota is spent (§0.4). */
function alert(
  ctx: AppContext,
  row: HeartbeatRow,
  event: HeartbeatEvent,
  m: { title: string; message: string; priority: number; date?: number },
): number | null {
  return sendSourceMessage(ctx, ref(row), event, m);
}

function alertFrame(
  row: HeartbeatRow,
  event: HeartbeatEvent,
  status: string,
  messageId: number | null,
  at: number,
) {
  return {
    appid: row.channel_id,
    kind: 'heartbeat:alert',
    data: { id: row.id, name: row.name, event, status, messageId },
    at,
  };
}

function finish(ctx: AppContext, effects: Effects): void {
  for (const e of effects.events) ctx.bus.emit('source:event', e);
  for (const appid of effects.channels) statusChanged(ctx, appid);
}

/** The row after a write, with the one timer re-armed for its due time. */
function poked(ctx: AppContext, id: number): HeartbeatRow {
  const row = findHeartbeat(ctx.db, id)!;
  if (row.due_at !== null) ctx.due.poke(row.due_at);
  return row;
}

// ---------------------------------------------------------------- pings (§1.3)

export interface PingInput {
  kind: PingKind;
  /** A non-empty fail_reason (already truncated); with `success` it makes the ping a failure. */
  reason?: string;
  exitCode?: number;
  /** The first bytes of the request body, kept in the ping log. */
  body?: string;
}

export interface PingAnswer {
  ok: true;
  status: HeartbeatStatus;
  ignored?: true;
}

interface RateWindows {
  byId: Map<number, { start: number; count: number }>;
  sweptAt: number;
}
const windows = new WeakMap<AppContext, RateWindows>();

/** 600 pings a minute per heartbeat (its token), fixed windows in memory; then 429 with Retry-After. */
function rateLimit(ctx: AppContext, id: number, now: number): void {
  let r = windows.get(ctx);
  if (!r) {
    r = { byId: new Map(), sweptAt: now };
    windows.set(ctx, r);
  }
  // Expired windows go once a minute, so the map holds only the heartbeats pinged in the last two.
  if (now - r.sweptAt >= RATE_WINDOW_MS) {
    for (const [k, v] of r.byId) if (now - v.start >= RATE_WINDOW_MS) r.byId.delete(k);
    r.sweptAt = now;
  }
  let w = r.byId.get(id);
  if (!w || now - w.start >= RATE_WINDOW_MS) {
    w = { start: now, count: 0 };
    r.byId.set(id, w);
  }
  if (w.count >= HEARTBEAT_PINGS_PER_MINUTE)
    throw errors.retryLater('too many pings', (w.start + RATE_WINDOW_MS - now) / 1000);
  w.count++;
}

/** The heartbeat of an H token, or 404 `heartbeat not found` (a rotated or deleted token at once). */
export function heartbeatOfToken(ctx: AppContext, token: string): HeartbeatRow {
  const row = tokenPrefix(token) === 'H' ? findHeartbeatByDigest(ctx.db, tokenDigest(token)) : undefined;
  if (!row) throw errors.notFound('heartbeat');
  return row;
}

export function ping(ctx: AppContext, token: string, input: PingInput): PingAnswer {
  const row = heartbeatOfToken(ctx, token);
  const now = ctx.clock.now();
  rateLimit(ctx, row.id, now);
  const effects: Effects = { events: [], channels: new Set() };
  const { answer, dueAt } = ctx.db.transaction(() => applyPing(ctx, row, input, now, effects));
  finish(ctx, effects);
  if (dueAt !== null) ctx.due.poke(dueAt);
  return answer;
}

function applyPing(
  ctx: AppContext,
  row: HeartbeatRow,
  input: PingInput,
  now: number,
  effects: Effects,
): { answer: PingAnswer; dueAt: number | null } {
  const failure =
    input.kind === 'fail' ||
    (input.kind === 'success' &&
      ((input.reason !== undefined && input.reason !== '') ||
        (input.exitCode !== undefined && input.exitCode !== 0)));
  let pingKind: PingKind | 'ignored' = failure ? 'fail' : input.kind;
  const entry = (status: string, ok: boolean, error?: string) =>
    recordCheck(ctx, KIND, row.id, {
      at: now,
      ok,
      status,
      ...(error === undefined ? {} : { error }),
      extra: {
        pingKind,
        ...(input.exitCode === undefined ? {} : { exitCode: input.exitCode }),
        ...(input.body === undefined || input.body === '' ? {} : { body: input.body }),
      },
    });
  const frame = (status: string, kind: string) =>
    effects.events.push({
      appid: row.channel_id,
      kind: 'heartbeat:ping',
      data: { id: row.id, name: row.name, status, pingKind: kind },
      at: now,
    });

  if (row.status === 'paused' && row.manual_resume === 1) {
    pingKind = 'ignored';
    entry('paused', true);
    frame('paused', 'ignored');
    return { answer: { ok: true, status: 'paused', ignored: true }, dueAt: null };
  }
  if (row.status === 'maintenance') {
    const reason = failure ? failReason(input) : undefined;
    maintenancePing(ctx, row, input, reason, now);
    entry('maintenance', !failure, reason);
    frame('maintenance', pingKind);
    return { answer: { ok: true, status: 'maintenance' }, dueAt: null };
  }
  const s = stateOf(row);
  s.last_ping_at = now;
  if (input.kind === 'start' || input.kind === 'log') {
    if (input.kind === 'start') s.started_at = now;
    commitState(ctx, row, s, effects);
    entry(s.status, true);
    frame(s.status, input.kind);
    return { answer: { ok: true, status: s.status }, dueAt: s.due_at };
  }
  if (failure) {
    const reason = failReason(input);
    const wasDown = row.status === 'down';
    failedRun(s, reason);
    setStatus(s, 'down', now);
    commitState(ctx, row, s, effects);
    entry('down', false, reason);
    frame('down', 'fail');
    if (!wasDown) alertFailed(ctx, row, reason, effects, now);
    return { answer: { ok: true, status: 'down' }, dueAt: null };
  }
  succeededRun(s, now);
  const downSince = row.status === 'down' ? row.status_since : null;
  upFrom(row, s, now, now);
  commitState(ctx, row, s, effects);
  entry('up', true);
  frame('up', 'success');
  if (downSince !== null) alertRecovered(ctx, row, now - downSince, 'up', effects, now);
  return { answer: { ok: true, status: 'up' }, dueAt: s.due_at };
}

/** A failure ping's bookkeeping (with or without a window): the reason kept, the run over, no deadline. */
function failedRun(s: HeartbeatState, reason: string): void {
  s.last_fail_reason = reason;
  s.started_at = null;
  clearDeadlines(s);
}

/** A success ping's bookkeeping: the run's duration when a start was seen (and plausible), the success time. */
function succeededRun(s: HeartbeatState, now: number): void {
  if (s.started_at !== null) {
    if (now - s.started_at <= MAX_RUN_MS) s.last_duration_ms = now - s.started_at;
    s.started_at = null;
  }
  s.last_success_at = now;
}

/** `{name} failed` (§1.5) and its `heartbeat:alert` frame. */
function alertFailed(
  ctx: AppContext,
  row: HeartbeatRow,
  reason: string,
  effects: Effects,
  now: number,
): void {
  const messageId = alert(ctx, row, 'fail', {
    title: `${row.name} failed`,
    message: failText(row, reason),
    priority: row.priority,
  });
  effects.events.push(alertFrame(row, 'fail', 'down', messageId, now));
}

/** `{name} is up again` after `downForMs` (§1.5) and its `heartbeat:alert` frame with the new status. */
function alertRecovered(
  ctx: AppContext,
  row: HeartbeatRow,
  downForMs: number,
  status: string,
  effects: Effects,
  now: number,
): void {
  const messageId = alert(ctx, row, 'recovery', {
    title: `${row.name} is up again`,
    message: recoveryText(downForMs),
    priority: RECOVERY_PRIORITY,
  });
  effects.events.push(alertFrame(row, 'recovery', status, messageId, now));
}

function failReason(input: PingInput): string {
  if (input.reason !== undefined && input.reason !== '') return input.reason;
  if (input.exitCode !== undefined && input.exitCode !== 0) return `exit status ${input.exitCode}`;
  return 'failure signalled';
}

// ---------------------------------------------------------------- maintenance windows (§1.4)

/**
 * A ping while a window covers the heartbeat: logged, and the machine's status (maint_status) moves as
 * the table says, but the stored status stays `maintenance`, no deadline is armed and no message is
 * sent. The window's end recomputes the heartbeat from it (leaveMaintenance).
 */
function maintenancePing(
  ctx: AppContext,
  row: HeartbeatRow,
  input: PingInput,
  reason: string | undefined,
  now: number,
): void {
  const s = stateOf(row);
  s.last_ping_at = now;
  let live: HeartbeatStatus = row.maint_status ?? 'new';
  if (input.kind === 'start') s.started_at = now;
  else if (reason !== undefined) {
    failedRun(s, reason);
    live = 'down';
  } else if (input.kind !== 'log') {
    succeededRun(s, now);
    scheduleFrom(row, s, now);
    live = 'up';
  }
  s.due_at = null;
  writeState(ctx.db, row.id, s);
  writeMaintenance(ctx.db, row.id, {
    status: live,
    from: row.maint_from ?? live,
    since: row.maint_since ?? row.status_since,
  });
}

/** Covered by an active window: `maintenance`, deadlines kept but not armed (§1.4). */
function enterMaintenance(ctx: AppContext, row: HeartbeatRow, now: number, effects: Effects): void {
  const s = stateOf(row);
  s.due_at = null;
  setStatus(s, 'maintenance', now);
  commitState(ctx, row, s, effects);
  writeMaintenance(ctx.db, row.id, { status: row.status, from: row.status, since: row.status_since });
}

/**
 * The window ended (§1.4): recomputed from the machine's status; a deadline that passed in the window
 * moves to `end + period + grace`. A failure in the window that was not alerted before it sends its
 * fail message now; a heartbeat alerted down before the window and pinged up in it gets its recovery.
 */
function leaveMaintenance(ctx: AppContext, row: HeartbeatRow, now: number, effects: Effects): void {
  const s = stateOf(row);
  const live = row.maint_status ?? 'new';
  const from = row.maint_from ?? live;
  s.due_at = null;
  if (live === 'down') {
    clearDeadlines(s);
    setStatus(s, 'down', now);
  } else if (live === 'new') {
    clearDeadlines(s);
    setStatus(s, 'new', now);
  } else {
    scheduleFrom(row, s, row.last_success_at ?? now);
    if (s.deadline_at !== null && s.deadline_at <= now) upFrom(row, s, now, now);
    else {
      const late = row.grace_sec > 0 && s.expected_at !== null && s.expected_at <= now;
      setStatus(s, late ? 'late' : 'up', now);
      if (late) s.due_at = s.deadline_at;
    }
  }
  commitState(ctx, row, s, effects);
  writeMaintenance(ctx.db, row.id, null);
  if (live === 'down' && from !== 'down')
    alertFailed(ctx, row, row.last_fail_reason ?? 'failure signalled', effects, now);
  else if (from === 'down' && live !== 'down' && live !== 'new') {
    const downFor = (row.last_success_at ?? now) - (row.maint_since ?? row.status_since);
    alertRecovered(ctx, row, downFor, s.status, effects, now);
  }
}

/** A heartbeat created, resumed or moved while a window covers it enters `maintenance` at once. */
function coverIfActive(ctx: AppContext, id: number): void {
  const row = findHeartbeat(ctx.db, id);
  if (!row || row.status === 'maintenance' || row.status === 'paused') return;
  if (!isCovered(ctx, { kind: KIND, id, appid: row.channel_id })) return;
  ctx.db.transaction(() => enterMaintenance(ctx, row, ctx.clock.now(), { events: [], channels: new Set() }));
}

/** MaintainedFamily 'heartbeat': every covered heartbeat enters `maintenance`, every uncovered one leaves. */
export function syncMaintenance(ctx: AppContext, now: number): Set<number> {
  const covered = coveredNow(ctx);
  const rows = new Map<number, HeartbeatRow>();
  for (const row of heartbeatsInMaintenance(ctx.db)) rows.set(row.id, row);
  for (const row of listHeartbeatsOfChannels(ctx.db, covered.channelIds)) rows.set(row.id, row);
  for (const src of covered.sources) {
    const row = src.kind === KIND ? findHeartbeat(ctx.db, src.id) : undefined;
    if (row) rows.set(row.id, row);
  }
  const effects: Effects = { events: [], channels: new Set() };
  ctx.db.transaction(() => {
    for (const row of rows.values()) {
      const inside = isCovered(ctx, { kind: KIND, id: row.id, appid: row.channel_id });
      if (inside && row.status !== 'maintenance' && row.status !== 'paused')
        enterMaintenance(ctx, row, now, effects);
      else if (!inside && row.status === 'maintenance') leaveMaintenance(ctx, row, now, effects);
    }
  });
  for (const e of effects.events) ctx.bus.emit('source:event', e);
  const due = rows.size > 0 ? nextDueAt(ctx.db) : null;
  if (due !== null) ctx.due.poke(due);
  return effects.channels;
}

// ---------------------------------------------------------------- tests (§1.5)

export function testMessage(
  ctx: AppContext,
  p: Principal,
  id: number,
  which: 'alert' | 'recovery',
): BusMessage {
  const row = ownHeartbeat(ctx, p, id);
  const now = ctx.clock.now();
  const event: HeartbeatEvent = which === 'alert' ? 'test-alert' : 'test-recovery';
  const input: SendInput =
    which === 'alert'
      ? {
          title: `[Test] ${row.name} is down`,
          message: downText(row, row.expected_at),
          priority: row.priority,
        }
      : {
          title: `[Test] ${row.name} is up again`,
          message: recoveryText(row.status === 'down' ? now - row.status_since : 0),
          priority: RECOVERY_PRIORITY,
        };
  input.extras = extrasOf(row, event);
  input.senderName = row.name;
  return sendMessages(ctx, row.channel_id, row.name, [input])[0]!;
}

// ---------------------------------------------------------------- deadlines (DueSource 'heartbeat')

export function heartbeatNextDue(ctx: AppContext): number | null {
  return nextDueAt(ctx.db);
}

/** Applies every due event at or before `now`: up → late at expectedAt, up/late → down at deadlineAt. */
export async function runDueHeartbeats(ctx: AppContext, now: number): Promise<void> {
  for (;;) {
    const rows = dueHeartbeats(ctx.db, now, DUE_BATCH);
    if (rows.length === 0) return;
    const effects: Effects = { events: [], channels: new Set() };
    const started = performance.now();
    let done = 0;
    ctx.db.transaction(() => {
      for (const row of rows) {
        applyDue(ctx, row, now, effects);
        done++;
        if (performance.now() - started >= DUE_SLICE_MS) break;
      }
    });
    finish(ctx, effects);
    if (rows.length < DUE_BATCH && done === rows.length) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function applyDue(ctx: AppContext, row: HeartbeatRow, now: number, effects: Effects): void {
  const s = stateOf(row);
  if ((row.status === 'up' || row.status === 'late') && row.deadline_at !== null && row.deadline_at <= now) {
    goDown(ctx, row, s, row.deadline_at, effects);
    return;
  }
  if (row.status === 'up' && row.expected_at !== null && row.expected_at <= now) {
    setStatus(s, 'late', row.expected_at);
    s.due_at = row.deadline_at;
    commitState(ctx, row, s, effects);
    return;
  }
  // Nothing applies (a stale due time): clear it so the timer does not spin on it.
  s.due_at = row.status === 'up' || row.status === 'late' ? row.deadline_at : null;
  if (s.due_at !== null && s.due_at <= now) s.due_at = null;
  commitState(ctx, row, s, effects);
}

// ---------------------------------------------------------------- sleep and restarts (§0.6)

/**
 * The host slept or the server was down over `[from, to]`: the gap is `unknown` in every non-paused
 * heartbeat's history, and a deadline that passed in it moves to `to + period + grace` (status `up`)
 * instead of raising a false alert. `down` stays `down`.
 */
export function onClockGap(ctx: AppContext, from: number, to: number): void {
  const effects: Effects = { events: [], channels: new Set() };
  ctx.db.transaction(() => {
    for (const { id } of activeHeartbeats(ctx.db)) recordGap(ctx, KIND, id, from, to);
    for (const row of heartbeatsDueBy(ctx.db, to)) {
      if ((row.status !== 'up' && row.status !== 'late') || row.deadline_at === null) continue;
      if (row.deadline_at < from) continue;
      const s = stateOf(row);
      upFrom(row, s, to, to);
      commitState(ctx, row, s, effects);
    }
  });
  finish(ctx, effects);
}

// ---------------------------------------------------------------- shares (§0.3)

/** A recipient who lost `send` on the channel: their heartbeats there are paused. */
export function pauseLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  const lost = recipientHeartbeats(ctx.db, appid, channel.user_id).filter((row) => {
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

import type { AppContext } from '../../context';
import { rfc3339 } from '../../lib/clock';
import { intervalFactor, isOnBattery } from '../../lib/power';
import { recordCheck, recordGap, recordStatus } from '../history/service';
import { coveredNow, isCovered } from '../maintenance/coverage';
import { formatDuration, RECOVERY_PRIORITY, sendSourceMessage, statusChanged } from '../sources/messages';
import { openSettings, stateOfRow } from './fields';
import { type AnyMonitorKind, type CheckOutcome, isLoopbackHost, monitorKind } from './kind';
import {
  activeMonitors,
  dueMonitors,
  findMonitor,
  type MonitorRow,
  type MonitorState,
  type MonitorStatus,
  monitorsForMaintenance,
  nextDueAt,
  writeState,
} from './store';
import { isOnline, offlineSeen, onlineSeen } from './witness';

/**
 * The one monitor engine (§2.1-§2.5): scheduling, timeouts, retries, states, messages and history for
 * every kind; a kind (kind.ts) only parses its settings and runs one check. DueSource 'monitor' claims
 * due rows and starts their checks in a bounded pool without awaiting them, so a slow target never holds
 * up another monitor's schedule; each result is applied in its own transaction.
 */

/** Due rows claimed per query (one transaction each), then the loop yields to the event loop. */
const CLAIM_BATCH = 100;
/**
 * Checks in flight at once, over every user. Checks are I/O waits, not CPU: the bound is there for
 * sockets, file descriptors and response buffers, not for the event loop. 1,000 monitors (one user's
 * cap) at the default 60 s interval start ~17 checks a second; if every target hung for the default 10 s
 * timeout, ~170 would be in flight, so 256 keeps even that case from queueing (no start lag) while
 * staying far below the usual 1,024 open-files limit, with room for clients and the database.
 */
export const MONITOR_CHECK_POOL = 256;
/** After a restart or wake, overdue checks are spread over min(intervalSec, this) seconds (§0.6). */
const SPREAD_MAX_SEC = 10;

export const KIND_EVENTS = { down: 'down', reminder: 'reminder', recovery: 'recovery' } as const;

interface Engine {
  /** Monitors whose check is in flight or queued: a check never overlaps itself. */
  running: Map<number, Promise<void>>;
  queue: (() => Promise<void>)[];
  active: number;
  idleWaiters: (() => void)[];
  controllers: Set<AbortController>;
  stopped: boolean;
}

const engines = new WeakMap<AppContext, Engine>();

function engine(ctx: AppContext): Engine {
  let e = engines.get(ctx);
  if (!e) {
    e = { running: new Map(), queue: [], active: 0, idleWaiters: [], controllers: new Set(), stopped: false };
    engines.set(ctx, e);
  }
  return e;
}

/** What a change leaves to do after commit: live frames, channel signals, the timer. */
export interface Effects {
  frames: { appid: number; kind: string; data: Record<string, unknown>; at: number }[];
  channels: Set<number>;
  dueAt: number | null;
}

export function newEffects(): Effects {
  return { frames: [], channels: new Set(), dueAt: null };
}

export function finish(ctx: AppContext, effects: Effects): void {
  for (const f of effects.frames) ctx.bus.emit('source:event', f);
  for (const appid of effects.channels) statusChanged(ctx, appid);
  // poke(at) keeps an earlier armed time, and fires at once when that time has passed without a wake
  // (server/jobs/due.ts), so no monitor due meanwhile is pushed back.
  if (effects.dueAt !== null) ctx.due.poke(effects.dueAt);
}

// ---------------------------------------------------------------- state

export function stateOf(row: MonitorRow): MonitorState {
  return {
    status: row.status,
    status_since: row.status_since,
    consecutive_failures: row.consecutive_failures,
    last_error: row.last_error,
    last_response_ms: row.last_response_ms,
    last_check_at: row.last_check_at,
    last_alerted: row.last_alerted,
    last_alert_at: row.last_alert_at,
    down_since: row.down_since,
    next_check_at: row.next_check_at,
    due_at: row.due_at,
    state: row.state,
  };
}

export function setStatus(s: MonitorState, status: MonitorStatus, at: number): void {
  if (s.status !== status) {
    s.status = status;
    s.status_since = at;
  }
}

/** The next reminder (§2.4): down, alerted, `resendEverySec` after the last down/reminder message. */
function reminderAt(row: Pick<MonitorRow, 'resend_every_sec'>, s: MonitorState): number | null {
  if (
    s.status !== 'down' ||
    s.last_alerted !== 'down' ||
    row.resend_every_sec === 0 ||
    s.last_alert_at === null
  )
    return null;
  return s.last_alert_at + row.resend_every_sec * 1000;
}

function withDue(row: MonitorRow, s: MonitorState): void {
  const r = reminderAt(row, s);
  const c = s.status === 'paused' ? null : s.next_check_at;
  s.due_at = c === null ? r : r === null ? c : Math.min(c, r);
}

/**
 * Writes the state (due time recomputed), records a status interval and a `monitor:status_changed`
 * frame when the status changed. Inside the caller's transaction.
 */
export function commitState(
  ctx: AppContext,
  row: MonitorRow,
  s: MonitorState,
  effects: Effects,
  messageId: number | null = null,
): void {
  withDue(row, s);
  writeState(ctx.db, row.id, s);
  if (s.due_at !== null)
    effects.dueAt = effects.dueAt === null ? s.due_at : Math.min(effects.dueAt, s.due_at);
  if (s.status === row.status) return;
  recordStatus(ctx, row.kind, row.id, s.status, s.status_since);
  effects.channels.add(row.channel_id);
  effects.frames.push({
    appid: row.channel_id,
    kind: 'monitor:status_changed',
    data: { kind: row.kind, id: row.id, name: row.name, from: row.status, to: s.status, messageId },
    at: s.status_since,
  });
}

function targetOf(ctx: AppContext, row: MonitorRow): string {
  const kind = monitorKind(ctx, row.kind);
  if (!kind) return row.kind;
  return kind.target(openSettings(ctx, row));
}

function send(
  ctx: AppContext,
  row: MonitorRow,
  event: string,
  m: { title: string; message: string; priority: number; extras?: Record<string, unknown> },
): number | null {
  return sendSourceMessage(
    ctx,
    { kind: row.kind, id: row.id, name: row.name, channelId: row.channel_id },
    event,
    m,
  );
}

// ---------------------------------------------------------------- applying a check (§2.4, §2.5)

export interface CheckResult {
  outcome: CheckOutcome;
  startedAt: number;
  /** The machine was offline when the check failed: not judged (status `unknown`, no failure counted). */
  offline: boolean;
}

/** Applies one check's result to a monitor inside the caller's transaction. */
export function applyCheck(ctx: AppContext, row: MonitorRow, r: CheckResult, effects: Effects): void {
  const now = ctx.clock.now();
  const o = r.outcome;
  const s = stateOf(row);
  s.last_check_at = r.startedAt;
  s.last_response_ms = o.responseTimeMs;
  if (o.state !== undefined) s.state = JSON.stringify(o.state);
  let messageId: number | null = null;
  // A monitor covered by an active maintenance window (§2.4): status `maintenance`, the check is still
  // counted and logged, no down/recovery message (last_alerted unchanged, so none is lost or repeated);
  // the window's end runs a check (syncMaintenance) whose result goes through the rows below.
  if (isCovered(ctx, { kind: row.kind, id: row.id, appid: row.channel_id })) {
    if (o.ok) s.consecutive_failures = 0;
    else if (!o.cannotRun && !r.offline) s.consecutive_failures++;
    s.last_error = o.ok ? null : (o.error ?? 'check failed');
    setStatus(s, 'maintenance', now);
  } else if (isOnBattery(ctx) && monitorKind(ctx, row.kind)?.pausedOnBattery) {
    // A check of a kind that pauses on battery, still running when the machine went on battery (the
    // switch set it `unknown`): not judged, as the checks skipped from then on — no down message.
    powerPause(s, now);
  } else if (o.cannotRun || r.offline) {
    s.last_error = o.error ?? null;
    setStatus(s, 'unknown', now);
  } else if (o.ok) {
    s.consecutive_failures = 0;
    s.last_error = null;
    setStatus(s, 'up', now);
    if (s.last_alerted === 'down') {
      const downFor = now - (s.down_since ?? row.status_since);
      messageId = send(ctx, row, KIND_EVENTS.recovery, {
        title: `${row.name} is up again`,
        message: `${targetOf(ctx, row)}: recovered after ${formatDuration(downFor)} down.`,
        priority: RECOVERY_PRIORITY,
      });
      s.last_alerted = 'up';
      s.last_alert_at = now;
      s.down_since = null;
    }
  } else {
    s.consecutive_failures++;
    s.last_error = o.error ?? 'check failed';
    if (s.consecutive_failures <= row.retries) setStatus(s, 'pending', now);
    else {
      setStatus(s, 'down', now);
      if (s.last_alerted !== 'down') {
        messageId = send(ctx, row, KIND_EVENTS.down, {
          title: `${row.name} is down`,
          message: `${targetOf(ctx, row)}: ${s.last_error}`,
          priority: row.priority,
          ...(o.extras ? { extras: o.extras } : {}),
        });
        s.last_alerted = 'down';
        s.last_alert_at = now;
        s.down_since = now;
      }
    }
  }
  if (o.event)
    send(ctx, row, o.event.event, { title: o.event.title, message: o.event.message, priority: row.priority });
  commitState(ctx, row, s, effects, messageId);
  recordCheck(ctx, row.kind, row.id, {
    at: r.startedAt,
    ok: o.ok,
    status: s.status,
    responseTimeMs: o.responseTimeMs,
    ...(o.ok || o.error === undefined ? {} : { error: o.error }),
  });
}

/** A reminder that fell due (§2.4): `{name} is still down`. Inside the caller's transaction. */
function applyReminder(ctx: AppContext, row: MonitorRow, s: MonitorState, now: number): void {
  send(ctx, row, KIND_EVENTS.reminder, {
    title: `${row.name} is still down`,
    message: `${targetOf(ctx, row)}: down since ${rfc3339(row.status_since)} (${formatDuration(now - row.status_since)}). Last error: ${row.last_error ?? 'unknown'}`,
    priority: row.priority,
  });
  s.last_alert_at = now;
}

// ---------------------------------------------------------------- running a check

/** Runs one check of `kind` with its timeout; never throws (a kind that throws is a failed check). */
export async function runKindCheck(
  ctx: AppContext,
  kind: AnyMonitorKind,
  settings: object,
  state: object | null,
  o: {
    name: string;
    timeoutSec: number;
    allowPrivate: boolean;
    test: boolean;
    owner?: { userId: number; monitorId: number | null };
  },
): Promise<{ outcome: CheckOutcome; startedAt: number }> {
  const e = engine(ctx);
  const controller = new AbortController();
  e.controllers.add(controller);
  const startedAt = ctx.clock.now();
  const began = performance.now();
  const timeoutText = `timeout after ${o.timeoutSec} s`;
  let timer: NodeJS.Timeout | undefined;
  // A kind that does not honour the signal in time still ends at the timeout.
  const timedOut = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(timeoutText));
      resolve({ ok: false, error: timeoutText, responseTimeMs: null, details: {} });
    }, o.timeoutSec * 1000);
    timer.unref();
  });
  try {
    const outcome = await Promise.race([
      kind
        .check(settings, state, {
          ctx,
          name: o.name,
          signal: controller.signal,
          timeoutSec: o.timeoutSec,
          startedAt,
          allowPrivate: o.allowPrivate,
          test: o.test,
          ...(o.owner ? { owner: o.owner } : {}),
        })
        .catch(
          (err: unknown): CheckOutcome => ({
            ok: false,
            error: controller.signal.aborted ? timeoutText : err instanceof Error ? err.message : String(err),
            responseTimeMs: Math.round(performance.now() - began),
            details: {},
          }),
        ),
      timedOut,
    ]);
    return { outcome, startedAt };
  } finally {
    clearTimeout(timer);
    e.controllers.delete(controller);
  }
}

/** Private targets allowed (CheckIo.allowPrivate): the setting is off, or the owner is an administrator. */
function allowPrivate(ctx: AppContext, userId: number): boolean {
  if (!ctx.config.blockPrivateTargets) return true;
  return ctx.db.first<{ admin: number }>('SELECT admin FROM users WHERE id = ?', [userId])?.admin === 1;
}

/** One check of a stored monitor, applied; the result, or null when the monitor went away meanwhile. */
async function checkAndApply(ctx: AppContext, id: number): Promise<CheckResult | null> {
  const e = engine(ctx);
  const row = findMonitor(ctx.db, id);
  const kind = row ? monitorKind(ctx, row.kind) : undefined;
  if (!row || !kind || row.status === 'paused' || e.stopped) return null;
  const settings = openSettings(ctx, row);
  const { outcome, startedAt } = await runKindCheck(ctx, kind, settings, stateOfRow(row), {
    name: row.name,
    timeoutSec: row.timeout_sec,
    allowPrivate: allowPrivate(ctx, row.user_id),
    test: false,
    owner: { userId: row.user_id, monitorId: row.id },
  });
  if (e.stopped) return null;
  // Before a failure of another host counts, the witness says whether this machine is online at all.
  const remote = kind.hosts(settings).some((h) => !isLoopbackHost(h));
  let offline = false;
  if (remote && !outcome.cannotRun) {
    if (outcome.ok) onlineSeen(ctx);
    else if (await isOnline(ctx)) onlineSeen(ctx);
    else offline = true;
  }
  const result: CheckResult = { outcome, startedAt, offline };
  const effects = newEffects();
  const applied = ctx.db.transaction(() => {
    const now = findMonitor(ctx.db, id);
    // Paused or deleted while the check ran: the result is dropped.
    if (!now || now.status === 'paused') return false;
    applyCheck(ctx, now, result, effects);
    return true;
  });
  if (!applied) return null;
  finish(ctx, effects);
  if (offline) offlineSeen(ctx, row.user_id);
  return result;
}

function settleIdle(e: Engine): void {
  if (e.active > 0 || e.queue.length > 0) return;
  for (const w of e.idleWaiters.splice(0)) w();
}

function pump(ctx: AppContext, e: Engine): void {
  while (e.active < MONITOR_CHECK_POOL && e.queue.length > 0) {
    const job = e.queue.shift()!;
    e.active++;
    void job().finally(() => {
      e.active--;
      pump(ctx, e);
      settleIdle(e);
    });
  }
}

/**
 * Queues a check of monitor `id` in the pool. The monitor counts as running from now until its result
 * is applied, so the scheduler never starts a second check of it meanwhile.
 */
function startCheck(ctx: AppContext, id: number): void {
  const e = engine(ctx);
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  e.running.set(id, done);
  e.queue.push(async () => {
    try {
      await checkAndApply(ctx, id);
    } catch (err) {
      ctx.log.error('monitor check failed', { err, id });
    } finally {
      e.running.delete(id);
      release();
    }
  });
  pump(ctx, e);
}

/**
 * `check-now` (§2.1): one check now, applied with its state change and messages, after any check of
 * the monitor in flight (never two at once). The schedule stays as it is.
 */
export async function checkNow(ctx: AppContext, id: number): Promise<CheckResult | null> {
  const e = engine(ctx);
  while (e.running.has(id)) await e.running.get(id);
  let release!: () => void;
  e.running.set(
    id,
    new Promise<void>((resolve) => {
      release = resolve;
    }),
  );
  try {
    return await checkAndApply(ctx, id);
  } finally {
    e.running.delete(id);
    release();
  }
}

// ---------------------------------------------------------------- DueSource 'monitor'

export function monitorNextDue(ctx: AppContext): number | null {
  return nextDueAt(ctx.db);
}

/**
 * Claims what is due at `now` in bounded batches: reminders are sent, checks get their next start
 * (`now + intervalSec`, counted from this start) and go to the pool. Never awaits a check. A monitor
 * whose previous check is still running waits for it: its due time is cleared and the result's
 * application re-arms it at once (the next start is max(due, previous end)).
 */
export async function runDueMonitors(ctx: AppContext, now: number): Promise<void> {
  const e = engine(ctx);
  for (;;) {
    if (e.stopped) return;
    const rows = dueMonitors(ctx.db, now, CLAIM_BATCH);
    if (rows.length === 0) return;
    const effects = newEffects();
    const start: number[] = [];
    const onBattery = isOnBattery(ctx);
    const factor = intervalFactor(ctx);
    ctx.db.transaction(() => {
      for (const row of rows) {
        const s = stateOf(row);
        const r = reminderAt(row, s);
        if (r !== null && r <= now) applyReminder(ctx, row, s, now);
        if (e.running.has(row.id)) {
          // The check waits for the one in flight (its result re-arms it); only a reminder stays due.
          s.due_at = reminderAt(row, s);
          writeState(ctx.db, row.id, s);
          if (s.due_at !== null) effects.dueAt = Math.min(effects.dueAt ?? s.due_at, s.due_at);
          continue;
        }
        if (s.status !== 'paused' && s.next_check_at !== null && s.next_check_at <= now) {
          // On battery: the interval stretches (server/lib/power.ts), and a kind that pauses skips the check.
          if (onBattery && monitorKind(ctx, row.kind)?.pausedOnBattery) {
            s.next_check_at = now + row.interval_sec * 1000;
            powerPause(s, now);
          } else {
            s.next_check_at = now + Math.round(row.interval_sec * 1000 * factor);
            start.push(row.id);
          }
        }
        commitState(ctx, row, s, effects);
      }
    });
    finish(ctx, effects);
    for (const id of start) startCheck(ctx, id);
    if (rows.length < CLAIM_BATCH) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Resolves when no check is queued or in flight (the test hook's settle). */
export function monitorsIdle(ctx: AppContext): Promise<void> {
  const e = engine(ctx);
  if (e.active === 0 && e.queue.length === 0) return Promise.resolve();
  return new Promise((resolve) => e.idleWaiters.push(resolve));
}

/**
 * Server stop: checks in flight are aborted and nothing is applied afterwards. Queued checks drain at
 * once (a stopped engine's check returns without running), so every running entry settles.
 */
export async function stopMonitors(ctx: AppContext): Promise<void> {
  const e = engine(ctx);
  e.stopped = true;
  for (const c of e.controllers) c.abort(new Error('server stopping'));
  await Promise.allSettled([...e.running.values()]);
}

// ---------------------------------------------------------------- maintenance windows (§2.4)

/**
 * MaintainedFamily 'monitor': a covered monitor (not paused) takes status `maintenance` at once; one in
 * `maintenance` that no window covers any more gets a check now, and that check's result decides its
 * status and messages (a monitor still down then gets its down message unless it was alerted before).
 */
export function syncMaintenance(ctx: AppContext, now: number): Set<number> {
  const covered = coveredNow(ctx);
  const rows = new Map<number, MonitorRow>();
  for (const row of monitorsForMaintenance(ctx.db, covered.channelIds)) rows.set(row.id, row);
  for (const src of covered.sources) {
    const row = findMonitor(ctx.db, src.id);
    if (row && row.kind === src.kind) rows.set(row.id, row);
  }
  const effects = newEffects();
  ctx.db.transaction(() => {
    for (const row of rows.values()) {
      if (row.status === 'paused') continue;
      const inside = isCovered(ctx, { kind: row.kind, id: row.id, appid: row.channel_id });
      const s = stateOf(row);
      if (inside && row.status !== 'maintenance') setStatus(s, 'maintenance', now);
      else if (!inside && row.status === 'maintenance') s.next_check_at = now;
      else continue;
      commitState(ctx, row, s, effects);
    }
  });
  const channels = new Set(effects.channels);
  effects.channels.clear();
  finish(ctx, effects);
  return channels;
}

// ---------------------------------------------------------------- sleep and restarts (§0.6)

/**
 * The host slept or the server was down over `[from, to]`: the gap is `unknown` in every non-paused
 * monitor's history, the monitor is `unknown` until its next check completes, and checks that fell due
 * run once each, spread over min(intervalSec, 10) s instead of all at once. No message.
 */
export function onClockGap(ctx: AppContext, from: number, to: number): void {
  const effects = newEffects();
  ctx.db.transaction(() => {
    const rows = activeMonitors(ctx.db);
    const overdue = rows.filter((r) => r.next_check_at === null || r.next_check_at <= to);
    const slot = new Map(overdue.map((r, i) => [r.id, i]));
    for (const row of rows) {
      recordGap(ctx, row.kind, row.id, from, to);
      const s = stateOf(row);
      setStatus(s, 'unknown', to);
      const i = slot.get(row.id);
      if (i !== undefined) {
        const windowMs = Math.min(row.interval_sec, SPREAD_MAX_SEC) * 1000;
        s.next_check_at = to + Math.floor((i * windowMs) / overdue.length);
      }
      commitState(ctx, row, s, effects);
    }
  });
  finish(ctx, effects);
}

// ---------------------------------------------------------------- power (server/lib/power.ts)

/** `lastError` of a monitor whose kind pauses on battery (browser workflows) while it is paused so. */
export const POWER_PAUSED = 'paused on battery power';

/** A check skipped on battery: `unknown` (no message, no failure counted), unless in maintenance. */
function powerPause(s: MonitorState, now: number): void {
  if (s.status === 'maintenance') return;
  setStatus(s, 'unknown', now);
  s.last_error = POWER_PAUSED;
}

/**
 * `power:changed`: on battery, monitors of kinds that pause show it at once (`unknown`, POWER_PAUSED);
 * back on mains power they are checked at once, and every other monitor's stretched next check comes back
 * to `intervalSec` after its last start (or now, when that has passed).
 */
export function onPowerChanged(ctx: AppContext, onBattery: boolean): void {
  const now = ctx.clock.now();
  const effects = newEffects();
  ctx.db.transaction(() => {
    for (const row of activeMonitors(ctx.db)) {
      const pauses = monitorKind(ctx, row.kind)?.pausedOnBattery === true;
      const s = stateOf(row);
      if (onBattery) {
        if (!pauses) continue;
        powerPause(s, now);
      } else if (pauses) {
        if (s.last_error !== POWER_PAUSED) continue;
        s.next_check_at = now;
      } else {
        if (s.next_check_at === null || s.last_check_at === null) continue;
        const unstretched = Math.max(now, s.last_check_at + row.interval_sec * 1000);
        if (unstretched >= s.next_check_at) continue;
        s.next_check_at = unstretched;
      }
      commitState(ctx, row, s, effects);
    }
  });
  finish(ctx, effects);
}

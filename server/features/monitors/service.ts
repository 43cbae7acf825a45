import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { MONITORS_PER_USER } from '../../lib/limits';
import { channelInScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { forgetSource, recordStatus } from '../history/service';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import { statusChanged } from '../sources/messages';
import { checkNow, commitState, finish, newEffects, runKindCheck, setStatus, stateOf } from './engine';
import {
  type CommonInput,
  commonDefaults,
  commonOf,
  mergeCommon,
  openSettings,
  sealSettings,
  stateOfRow,
} from './fields';
import type { AnyMonitorKind, CheckOutcome } from './kind';
import {
  countMonitorsOfUser,
  deleteMonitor,
  findMonitor,
  insertMonitor,
  listMonitorsOfUser,
  type MonitorRow,
  recipientMonitors,
  updateCommon,
} from './store';

// ---------------------------------------------------------------- access (§0.2, §0.3)

/**
 * The caller's own monitor of this kind, inside an API token's scope; anything else (someone else's, an
 * id of another kind) is 404 `monitor not found` (§0.1, §0.2).
 */
function ownMonitor(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number): MonitorRow {
  const row = findMonitor(ctx.db, id);
  if (!row || row.kind !== kind.kind || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('monitor');
  return row;
}

export function listMonitors(
  ctx: AppContext,
  p: Principal,
  kind: AnyMonitorKind,
  appid?: number,
): MonitorRow[] {
  return sourcesInView(ctx, p, listMonitorsOfUser(ctx.db, p.userId, kind.kind), appid);
}

export function getMonitor(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number): MonitorRow {
  return ownMonitor(ctx, p, kind, id);
}

// ---------------------------------------------------------------- writes

export function createMonitor(
  ctx: AppContext,
  p: Principal,
  kind: AnyMonitorKind,
  input: CommonInput & { appid: number; name: string },
  body: Record<string, unknown>,
): MonitorRow {
  const channel = writableChannel(ctx, p, input.appid);
  const merged = mergeCommon(ctx, kind, commonDefaults(kind), input);
  const common = { ...merged, channelId: channel.id, name: input.name };
  const settings = kind.parse(body, undefined, ctx);
  const now = ctx.clock.now();
  const paused = input.paused ?? false;
  const status = paused ? 'paused' : 'pending';
  const id = ctx.db.transaction(() => {
    if (countMonitorsOfUser(ctx.db, p.userId) >= MONITORS_PER_USER)
      throw errors.userCap(MONITORS_PER_USER, 'monitors');
    if (kind.perUser && listMonitorsOfUser(ctx.db, p.userId, kind.kind).length >= kind.perUser.max)
      throw errors.userCap(kind.perUser.max, kind.perUser.things);
    // First check at once (§2.2), unless paused.
    const id = insertMonitor(ctx.db, {
      userId: p.userId,
      kind: kind.kind,
      common,
      settings: sealSettings(ctx, settings),
      state: null,
      status,
      nextCheckAt: paused ? null : now,
      now,
    });
    recordStatus(ctx, kind.kind, id, status, now);
    return id;
  });
  statusChanged(ctx, channel.id);
  if (!paused) ctx.due.poke(now);
  return findMonitor(ctx.db, id)!;
}

/** Partial update (§0.1); the status stays and a check runs at once (§2.4). */
export function updateMonitor(
  ctx: AppContext,
  p: Principal,
  kind: AnyMonitorKind,
  id: number,
  input: CommonInput,
  body: Record<string, unknown>,
): MonitorRow {
  const row = ownMonitor(ctx, p, kind, id);
  const base = commonOf(row);
  if (input.appid !== undefined && input.appid !== row.channel_id)
    base.channelId = writableChannel(ctx, p, input.appid).id;
  const common = { ...base, ...mergeCommon(ctx, kind, base, input) } as typeof base;
  const settings = kind.parse(body, openSettings(ctx, row), ctx);
  // Resuming through PUT asks what POST /resume asks: a channel the caller may still write to.
  if (input.paused === false && row.status === 'paused') writableChannel(ctx, p, common.channelId);
  const now = ctx.clock.now();
  const effects = newEffects();
  effects.channels.add(row.channel_id).add(common.channelId);
  ctx.db.transaction(() => {
    updateCommon(ctx.db, id, common, sealSettings(ctx, settings));
    const current = findMonitor(ctx.db, id)!;
    const s = stateOf(current);
    if (input.paused === true) pauseState(s, now);
    else if (input.paused === false && current.status === 'paused') resumeState(s, now);
    else if (s.status !== 'paused') s.next_check_at = now;
    commitState(ctx, current, s, effects);
  });
  finish(ctx, effects);
  return findMonitor(ctx.db, id)!;
}

export function removeMonitor(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number): void {
  const row = ownMonitor(ctx, p, kind, id);
  ctx.db.transaction(() => {
    deleteMonitor(ctx.db, id);
    forgetSource(ctx, row.kind, id);
  });
  statusChanged(ctx, row.channel_id);
}

function pauseState(s: ReturnType<typeof stateOf>, now: number): void {
  setStatus(s, 'paused', now);
  s.next_check_at = null;
}

/** Resume → `pending` plus an immediate check (§2.1); failures counted anew. */
function resumeState(s: ReturnType<typeof stateOf>, now: number): void {
  setStatus(s, 'pending', now);
  s.consecutive_failures = 0;
  s.next_check_at = now;
}

export function pauseMonitor(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number): MonitorRow {
  const row = ownMonitor(ctx, p, kind, id);
  if (row.status !== 'paused') pauseRows(ctx, [row]);
  return findMonitor(ctx.db, id)!;
}

export function resumeMonitor(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number): MonitorRow {
  const row = ownMonitor(ctx, p, kind, id);
  if (row.status === 'paused') {
    // A recipient who lost `send` on the channel resumes only after moving it (§0.3).
    writableChannel(ctx, p, row.channel_id);
    const effects = newEffects();
    ctx.db.transaction(() => {
      const s = stateOf(row);
      resumeState(s, ctx.clock.now());
      commitState(ctx, row, s, effects);
    });
    finish(ctx, effects);
  }
  return findMonitor(ctx.db, id)!;
}

function pauseRows(ctx: AppContext, rows: MonitorRow[]): void {
  const effects = newEffects();
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    for (const row of rows) {
      const s = stateOf(row);
      pauseState(s, now);
      commitState(ctx, row, s, effects);
    }
  });
  finish(ctx, effects);
}

/** A recipient who lost `send` on the channel: their monitors there are paused (§0.3). */
export function pauseLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  const lost = recipientMonitors(ctx.db, appid, channel.user_id).filter((row) => {
    const v = receivedChannel(ctx, row.user_id, appid);
    return !v || !maySend(v);
  });
  if (lost.length > 0) pauseRows(ctx, lost);
}

// ---------------------------------------------------------------- test and check-now (§2.6)

/** The test answer of §2.6. */
export function testAnswer(o: CheckOutcome) {
  return {
    ok: o.ok,
    status: o.ok ? 'up' : 'down',
    responseTimeMs: o.responseTimeMs,
    ...(o.ok || o.error === undefined ? {} : { error: o.error }),
    details: o.details,
  };
}

/** `POST /{kind}/test`: validated as a create, run once; saves nothing, sends nothing, spends no quota. */
export async function testMonitor(
  ctx: AppContext,
  p: Principal,
  kind: AnyMonitorKind,
  input: CommonInput,
  body: Record<string, unknown>,
) {
  const common = mergeCommon(ctx, kind, commonDefaults(kind), input);
  const settings = kind.parse(body, undefined, ctx);
  const { outcome } = await runKindCheck(ctx, kind, settings, null, {
    name: typeof body.name === 'string' && body.name.trim() !== '' ? body.name.trim() : kind.kind,
    timeoutSec: common.timeoutSec,
    allowPrivate: !ctx.config.blockPrivateTargets || p.admin,
    test: true,
    owner: { userId: p.userId, monitorId: null },
  });
  return testAnswer(outcome);
}

/** `POST /{kind}/{id}/check-now`: one check, applied with its state change and messages. */
export async function checkMonitorNow(ctx: AppContext, p: Principal, kind: AnyMonitorKind, id: number) {
  const row = ownMonitor(ctx, p, kind, id);
  const result = await checkNow(ctx, row.id);
  if (result) return testAnswer(result.outcome);
  // Paused (or removed meanwhile): the check still runs once for the answer, nothing is applied.
  const { outcome } = await runKindCheck(ctx, kind, openSettings(ctx, row), stateOfRow(row), {
    name: row.name,
    timeoutSec: row.timeout_sec,
    allowPrivate: !ctx.config.blockPrivateTargets || p.admin,
    test: true,
    owner: { userId: row.user_id, monitorId: row.id },
  });
  return testAnswer(outcome);
}

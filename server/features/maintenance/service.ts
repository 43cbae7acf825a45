import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { channelInScope, isRestricted } from '../channels/access';
import { findChannel } from '../channels/store';
import { monitorKinds } from '../monitors/kind';
import { planLimitsOf } from '../plans/caps';
import { sourceKind } from '../sources/registry';
import { coveredChannelIds, parseSchedule, windowChannels, windowSources, windowsChanged } from './coverage';
import { currentOrNext, parseHHMM, type Schedule } from './schedule';
import {
  countWindowsOfUser,
  deleteWindow,
  findWindow,
  insertWindow,
  listWindowsOfUser,
  replaceWindow,
  type WindowFields,
  type WindowRow,
} from './store';

/** A once window lasts at most this long (§4). */
const ONCE_MAX_MS = 366 * 86_400_000;

/** The create/replace body after the edge's type checks (routes.ts); the rules below are the service's. */
export interface WindowInput {
  name: string;
  channelIds: number[];
  includeSubtree: boolean;
  monitors: { kind: string; id: number }[];
  schedule: Schedule;
  enabled: boolean;
}

/** Windows a scoped API token sees: every channel they name, and every listed source's channel, is in scope. */
function inView(ctx: AppContext, p: Principal, row: WindowRow): boolean {
  if (!isRestricted(p)) return true;
  if (!windowChannels(row).every((id) => channelInScope(ctx, p, id))) return false;
  return windowSources(row).every((m) => {
    const found = sourceKind(ctx, m.kind)?.find(ctx, m.id);
    return !found || channelInScope(ctx, p, found.appid);
  });
}

function ownWindow(ctx: AppContext, p: Principal, id: number): WindowRow {
  const row = findWindow(ctx.db, id);
  if (!row || row.user_id !== p.userId || !inView(ctx, p, row)) throw errors.notFound('maintenance window');
  return row;
}

function validate(ctx: AppContext, p: Principal, input: WindowInput): WindowFields {
  const channelIds = [...new Set(input.channelIds)];
  for (const id of channelIds) {
    const c = findChannel(ctx.db, id);
    if (!c || c.user_id !== p.userId || c.internal === 1)
      throw errors.badRequest(`channelIds: no such channel ${id}`);
  }
  for (const id of channelIds)
    if (!channelInScope(ctx, p, id)) throw errors.forbidden(`token scope does not cover channel ${id}`);
  const kinds = new Set(['heartbeat', ...monitorKinds(ctx).map((k) => k.kind)]);
  const seen = new Set<string>();
  const monitors: { kind: string; id: number }[] = [];
  input.monitors.forEach((m, i) => {
    const found = kinds.has(m.kind) ? sourceKind(ctx, m.kind)?.find(ctx, m.id) : undefined;
    if (!found || found.userId !== p.userId) throw errors.badRequest(`monitors[${i}]: no such monitor`);
    if (!channelInScope(ctx, p, found.appid))
      throw errors.forbidden(`token scope does not cover channel ${found.appid}`);
    const k = `${m.kind}:${m.id}`;
    if (!seen.has(k)) monitors.push({ kind: m.kind, id: m.id });
    seen.add(k);
  });
  if (channelIds.length === 0 && monitors.length === 0)
    throw errors.badRequest('channelIds: a window must cover at least one channel or monitor');
  const s = input.schedule;
  if (s.type === 'once') {
    if (s.endsAt <= s.startsAt) throw errors.badRequest('schedule.endsAt: must be after startsAt');
    if (s.endsAt <= ctx.clock.now()) throw errors.badRequest('schedule.endsAt: must be in the future');
    if (s.endsAt - s.startsAt > ONCE_MAX_MS)
      throw errors.badRequest('schedule.endsAt: at most 366 days after startsAt');
  } else {
    // Checked at the edge: time zone, days, HH:MM. Kept in the stored order of the week.
    s.days = [...s.days].sort((a, b) => a - b);
    parseHHMM(s.start);
  }
  return {
    name: input.name,
    channelIds,
    includeSubtree: input.includeSubtree,
    monitors,
    schedule: JSON.stringify(s),
    enabled: input.enabled,
  };
}

export function listWindows(ctx: AppContext, p: Principal): WindowRow[] {
  return listWindowsOfUser(ctx.db, p.userId).filter((row) => inView(ctx, p, row));
}

export function getWindow(ctx: AppContext, p: Principal, id: number): WindowRow {
  return ownWindow(ctx, p, id);
}

export function createWindow(ctx: AppContext, p: Principal, input: WindowInput): WindowRow {
  const fields = validate(ctx, p, input);
  const id = ctx.db.transaction(() => {
    const { plan, limits } = planLimitsOf(ctx, p.userId);
    if (countWindowsOfUser(ctx.db, p.userId) >= limits.maintenanceWindows)
      throw errors.planLimit(`at most ${limits.maintenanceWindows} maintenance windows on the ${plan} plan`);
    return insertWindow(ctx.db, p.userId, fields, ctx.clock.now());
  });
  windowsChanged(ctx);
  return findWindow(ctx.db, id)!;
}

/** PUT replaces the whole record (§4): absent fields take their defaults, not the stored values. */
export function putWindow(ctx: AppContext, p: Principal, id: number, input: WindowInput): WindowRow {
  ownWindow(ctx, p, id);
  const fields = validate(ctx, p, input);
  ctx.db.transaction(() => replaceWindow(ctx.db, id, fields));
  windowsChanged(ctx);
  return findWindow(ctx.db, id)!;
}

export function removeWindow(ctx: AppContext, p: Principal, id: number): void {
  ownWindow(ctx, p, id);
  ctx.db.transaction(() => deleteWindow(ctx.db, id));
  windowsChanged(ctx);
}

/** The record (§4); deleted channels and sources no longer show. */
export function presentWindow(ctx: AppContext, row: WindowRow) {
  const schedule = parseSchedule(row);
  const now = ctx.clock.now();
  const o = row.enabled === 1 ? currentOrNext(schedule, now) : null;
  const channelIds = windowChannels(row).filter((id) => findChannel(ctx.db, id)?.user_id === row.user_id);
  const monitors = windowSources(row).filter((m) => sourceKind(ctx, m.kind)?.find(ctx, m.id) !== undefined);
  return {
    id: row.id,
    name: row.name,
    channelIds,
    includeSubtree: row.include_subtree === 1,
    monitors,
    schedule:
      schedule.type === 'once'
        ? { type: 'once', startsAt: rfc3339(schedule.startsAt), endsAt: rfc3339(schedule.endsAt) }
        : schedule,
    enabled: row.enabled === 1,
    active: o !== null && o.startsAt <= now,
    nextStart: rfc3339OrNull(o?.startsAt),
    nextEnd: rfc3339OrNull(o?.endsAt),
    coveredChannelIds: coveredChannelIds(ctx, row),
    createdAt: rfc3339(row.created_at),
  };
}

import type { AppContext } from '../../context';
import { subtreeIds } from '../channels/access';
import { findChannel, parentOf } from '../channels/store';
import { statusChanged } from '../sources/messages';
import { currentOrNext, nextBoundary, type Schedule } from './schedule';
import { enabledWindows, type WindowRow } from './store';

/**
 * Which channels and sources maintenance windows cover now (docs/api.md, "Maintenance windows"). The
 * message and check paths ask isChannelCovered / isCovered on every message and check, so the answer
 * comes from an in-memory view of the active windows, recomputed only when a window changes or the
 * clock passes the next start or end of any enabled window (never by polling: the view knows when it
 * goes stale). Channel trees are read fresh: a channel is covered through an `includeSubtree` root by
 * walking its parents, so a child created during a window is covered at once.
 */

export interface WindowOccurrence {
  id: number;
  name: string;
  startsAt: number;
  endsAt: number;
  active: boolean;
}

export interface SourceKey {
  kind: string;
  id: number;
}

/** A family whose sources take the status `maintenance` (heartbeats, monitors). */
export interface MaintainedFamily {
  name: string;
  /**
   * Puts every covered, non-paused source of the family into `maintenance` and re-evaluates every
   * source in `maintenance` that is no longer covered (§1.4, §2.4). Returns the channels it changed.
   */
  sync(ctx: AppContext, now: number): Set<number>;
}

interface View {
  /** The clock time the view was computed for; valid until `until` (null: no boundary ahead). */
  at: number;
  until: number | null;
  /** Active windows by id, with what each names directly. */
  active: Map<number, { channels: number[]; subtree: boolean; sources: SourceKey[] }>;
  direct: Set<number>;
  subtreeRoots: Set<number>;
  sources: Set<string>;
}

interface Covered {
  channelIds: number[];
  sources: SourceKey[];
}

interface State {
  view: View | null;
  families: MaintainedFamily[];
  /** Active windows as last applied to the sources (null before the first sync of this server). */
  applied: Map<number, Covered> | null;
  /** The next start or end after the last sync: when the DueSource is due again. */
  appliedUntil: number | null;
}

const states = new WeakMap<AppContext, State>();

function stateOf(ctx: AppContext): State {
  let s = states.get(ctx);
  if (!s) {
    s = { view: null, families: [], applied: null, appliedUntil: null };
    states.set(ctx, s);
  }
  return s;
}

export function parseSchedule(row: WindowRow): Schedule {
  return JSON.parse(row.schedule) as Schedule;
}

export function windowChannels(row: WindowRow): number[] {
  return JSON.parse(row.channel_ids) as number[];
}

export function windowSources(row: WindowRow): SourceKey[] {
  return JSON.parse(row.monitors) as SourceKey[];
}

const key = (kind: string, id: number) => `${kind}:${id}`;

function compute(ctx: AppContext, now: number): View {
  const view: View = {
    at: now,
    until: null,
    active: new Map(),
    direct: new Set(),
    subtreeRoots: new Set(),
    sources: new Set(),
  };
  for (const row of enabledWindows(ctx.db)) {
    const schedule = parseSchedule(row);
    const b = nextBoundary(schedule, now);
    if (b !== null && (view.until === null || b < view.until)) view.until = b;
    const o = currentOrNext(schedule, now);
    if (!o || o.startsAt > now) continue;
    const channels = windowChannels(row);
    const sources = windowSources(row);
    const subtree = row.include_subtree === 1;
    view.active.set(row.id, { channels, subtree, sources });
    for (const c of channels) (subtree ? view.subtreeRoots : view.direct).add(c);
    for (const s of sources) view.sources.add(key(s.kind, s.id));
  }
  return view;
}

/** The view for the clock's now, recomputed when a boundary passed or a window changed. */
function view(ctx: AppContext): View {
  const s = stateOf(ctx);
  const now = ctx.clock.now();
  if (!s.view || now < s.view.at || (s.view.until !== null && now >= s.view.until))
    s.view = compute(ctx, now);
  return s.view;
}

/** True while an active window covers the channel (messages into it are silent). */
export function isChannelCovered(ctx: AppContext, appid: number): boolean {
  const v = view(ctx);
  if (v.active.size === 0) return false;
  if (v.direct.has(appid) || v.subtreeRoots.has(appid)) return true;
  if (v.subtreeRoots.size === 0) return false;
  const seen = new Set([appid]);
  for (let id = parentOf(ctx.db, appid); id !== null && !seen.has(id); id = parentOf(ctx.db, id)) {
    if (v.subtreeRoots.has(id)) return true;
    seen.add(id);
  }
  return false;
}

/** True while an active window covers the source (its own id, or its channel). */
export function isCovered(ctx: AppContext, s: { kind: string; id: number; appid: number }): boolean {
  const v = view(ctx);
  if (v.active.size === 0) return false;
  return v.sources.has(key(s.kind, s.id)) || isChannelCovered(ctx, s.appid);
}

/** `coveredChannelIds` of a window: its channels that still exist, with every descendant when asked. */
export function coveredChannelIds(ctx: AppContext, row: WindowRow): number[] {
  const out = new Set<number>();
  for (const id of windowChannels(row)) {
    const c = findChannel(ctx.db, id);
    if (!c || c.user_id !== row.user_id) continue;
    if (row.include_subtree === 1) for (const d of subtreeIds(ctx, id, () => true)) out.add(d);
    else out.add(id);
  }
  return [...out].sort((a, b) => a - b);
}

/** Everything covered now, channels with their descendants (what a family's sync walks). */
export function coveredNow(ctx: AppContext): { channelIds: number[]; sources: SourceKey[] } {
  const v = view(ctx);
  const channels = new Set(v.direct);
  for (const root of v.subtreeRoots) for (const d of subtreeIds(ctx, root, () => true)) channels.add(d);
  const sources = [...v.sources].map((k) => {
    const i = k.lastIndexOf(':');
    return { kind: k.slice(0, i), id: Number(k.slice(i + 1)) };
  });
  return { channelIds: [...channels], sources };
}

/**
 * Enabled windows covering any of these channels or sources, active now or starting within
 * `horizonMs`, each with its current-or-next occurrence (status pages' planned maintenance).
 */
export function windowsCovering(
  ctx: AppContext,
  q: { channelIds: number[]; sources: SourceKey[] },
  horizonMs: number,
): WindowOccurrence[] {
  const now = ctx.clock.now();
  const wanted = new Set(q.channelIds);
  const wantedSources = new Set(q.sources.map((s) => key(s.kind, s.id)));
  const out: WindowOccurrence[] = [];
  for (const row of enabledWindows(ctx.db)) {
    const o = currentOrNext(parseSchedule(row), now);
    if (!o || o.startsAt > now + horizonMs) continue;
    const hit =
      windowSources(row).some((s) => wantedSources.has(key(s.kind, s.id))) ||
      coveredChannelIds(ctx, row).some((c) => wanted.has(c));
    if (hit) out.push({ id: row.id, name: row.name, ...o, active: o.startsAt <= now });
  }
  return out.sort((a, b) => a.startsAt - b.startsAt || a.id - b.id);
}

// ---------------------------------------------------------------- applying coverage to sources

export function registerMaintained(ctx: AppContext, f: MaintainedFamily): void {
  stateOf(ctx).families.push(f);
}

/** A window was created, replaced or deleted: the view is stale and the sources are synced now. */
export function windowsChanged(ctx: AppContext): void {
  const s = stateOf(ctx);
  s.view = null;
  s.applied = s.applied ?? new Map();
  applyCoverage(ctx);
  if (s.appliedUntil !== null) ctx.due.poke(s.appliedUntil);
}

/**
 * DueSource 'maintenance': due at once after start (a window may have started or ended while the server
 * was down), then at the next start or end of any enabled window.
 */
export function maintenanceNextDue(ctx: AppContext): number | null {
  const s = stateOf(ctx);
  return s.applied === null ? 0 : s.appliedUntil;
}

export function runDueMaintenance(ctx: AppContext, _now: number): void {
  applyCoverage(ctx);
}

/**
 * Syncs every family's sources with the active windows, then announces each window that started or
 * ended (`maintenance:changed`, after the sources were set to or re-evaluated from `maintenance`) and
 * signals every covered channel (SSE `channel:status_changed`).
 */
export function applyCoverage(ctx: AppContext): void {
  const s = stateOf(ctx);
  const v = view(ctx);
  const before = s.applied ?? new Map<number, Covered>();
  const changed = new Set<number>();
  for (const f of s.families) for (const c of f.sync(ctx, v.at)) changed.add(c);
  const after = new Map<number, Covered>();
  for (const [id, info] of v.active) {
    const channelIds = info.subtree
      ? [...new Set(info.channels.flatMap((c) => subtreeIds(ctx, c, () => true)))]
      : info.channels;
    // What it covers now (a window replaced while active ends with its new coverage).
    const covered = { channelIds, sources: info.sources };
    after.set(id, covered);
    if (!before.has(id)) announce(ctx, covered, true, changed);
  }
  for (const [id, covered] of before) if (!v.active.has(id)) announce(ctx, covered, false, changed);
  s.applied = after;
  s.appliedUntil = v.until;
  for (const c of changed) statusChanged(ctx, c);
}

function announce(ctx: AppContext, c: Covered, active: boolean, changed: Set<number>): void {
  for (const id of c.channelIds) changed.add(id);
  ctx.bus.emit('maintenance:changed', { channelIds: c.channelIds, sources: c.sources, active });
}

import type { AppContext } from '../../context';

/**
 * The event-sources registry (docs/api.md, "Channels"): every source family (heartbeats now; monitors, port
 * scans, metric sources, web scripts, inboxes, router rules later) registers its kind here in its
 * Feature's init, and the channel routes (status, event-sources, the channel object's health fields)
 * and the history routes find sources through it without knowing any family. Registrations are kept
 * per server (keyed by its context), never shared between servers in one process.
 */
export interface SourceSummary {
  kind: string;
  id: number;
  name: string;
  appid: number;
  status: string;
  paused: boolean;
  lastCheckAt: number | null;
  statusSince: number | null;
  /** The user who owns the source (the channel's owner, or a share recipient with `send`). */
  userId: number;
}

export interface SourceKind {
  kind: string;
  /** Sources writing to these channels (all users' — the registry filters: the owner sees all, a share recipient their own). */
  listForChannels(ctx: AppContext, channelIds: number[]): SourceSummary[];
  /** One source by id (for /monitor-history and ownership), or undefined. */
  find(ctx: AppContext, id: number): SourceSummary | undefined;
}

/** Channel-object health fields, contributed by families (heartbeats contribute hbTotal..hbStatus). */
export interface ChannelHealthProvider {
  summarize(ctx: AppContext, channelIds: number[]): Map<number, Record<string, unknown>>;
}

interface Registrations {
  kinds: Map<string, SourceKind>;
  health: ChannelHealthProvider[];
}

const registrations = new WeakMap<AppContext, Registrations>();

function of(ctx: AppContext): Registrations {
  let r = registrations.get(ctx);
  if (!r) {
    r = { kinds: new Map(), health: [] };
    registrations.set(ctx, r);
  }
  return r;
}

export function registerSourceKind(ctx: AppContext, k: SourceKind): void {
  const r = of(ctx);
  if (r.kinds.has(k.kind)) throw new Error(`source kind ${k.kind} is registered twice`);
  r.kinds.set(k.kind, k);
}

export function registerChannelHealth(ctx: AppContext, p: ChannelHealthProvider): void {
  of(ctx).health.push(p);
}

export function sourceKind(ctx: AppContext, kind: string): SourceKind | undefined {
  return registrations.get(ctx)?.kinds.get(kind);
}

export function sourceKinds(ctx: AppContext): SourceKind[] {
  return [...(registrations.get(ctx)?.kinds.values() ?? [])];
}

/** The heartbeat fields every channel object carries; what they are when no heartbeat exists. */
export const HB_DEFAULTS = {
  hbTotal: 0,
  hbAlerting: 0,
  hbAlertingInfo: 0,
  hbPending: 0,
  hbStatus: 'none',
} as const;

export type ChannelHealth = Record<string, unknown>;

/**
 * The health fields of each channel: the defaults, overlaid with what every provider says. One query
 * per provider for the whole list (presenting `GET /application` must not ask once per channel).
 */
export function channelHealth(ctx: AppContext, channelIds: number[]): Map<number, ChannelHealth> {
  const out = new Map<number, ChannelHealth>();
  for (const id of channelIds) out.set(id, { ...HB_DEFAULTS });
  const providers = registrations.get(ctx)?.health ?? [];
  if (providers.length === 0 || channelIds.length === 0) return out;
  for (const p of providers)
    for (const [id, fields] of p.summarize(ctx, channelIds)) {
      const target = out.get(id);
      if (target) Object.assign(target, fields);
    }
  return out;
}

/** hbStatus from the counts (§1.6): the first that holds of none, alerting, degraded, pending, ok. */
export function hbStatusOf(c: {
  hbTotal: number;
  hbAlerting: number;
  hbAlertingInfo: number;
  hbPending: number;
}): string {
  if (c.hbTotal === 0) return 'none';
  if (c.hbAlerting > 0) return 'alerting';
  if (c.hbAlertingInfo > 0) return 'degraded';
  if (c.hbPending === c.hbTotal) return 'pending';
  return 'ok';
}

/**
 * The health of several channels summed (`?recursive=1` of the status endpoint): numeric fields add
 * up, hbStatus is derived again from the summed counts, any other field keeps the root channel's value.
 */
export function summedHealth(ctx: AppContext, rootId: number, channelIds: number[]): ChannelHealth {
  const all = channelHealth(ctx, channelIds);
  const out: ChannelHealth = { ...(all.get(rootId) ?? HB_DEFAULTS) };
  for (const [id, fields] of all) {
    if (id === rootId) continue;
    for (const [k, v] of Object.entries(fields))
      if (typeof v === 'number') out[k] = (typeof out[k] === 'number' ? (out[k] as number) : 0) + v;
  }
  out.hbStatus = hbStatusOf(out as Parameters<typeof hbStatusOf>[0]);
  return out;
}

/** Statuses that put a source on a status endpoint's `alerting` list (§1.6). */
export const ALERTING_STATUSES: ReadonlySet<string> = new Set(['down', 'late', 'firing', 'issues']);

/**
 * The sources on these channels that `viewerId` may see: every source on a channel the viewer owns,
 * only their own on a channel shared with them. `ownerOf` gives each channel's owner.
 */
export function visibleSources(
  ctx: AppContext,
  channelIds: number[],
  viewerId: number,
  ownerOf: (channelId: number) => number | undefined,
): SourceSummary[] {
  if (channelIds.length === 0) return [];
  const out: SourceSummary[] = [];
  for (const k of sourceKinds(ctx))
    for (const s of k.listForChannels(ctx, channelIds))
      if (s.userId === viewerId || ownerOf(s.appid) === viewerId) out.push(s);
  return out;
}

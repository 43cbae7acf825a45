import type { AppContext } from '../../context';
import { rfc3339 } from '../../lib/clock';
import { STATUS_INCIDENTS_SHOWN } from '../../lib/limits';
import {
  DAY_MS,
  HISTORY_DAYS_SHOWN,
  type HistoryInterval,
  hasHistoryKind,
  historyKey,
  type SourceUptime,
  uptimeOfMany,
} from '../history/service';
import { windowsCovering } from '../maintenance/coverage';
import { type SourceSummary, sourceKinds } from '../sources/registry';
import { brandingApplied } from './service';
import { type PageRow, subtreeOf } from './store';

/**
 * The public summary of a page (docs/api.md, "Status pages"): its services (every non-paused source with
 * uptime history on the page's channel or a descendant, found through the event-sources registry), their
 * 90-day bars, the incidents read from the status intervals, and the overall state. A fixed number of
 * queries whatever the number of services: one per source kind, one per history table.
 */

export type PublicStatus = 'up' | 'down' | 'maintenance' | 'pending' | 'unknown';
export type Overall = 'operational' | 'degraded' | 'outage' | 'maintenance';

const PUBLIC_STATUS: Record<string, PublicStatus> = {
  up: 'up',
  late: 'up',
  down: 'down',
  maintenance: 'maintenance',
  new: 'pending',
  pending: 'pending',
  unknown: 'unknown',
};

export function publicStatus(status: string): PublicStatus {
  return PUBLIC_STATUS[status] ?? 'unknown';
}

export interface Service extends SourceUptime {
  name: string;
  status: PublicStatus;
}

export interface Incident {
  title: string;
  status: 'open' | 'resolved';
  startedAt: string;
  resolvedAt?: string;
}

export interface MaintenanceEntry {
  name: string;
  startsAt: string;
  endsAt: string;
  active: boolean;
}

export interface Summary {
  slug: string;
  title: string;
  description: string;
  lang: 'en' | 'ru';
  generatedAt: string;
  brandingHidden: boolean;
  overall: Overall;
  overallUptime90d: number | null;
  services: Service[];
  incidents: Incident[];
  maintenance: MaintenanceEntry[];
}

/** Planned maintenance shown on a page: windows active now or starting within this. */
export const MAINTENANCE_HORIZON_MS = 7 * DAY_MS;

/** The page's services: non-paused sources with uptime history on its channel subtree, by name. */
export function servicesOf(ctx: AppContext, channels: number[]): SourceSummary[] {
  const out: SourceSummary[] = [];
  for (const k of sourceKinds(ctx)) {
    if (!hasHistoryKind(ctx, k.kind)) continue;
    for (const s of k.listForChannels(ctx, channels)) if (!s.paused) out.push(s);
  }
  return out.sort(
    (a, b) => a.name.localeCompare(b.name, 'en') || a.kind.localeCompare(b.kind, 'en') || a.id - b.id,
  );
}

/**
 * Incidents of one source from its intervals (oldest first): a transition to `down`, continued across
 * `unknown` gaps (a monitor still down after a restart sends no second down message), ended by the first
 * interval of any other status (its start is `resolvedAt`).
 */
export function incidentsOf(
  intervals: readonly HistoryInterval[],
): { startedAt: number; resolvedAt: number | null }[] {
  const out: { startedAt: number; resolvedAt: number | null }[] = [];
  let current: { startedAt: number; resolvedAt: number | null } | null = null;
  for (const iv of intervals) {
    if (iv.status === 'unknown') continue;
    if (iv.status === 'down') {
      if (!current) {
        current = { startedAt: iv.start_at, resolvedAt: null };
        out.push(current);
      }
    } else if (current) {
      current.resolvedAt = iv.start_at;
      current = null;
    }
  }
  return out;
}

/** `overall`, the first that holds: outage, degraded, maintenance, operational. */
export function overallOf(statuses: readonly PublicStatus[]): Overall {
  const judged = statuses.filter((s) => s === 'up' || s === 'down');
  if (judged.length > 0 && judged.every((s) => s === 'down')) return 'outage';
  if (statuses.includes('down')) return 'degraded';
  if (statuses.includes('maintenance')) return 'maintenance';
  return 'operational';
}

/** Mean of the non-null uptimes, truncated to 3 decimals (in thousandths, so no float drift). */
export function meanUptime(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null).map((v) => Math.round(v * 1000));
  if (known.length === 0) return null;
  return Math.floor(known.reduce((a, b) => a + b, 0) / known.length) / 1000;
}

export function buildSummary(ctx: AppContext, page: PageRow): Summary {
  const now = ctx.clock.now();
  const channels = subtreeOf(ctx.db, page.channel_id);
  const sources = servicesOf(ctx, channels);
  const { uptime, intervals } = uptimeOfMany(ctx, sources, now);
  const byKey = new Map<string, HistoryInterval[]>();
  for (const iv of intervals) {
    const key = historyKey(iv.kind, iv.source_id);
    const list = byKey.get(key) ?? [];
    list.push(iv);
    byKey.set(key, list);
  }
  const services: Service[] = [];
  const found: { at: number; incident: Incident }[] = [];
  const since = now - HISTORY_DAYS_SHOWN * DAY_MS;
  for (const s of sources) {
    const key = historyKey(s.kind, s.id);
    const u = uptime.get(key)!;
    services.push({ name: s.name, status: publicStatus(s.status), uptime90d: u.uptime90d, days: u.days });
    for (const i of incidentsOf(byKey.get(key) ?? [])) {
      if (i.startedAt < since) continue;
      const incident: Incident = {
        title: `${s.name} is down`,
        status: i.resolvedAt === null ? 'open' : 'resolved',
        startedAt: rfc3339(i.startedAt),
      };
      if (i.resolvedAt !== null) incident.resolvedAt = rfc3339(i.resolvedAt);
      found.push({ at: i.startedAt, incident });
    }
  }
  found.sort((a, b) => b.at - a.at);
  return {
    slug: page.slug,
    title: page.title,
    description: page.description,
    lang: page.lang,
    generatedAt: rfc3339(now),
    brandingHidden: brandingApplied(ctx, page),
    overall: overallOf(services.map((s) => s.status)),
    overallUptime90d: meanUptime(services.map((s) => s.uptime90d)),
    services,
    incidents: found.slice(0, STATUS_INCIDENTS_SHOWN).map((f) => f.incident),
    maintenance: windowsCovering(
      ctx,
      {
        channelIds: [...new Set(sources.map((x) => x.appid))],
        sources: sources.map((x) => ({ kind: x.kind, id: x.id })),
      },
      MAINTENANCE_HORIZON_MS,
    ).map((w) => ({
      name: w.name,
      startsAt: rfc3339(w.startsAt),
      endsAt: rfc3339(w.endsAt),
      active: w.active,
    })),
  };
}

import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import type { PlanName } from '../../lib/limits';
import { listVisible } from '../channels/access';
import { DAY_MS, utcDay } from '../quota/service';
import { planAndUsage } from '../quota/store';
import { ALERTING_STATUSES, type SourceSummary, visibleSources } from '../sources/registry';

/**
 * What the assistant knows of a user (docs/assistant.md): counts, quota, sources and deliveries of the
 * channels they own or receive (accepted shares). Read once per question or insight run; nothing here is
 * a message body, a title, a token or an address.
 */
export interface ChannelFacts {
  id: number;
  name: string;
  owned: boolean;
  messages: number;
  unread: number;
  /** Messages of the last 24 h. */
  day: number;
  /** Messages of the 7 days before the last 24 h. */
  week: number;
}

export interface FailedDeliveries {
  appid: number;
  channel: string;
  count: number;
}

export interface UserFacts {
  now: number;
  channels: ChannelFacts[];
  totals: { channels: number; messages: number; unread: number };
  quota: { plan: string; used: number; limit: number };
  sources: SourceSummary[];
  /** Sources in an alerting state: down, late, firing, issues. */
  failing: SourceSummary[];
  /** Failed outbox entries of the last 24 h, per channel the user owns. */
  failedDeliveries: FailedDeliveries[];
  /** Up to three channels with the most messages in 24 h (none with zero). */
  busiest: ChannelFacts[];
}

const HOUR_MS = 3_600_000;

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(',');
}

export function gatherFacts(ctx: AppContext, p: Principal): UserFacts {
  const userId = p.userId;
  const now = ctx.clock.now();
  const db = ctx.db;
  // The caller's own view (device or unscoped token): own channels, then accepted shares.
  const visible = listVisible(ctx, p);
  const ids = visible.map((v) => v.row.id);
  const byId = new Map<number, ChannelFacts>();
  for (const v of visible)
    byId.set(v.row.id, {
      id: v.row.id,
      name: v.row.name,
      owned: v.owned,
      messages: 0,
      unread: 0,
      day: 0,
      week: 0,
    });
  if (ids.length > 0) {
    const q = placeholders(ids.length);
    const counts = db.all<{ channel_id: number; n: number; day: number; week: number }>(
      `SELECT channel_id, COUNT(*) AS n, SUM(CASE WHEN date >= ? THEN 1 ELSE 0 END) AS day,
              SUM(CASE WHEN date >= ? AND date < ? THEN 1 ELSE 0 END) AS week
         FROM messages WHERE channel_id IN (${q}) GROUP BY channel_id`,
      [now - DAY_MS, now - 8 * DAY_MS, now - DAY_MS, ...ids],
    );
    for (const c of counts) {
      const f = byId.get(c.channel_id)!;
      f.messages = c.n;
      f.day = c.day ?? 0;
      f.week = c.week ?? 0;
    }
    const unread = db.all<{ channel_id: number; n: number }>(
      `SELECT m.channel_id, COUNT(*) AS n FROM messages m
         LEFT JOIN channel_reads cr ON cr.user_id = ? AND cr.channel_id = m.channel_id
        WHERE m.channel_id IN (${q}) AND (cr.read_up_to IS NULL OR m.id > cr.read_up_to)
          AND NOT EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = m.id AND r.user_id = ?)
        GROUP BY m.channel_id`,
      [userId, ...ids, userId],
    );
    for (const u of unread) byId.get(u.channel_id)!.unread = u.n;
  }
  const channels = [...byId.values()];
  const owners = new Map(visible.map((v) => [v.row.id, v.row.user_id]));
  const sources = visibleSources(ctx, ids, userId, (id) => owners.get(id));
  const failing = sources.filter((s) => !s.paused && ALERTING_STATUSES.has(s.status));
  const failedDeliveries = db
    .all<{ appid: number; n: number }>(
      `SELECT appid, COUNT(*) AS n FROM deliveries
        WHERE user_id = ? AND status = 'failed' AND COALESCE(last_attempt_at, created_at) >= ?
        GROUP BY appid ORDER BY n DESC, appid`,
      [userId, now - DAY_MS],
    )
    .filter((d) => byId.has(d.appid))
    .map((d) => ({ appid: d.appid, channel: byId.get(d.appid)!.name, count: d.n }));
  const busiest = channels
    .filter((c) => c.day > 0)
    .sort((a, b) => b.day - a.day || a.id - b.id)
    .slice(0, 3);
  const usage = planAndUsage(db, userId, utcDay(now));
  const plan = usage?.plan ?? 'free';
  return {
    now,
    channels,
    totals: {
      channels: channels.length,
      messages: channels.reduce((s, c) => s + c.messages, 0),
      unread: channels.reduce((s, c) => s + c.unread, 0),
    },
    quota: { plan, used: usage?.used ?? 0, limit: ctx.config.plans[plan as PlanName]?.eventsPerDay ?? 0 },
    sources,
    failing,
    failedDeliveries,
    busiest,
  };
}

/** How long a source has been in its status, when known. */
export function statusAge(s: SourceSummary, now: number): number | null {
  return s.statusSince === null ? null : Math.max(0, now - s.statusSince);
}

export { HOUR_MS };

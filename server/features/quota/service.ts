import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { type PlanName, STORAGE_SNAPSHOT_TTL_MS } from '../../lib/limits';
import { type PlanCaps, planCaps } from '../plans/caps';
import {
  addUsage,
  deleteMinutesBefore,
  lifetimeUsage,
  messageStorage,
  minutesOfDay,
  planAndUsage,
  usageOfDay,
} from './store';

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;
/** Per-minute rows are kept this long (the per-day totals are kept for good). */
export const QUOTA_MINUTES_RETENTION_MS = 35 * DAY_MS;

/** The UTC day number (days since the epoch) of a time; the quota day of the contract. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/**
 * Spends `count` events of the user's daily quota (UTC day, limit `eventsPerDay` of the user's plan).
 * All or nothing: when fewer than `count` remain, nothing is spent and 429 `daily event quota exceeded`
 * is thrown. Synchronous and journaled only, so it can run inside the caller's db.transaction (and is
 * rolled back with it): one indexed read and two UPSERTs.
 */
export function consumeEvents(ctx: AppContext, userId: number, count = 1): void {
  if (!Number.isInteger(count) || count <= 0) return;
  const now = ctx.clock.now();
  const day = utcDay(now);
  const row = planAndUsage(ctx.db, userId, day);
  if (!row) throw errors.notFound('user');
  const limit = ctx.config.plans[row.plan as PlanName]?.eventsPerDay ?? 0;
  if (row.used + count > limit) throw errors.dailyQuotaExceeded();
  addUsage(ctx.db, userId, day, Math.floor(now / MINUTE_MS), count);
}

/** Events left today (for callers that want to check before doing work). */
export function remainingEvents(ctx: AppContext, userId: number): number {
  const row = planAndUsage(ctx.db, userId, utcDay(ctx.clock.now()));
  if (!row) return 0;
  return Math.max(0, (ctx.config.plans[row.plan as PlanName]?.eventsPerDay ?? 0) - row.used);
}

/** `eventCounter` (quota events spent today) and `messageCounter` (every message ever accepted). */
export function userCounters(
  ctx: AppContext,
  userId: number,
): { eventCounter: number; messageCounter: number } {
  return {
    eventCounter: usageOfDay(ctx.db, userId, utcDay(ctx.clock.now())),
    messageCounter: lifetimeUsage(ctx.db, userId),
  };
}

export interface StorageSnapshot {
  messages: number;
  messageBytes: number;
  imageBytes: number;
  totalBytes: number;
}

/**
 * Summing a user's messages reads every one of them (a few hundred ms at a million), and
 * `GET /current/user` is called on every client start: the sum is a snapshot, cached per user for
 * STORAGE_SNAPSHOT_TTL_MS.
 */
const storageCache = new WeakMap<
  AppContext,
  Map<number, { at: number; value: { messages: number; bytes: number } }>
>();

function cachedMessageStorage(ctx: AppContext, userId: number): { messages: number; bytes: number } {
  let byUser = storageCache.get(ctx);
  if (!byUser) {
    byUser = new Map();
    storageCache.set(ctx, byUser);
  }
  const now = ctx.clock.now();
  const hit = byUser.get(userId);
  if (hit && now - hit.at < STORAGE_SNAPSHOT_TTL_MS) return hit.value;
  const value = messageStorage(ctx.db, userId);
  byUser.set(userId, { at: now, value });
  return value;
}

export function storageSnapshot(ctx: AppContext, userId: number, image: string | null): StorageSnapshot {
  const m = cachedMessageStorage(ctx, userId);
  let imageBytes = 0;
  if (image) {
    try {
      imageBytes = statSync(join(ctx.config.dataDir, 'uploads', 'avatars', image)).size;
    } catch {
      imageBytes = 0;
    }
  }
  return { messages: m.messages, messageBytes: m.bytes, imageBytes, totalBytes: m.bytes + imageBytes };
}

export interface QuotaBreakdown {
  day: string;
  plan: PlanName;
  limit: number;
  used: number;
  remaining: number;
  hours: { at: string; count: number }[];
  minutes: { at: string; count: number }[];
  storage: StorageSnapshot;
  caps: PlanCaps;
}

/** `GET /user/quota-breakdown`: every hour of the day (zeros included), the minutes that had events. */
export function quotaBreakdown(
  ctx: AppContext,
  user: { id: number; plan: PlanName; image: string | null },
  dayStartMs: number,
): QuotaBreakdown {
  const day = utcDay(dayStartMs);
  const firstMinute = day * 1440;
  const minutes = minutesOfDay(ctx.db, user.id, firstMinute);
  const hourCounts = new Array<number>(24).fill(0);
  for (const m of minutes) hourCounts[Math.floor((m.minute - firstMinute) / 60)]! += m.count;
  const used = usageOfDay(ctx.db, user.id, day);
  const limit = ctx.config.plans[user.plan].eventsPerDay;
  return {
    day: rfc3339(day * DAY_MS).slice(0, 10),
    plan: user.plan,
    limit,
    used,
    remaining: Math.max(0, limit - used),
    hours: hourCounts.map((count, h) => ({ at: rfc3339(day * DAY_MS + h * 3_600_000), count })),
    minutes: minutes.map((m) => ({ at: rfc3339(m.minute * MINUTE_MS), count: m.count })),
    storage: storageSnapshot(ctx, user.id, user.image),
    caps: planCaps(ctx, user.id),
  };
}

/** Retention hook: per-minute rows older than QUOTA_MINUTES_RETENTION_MS. */
export function pruneQuotaMinutes(ctx: AppContext): number {
  return deleteMinutesBefore(ctx.db, Math.floor((ctx.clock.now() - QUOTA_MINUTES_RETENTION_MS) / MINUTE_MS));
}

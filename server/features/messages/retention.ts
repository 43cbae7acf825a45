import type { AppContext } from '../../context';
import {
  RETENTION_BATCH,
  RETENTION_MAX_AGE_MS,
  RETENTION_PER_CHANNEL_MAX,
  RETENTION_TOTAL_MAX,
} from '../../lib/limits';

export interface RetentionLimits {
  perChannel: number;
  maxAgeMs: number;
  total: number;
}

export const DEFAULT_RETENTION: RetentionLimits = {
  perChannel: RETENTION_PER_CHANNEL_MAX,
  maxAgeMs: RETENTION_MAX_AGE_MS,
  total: RETENTION_TOTAL_MAX,
};

/**
 * Keeps memory bounded (docs/api.md "Retention"): oldest first, in batches of RETENTION_BATCH rows per
 * transaction so one run never holds the event loop for long. Returns the rows removed.
 */
export function messageRetention(limits: RetentionLimits = DEFAULT_RETENTION) {
  return (ctx: AppContext): number =>
    byAge(ctx, limits.maxAgeMs) + perChannel(ctx, limits.perChannel) + total(ctx, limits.total);
}

/** Ids grow with time, so the oldest rows are at the start of the primary key: stop at the first young one. */
function byAge(ctx: AppContext, maxAgeMs: number): number {
  const cutoff = ctx.clock.now() - maxAgeMs;
  let removed = 0;
  for (;;) {
    const rows = ctx.db.all<{ id: number; date: number }>(
      'SELECT id, date FROM messages ORDER BY id LIMIT ?',
      [RETENTION_BATCH],
    );
    const old = rows.filter((r) => r.date < cutoff);
    if (old.length === 0) return removed;
    const last = old[old.length - 1]!.id;
    removed += ctx.db.transaction(
      () => ctx.db.run('DELETE FROM messages WHERE id <= ? AND date < ?', [last, cutoff]).changes,
    );
    if (old.length < rows.length || rows.length < RETENTION_BATCH) return removed;
  }
}

function perChannel(ctx: AppContext, max: number): number {
  const over = ctx.db.all<{ channel_id: number; n: number }>(
    'SELECT channel_id, count(*) AS n FROM messages GROUP BY channel_id HAVING count(*) > ?',
    [max],
  );
  let removed = 0;
  for (const { channel_id } of over) {
    // The newest `max` stay: everything at or below the (max+1)-th newest id goes.
    const edge = ctx.db.first<{ id: number }>(
      'SELECT id FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
      [channel_id, max],
    );
    if (!edge) continue;
    removed += deleteUpTo(ctx, 'channel_id = ? AND', [channel_id], edge.id);
  }
  return removed;
}

function total(ctx: AppContext, max: number): number {
  const n = ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages')!.n;
  if (n <= max) return 0;
  const edge = ctx.db.first<{ id: number }>('SELECT id FROM messages ORDER BY id LIMIT 1 OFFSET ?', [
    n - max - 1,
  ]);
  return edge ? deleteUpTo(ctx, '', [], edge.id) : 0;
}

function deleteUpTo(ctx: AppContext, where: string, params: number[], maxId: number): number {
  let removed = 0;
  for (;;) {
    const n = ctx.db.transaction(
      () =>
        ctx.db.run(
          `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} id <= ? ORDER BY id LIMIT ?)`,
          [...params, maxId, RETENTION_BATCH],
        ).changes,
    );
    removed += n;
    if (n < RETENTION_BATCH) return removed;
  }
}

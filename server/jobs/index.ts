import type { RetentionRegistry } from './retention';
import type { Job } from './scheduler';

export const SNAPSHOT_CHECK_INTERVAL_MS = 60_000;
export const RETENTION_INTERVAL_MS = 10 * 60_000;

/** The list of background jobs. Families add theirs here. */
export function coreJobs(retention: RetentionRegistry): Job[] {
  return [
    {
      name: 'snapshot',
      intervalMs: SNAPSHOT_CHECK_INTERVAL_MS,
      run: async (ctx) => {
        await ctx.store.maybeSnapshot();
      },
    },
    {
      name: 'retention',
      intervalMs: RETENTION_INTERVAL_MS,
      run: async (ctx) => {
        const removed = retention.run(ctx);
        const total = Object.values(removed).reduce((a, b) => a + b, 0);
        if (total > 0) ctx.log.info('retention removed rows', removed);
      },
    },
  ];
}

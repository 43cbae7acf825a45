import type { AppContext } from '../../context';
import type { TriggerKeptIndex } from '../../db/replay-index';
import type { Job } from '../../jobs/scheduler';

/** The search index as migration 0003 keeps it: filled in one go at the end of a journal replay. */
export const MESSAGE_SEARCH_INDEX: TriggerKeptIndex = {
  fts: 'messages_fts',
  content: 'messages',
  columns: ['title', 'message'],
  insertTrigger: 'messages_fts_insert',
  deleteTrigger: 'messages_fts_delete',
};

/** How often the search index is tidied, and how much of the event loop one tidy may take. */
export const SEARCH_INDEX_MERGE_INTERVAL_MS = 1_000;
export const SEARCH_INDEX_MERGE_BUDGET_MS = 5;

/**
 * FTS4 merges the segments of its index when a level fills up, inside the INSERT that fills it. Next
 * to a million messages such a merge takes seconds, and sql.js runs on the event loop: the whole
 * server stalls. This job does the same merging ahead of time in small steps (`merge=2,2`: about 2
 * pages of work each) between requests, within a time budget, so levels never fill up. Measured with
 * 20,000 inserts next to a 1M-message index: the longest insert stall fell from ~2.7 s to ~0.2 s; a
 * step takes 9 ms at p99 and 29 ms at most (`merge=8,2` steps took up to 200 ms).
 *
 * It runs only when no HTTP request has come or gone for QUIET_AFTER_MS (activity.ts), so it never delays
 * a burst of requests. The steps are relaxed writes: journaled, so replay repeats them at the same
 * points, but nobody waits for them and losing the last few in a crash only leaves the index less merged.
 */
export function searchIndexMergeJob(budgetMs = SEARCH_INDEX_MERGE_BUDGET_MS): Job {
  return {
    name: 'search-index-merge',
    intervalMs: SEARCH_INDEX_MERGE_INTERVAL_MS,
    run: (ctx) => {
      // Only in quiet moments: under sustained traffic FTS4 falls back to merging inside inserts.
      if (ctx.activity.quiet()) mergeSearchIndex(ctx, budgetMs);
    },
  };
}

/** Runs merge steps until there is no work left or the budget is spent; returns the steps that did work. */
export function mergeSearchIndex(ctx: AppContext, budgetMs: number): number {
  const started = performance.now();
  let steps = 0;
  while (performance.now() - started < budgetMs) {
    // Nothing to merge unless some level holds two segments: checked first, so an idle server neither
    // writes nor wakes the disk.
    if (!ctx.db.first('SELECT 1 AS x FROM messages_fts_segdir GROUP BY level HAVING count(*) >= 2 LIMIT 1'))
      break;
    const before = totalChanges(ctx);
    ctx.db.relaxed(() => ctx.db.run("INSERT INTO messages_fts(messages_fts) VALUES ('merge=2,2')"));
    // SQLite's documented test: fewer than 2 rows changed means the merge found nothing to do.
    if (totalChanges(ctx) - before < 2) break;
    steps++;
  }
  return steps;
}

function totalChanges(ctx: AppContext): number {
  return ctx.db.first<{ n: number }>('SELECT total_changes() AS n')!.n;
}

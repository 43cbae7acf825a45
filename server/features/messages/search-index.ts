import type { AppContext } from '../../context';
import type { Db } from '../../db/database';
import type { TriggerKeptIndex } from '../../db/replay-index';
import type { DueSource } from '../../jobs/due';
import type { Job } from '../../jobs/scheduler';

/**
 * The search index as migrations 0003–0007 kept it, by an insert and a delete trigger. Since 0008 there
 * is no insert trigger (SearchIndexer below), so ReplayIndexing.begin finds nothing to defer; the entry
 * stays for a journal written before 0008 (an upgrade replays it under the old triggers, then migrates).
 */
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

/**
 * The longest a new message waits for the search index: the indexer runs this long after the first
 * message it has not indexed yet. GET /message/search does not wait for it (flushSearchIndex).
 */
export const SEARCH_INDEX_LAG_MS = 250;
/** Messages indexed per transaction at most: a catch-up after a crash or a burst goes in bounded steps. */
export const SEARCH_INDEX_BATCH_ROWS = 2_000;
/**
 * The background indexer sizes its batches to take about this long: a batch holds the event loop, so a
 * message that becomes durable meanwhile waits for it before it is pushed to the sockets. 2,000 messages
 * took ~8 ms next to a small index and 40 ms (p50) to 165 ms (p99) next to a 1M-message one.
 */
export const SEARCH_INDEX_BATCH_MS = 4;
/** Nor fewer than this many rows: each batch is an FTS4 segment, and tiny ones only add merge work. */
export const SEARCH_INDEX_MIN_ROWS = 50;

export interface IndexBatch {
  /** Messages indexed by this batch. */
  indexed: number;
  /** More messages are waiting than one batch took. */
  more: boolean;
}

/**
 * Indexes up to `maxRows` messages above the watermark (search_index_state.indexed_up_to, migration
 * 0008) in one transaction: one INSERT … SELECT (one FTS4 segment however many rows) and the new
 * watermark. Journaled like any write, as relaxed: nobody waits for its fsync, and a batch lost in a
 * crash left its watermark behind with it, so the next batch redoes exactly that work.
 */
export function indexSearchBatch(db: Db, maxRows = SEARCH_INDEX_BATCH_ROWS): IndexBatch {
  const from = db.first<{ w: number }>('SELECT indexed_up_to AS w FROM search_index_state WHERE id = 1')!.w;
  const top = db.first<{ top: number | null }>('SELECT max(id) AS top FROM messages')!.top;
  if (top === null || top <= from) return { indexed: 0, more: false };
  // The last id this batch takes (ids have gaps: deletes, rolled back inserts).
  const batch = db.first<{ n: number; upTo: number }>(
    'SELECT count(*) AS n, max(id) AS upTo FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)',
    [from, maxRows],
  )!;
  const upTo = batch.n < maxRows ? top : batch.upTo;
  db.relaxed(() => {
    db.run(
      `INSERT INTO messages_fts (docid, title, message)
         SELECT id, title, message FROM messages WHERE id > ? AND id <= ? ORDER BY id`,
      [from, upTo],
    );
    db.run('UPDATE search_index_state SET indexed_up_to = ? WHERE id = 1', [upTo]);
  });
  return { indexed: batch.n, more: upTo < top };
}

/**
 * A search indexes at most this many batches first (10,000 messages: far more than SEARCH_INDEX_LAG_MS
 * of any traffic). Only the rebuild after the upgrade to 0008 leaves more waiting; a search meanwhile
 * sees what is indexed so far instead of waiting for all of it.
 */
export const SEARCH_FLUSH_MAX_BATCHES = 5;

/** Indexes the messages not indexed yet, batch after batch (at most `maxBatches`); returns how many. */
export function indexAllPending(db: Db, maxBatches = Number.POSITIVE_INFINITY): number {
  let n = 0;
  for (let i = 0; i < maxBatches; i++) {
    const b = indexSearchBatch(db);
    n += b.indexed;
    if (!b.more) break;
  }
  return n;
}

/**
 * Before a search (and at shutdown): whatever is waiting goes into the index now, so a search never
 * misses an acknowledged message. Usually nothing or a few rows (at most SEARCH_INDEX_LAG_MS of
 * traffic). A store refusing writes (disk full) must not fail the search: it then sees the index as
 * the last batch left it, and the indexer catches up once writes work again.
 */
export function flushSearchIndex(ctx: AppContext, maxBatches = SEARCH_FLUSH_MAX_BATCHES): number {
  try {
    return indexAllPending(ctx.db, maxBatches);
  } catch (err) {
    ctx.log.warn('search index catch-up failed; searching what is indexed', { err });
    return 0;
  }
}

/**
 * Keeps the search index up to date off the request path: a due source (server/jobs/due.ts) that is
 * due SEARCH_INDEX_LAG_MS after the first message it has not indexed, and then indexes one batch per
 * run (the due timer runs it again at once while more are waiting, letting requests in between).
 * New messages are noted from `message:created` (after commit); nextDueAt also looks at the database
 * itself (two lookups by primary key), so rows nobody announced (a start-up after a crash, a journal
 * replay) are caught up too.
 */
export class SearchIndexer implements DueSource {
  readonly name = 'search-index';
  /** ctx.clock time of the oldest message not indexed yet, when known. */
  private pendingSince: number | null = null;
  /** Estimated ms a row costs, from the batches so far (their real duration, not ctx.clock). */
  private msPerRow: number | null = null;

  constructor(
    private readonly lagMs = SEARCH_INDEX_LAG_MS,
    /** Reads real elapsed time for the batch sizing (a test passes its own). */
    private readonly elapsedMs: () => number = () => performance.now(),
  ) {}

  /** Registers with the due timer and listens for new messages (feature init). */
  attach(ctx: AppContext): void {
    ctx.bus.on('message:created', () => this.noteInsert(ctx));
    ctx.due.register(this);
  }

  /** A message was committed: the indexer is due `lagMs` after the oldest one still waiting. */
  noteInsert(ctx: AppContext): void {
    if (this.pendingSince !== null) return;
    this.pendingSince = ctx.clock.now();
    ctx.due.poke(this.pendingSince + this.lagMs);
  }

  nextDueAt(ctx: AppContext): number | null {
    const now = ctx.clock.now();
    // Unknown, or noted before the wall clock went back: the lag counts from now.
    if (this.pendingSince === null || this.pendingSince > now) {
      if (!hasUnindexed(ctx.db)) return null;
      this.pendingSince = now;
    }
    return this.pendingSince + this.lagMs;
  }

  /** The next batch's size: about SEARCH_INDEX_BATCH_MS of work at the cost per row seen so far. */
  batchRows(): number {
    if (this.msPerRow === null) return SEARCH_INDEX_MIN_ROWS * 4;
    const rows = Math.round(SEARCH_INDEX_BATCH_MS / this.msPerRow);
    return Math.min(SEARCH_INDEX_BATCH_ROWS, Math.max(SEARCH_INDEX_MIN_ROWS, rows));
  }

  runDue(ctx: AppContext): void {
    const t0 = this.elapsedMs();
    const b = indexSearchBatch(ctx.db, this.batchRows());
    // Batches of a handful of rows (live traffic) say more about the fixed cost than about a row's.
    if (b.indexed >= SEARCH_INDEX_MIN_ROWS) {
      const perRow = (this.elapsedMs() - t0) / b.indexed;
      this.msPerRow = this.msPerRow === null ? perRow : 0.7 * this.msPerRow + 0.3 * perRow;
    }
    // Still behind after a full batch: due again at once (the due timer lets I/O in between runs).
    if (!b.more) this.pendingSince = null;
    else this.pendingSince = ctx.clock.now() - this.lagMs;
  }
}

function hasUnindexed(db: Db): boolean {
  return (
    db.first<{ p: number }>(
      `SELECT coalesce((SELECT max(id) FROM messages), 0) >
         (SELECT indexed_up_to FROM search_index_state WHERE id = 1) AS p`,
    )!.p === 1
  );
}

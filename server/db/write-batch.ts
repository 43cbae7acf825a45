import type { Db } from './database';

/**
 * Group commit for the hottest writes (POST /message, router ingest): the writes that arrive within one
 * turn of the event loop run in ONE transaction, each inside its own savepoint. A failing write rolls
 * back alone and its caller gets its own error (404, 413, 429); the others commit. A burst then pays
 * SQLite's BEGIN/COMMIT — the dirty pages of the messages table, its indexes and the quota rows written
 * into the in-memory file — and the journal's record framing once per batch instead of once per write.
 *
 * Durability is unchanged: each write's promise settles after the batch's COMMIT, and the HTTP answer
 * still waits for the journal fsync that covers the batch (http/durable.ts), so an acknowledged write
 * survives a crash; an unacknowledged one may be lost with its batch, as before. Bus events of the batch
 * (`message:created`) leave after the COMMIT (Db.afterCommit). The added latency is at most one turn of
 * the loop (setImmediate).
 *
 * `fn` must not await, and writes inside its own `db.transaction` (a savepoint of the batch's): it runs
 * exactly as it would alone, so what it throws after its transaction (the router's 429 for an event it
 * kept) leaves that transaction's writes in place, as alone.
 */
interface Job {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** A batch never holds the loop longer than this many writes. */
export const WRITE_BATCH_MAX = 64;

const queues = new WeakMap<Db, Job[]>();

export function inWriteBatch<T>(db: Db, fn: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let queue = queues.get(db);
    if (!queue) {
      queue = [];
      queues.set(db, queue);
    }
    queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
    if (queue.length === 1) setImmediate(() => flush(db));
  });
}

function flush(db: Db): void {
  const queue = queues.get(db);
  if (!queue || queue.length === 0) return;
  const jobs = queue.splice(0, WRITE_BATCH_MAX);
  if (queue.length > 0) setImmediate(() => flush(db));
  if (jobs.length === 1) {
    // Alone: its own transaction, as without batching.
    const job = jobs[0]!;
    let value: unknown;
    try {
      value = job.fn();
    } catch (err) {
      job.reject(err);
      return;
    }
    job.resolve(value);
    return;
  }
  const settled: (() => void)[] = [];
  try {
    db.transaction(() => {
      for (const job of jobs) {
        try {
          // The job's own transaction, nested, is a savepoint of the batch's.
          const value = job.fn();
          settled.push(() => job.resolve(value));
        } catch (err) {
          settled.push(() => job.reject(err));
        }
      }
    });
  } catch (err) {
    // The batch's COMMIT failed (nothing of it is stored), or an after-commit callback threw
    // (Db.afterCommit): every write of the batch gets the error, as each would alone. sendMessages logs
    // what its message:created listeners throw instead, so a stored message is never answered with a 500.
    for (const job of jobs) job.reject(err);
    return;
  }
  for (const s of settled) s();
}

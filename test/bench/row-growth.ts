/**
 * Measuring aid (not a benchmark with a target): what a stored row costs in Belfry's sql.js store by its
 * size, while the database file grows and while it reuses free pages, beside this machine's cost of
 * touching a fresh page of memory. Written for issue 17's router ratio: a 4 kB webhook event costs several
 * times a message-sized row, and this tells how much of that is the row's bytes and how much the new pages
 * of a growing file.
 *   npx tsx test/bench/row-growth.ts
 * Rows go in as the router stores them: transactions of 32, a body as bytes, on the store's own PRAGMAs and
 * MEMFS storage (snapshot.ts / memfs.ts). "reusing" first fills the table with 40,000 4 kB rows and deletes
 * them, so the inserts land in free pages (what a store at its retention size does).
 */
import { emptyDatabase } from '../../server/db/snapshot';

const ROWS = 6_400;
const BATCH = 32;
const ROUNDS = 5;
const PAGE = 4096;
const MB = 1 << 20;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** µs a row, per round, for `ROUNDS` rounds of `ROWS` inserts. */
async function rowCost(size: 'message' | 'event', reuse: boolean): Promise<number[]> {
  const db = await emptyDatabase();
  try {
    db.exec(
      'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY;',
    );
    db.exec(
      'CREATE TABLE e (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, headers TEXT, body, at INTEGER); CREATE INDEX e_u ON e(user_id, id)',
    );
    if (reuse) {
      db.exec(
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 40000) INSERT INTO e (user_id, headers, body, at) SELECT 1, 'h', zeroblob(4000), i FROM c",
      );
      db.exec('DELETE FROM e');
    }
    const insert = db.prepare('INSERT INTO e (user_id, headers, body, at) VALUES (?, ?, ?, ?)');
    const begin = db.prepare('BEGIN');
    const commit = db.prepare('COMMIT');
    // A message: ~120 bytes of text; an event: a 3.2 kB body and 0.8 kB of headers (a GitHub push).
    const body = size === 'message' ? Buffer.from('m'.repeat(120)) : Buffer.from('x'.repeat(3_200));
    const headers = size === 'message' ? '{}' : 'h'.repeat(800);
    const out: number[] = [];
    let at = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let k = 0; k < ROWS; k += BATCH) {
        begin.step();
        begin.reset();
        for (let j = 0; j < BATCH; j++) {
          insert.bind([1, headers, body, at++]);
          insert.step();
          insert.reset();
        }
        commit.step();
        commit.reset();
      }
      out.push(((performance.now() - t0) * 1000) / ROWS);
    }
    insert.free();
    begin.free();
    commit.free();
    return out;
  } finally {
    db.close();
  }
}

/** µs a page: filling 64 MB of fresh memory, then the same memory again. */
function pageTouch(): { fresh: number; again: number } {
  const bytes = 64 * MB;
  const pages = bytes / PAGE;
  const buf = Buffer.allocUnsafe(bytes);
  let t0 = performance.now();
  buf.fill(1);
  const fresh = ((performance.now() - t0) * 1000) / pages;
  t0 = performance.now();
  buf.fill(2);
  const again = ((performance.now() - t0) * 1000) / pages;
  return { fresh, again };
}

const touch = pageTouch();
console.log(
  `memory: ${touch.fresh.toFixed(2)} µs to touch a fresh 4 KiB page, ${touch.again.toFixed(2)} µs to write it again`,
);
for (const reuse of [false, true])
  for (const size of ['message', 'event'] as const) {
    const rounds = await rowCost(size, reuse);
    console.log(
      `${size.padEnd(7)} row, ${reuse ? 'reusing free pages' : 'growing file     '}: median ${median(rounds).toFixed(1)} µs a row (rounds ${rounds.map((x) => x.toFixed(1)).join(', ')})`,
    );
  }

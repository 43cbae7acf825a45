/**
 * Writes the large data set of scale.bench.ts into BENCH_DATA_DIR and exits without closing the store,
 * like a crash: BENCH_ROWS messages bulk-inserted straight into the store (one INSERT … SELECT over a
 * counter per batch, so the journal holds statements, not rows), a snapshot, then a tail of messages
 * one transaction each, left in the journal for start-up to replay: by default as many as fill the
 * store's snapshot threshold (SNAPSHOT_JOURNAL_BYTES), the longest journal a crash can leave behind;
 * BENCH_TAIL=<n> writes exactly n. Prints one JSON line with the
 * fixture and timings. Deterministic text: 32 words mixed by the row number, ~120 characters a message.
 * Before it, one `{"phase": …}` line as each step starts (memory.bench.ts labels its RSS samples by them).
 * BENCH_SEED_CHANNELS (default 10) spreads the rows over that many channels; BENCH_SEED_RECENT=1 dates them
 * up to a day ago instead of January 2025, so the retention job (90 days, 10,000 a channel, 1M in all)
 * keeps them: memory.bench.ts seeds 100 channels of 10,000 that way for its long mixed load.
 */
import { SNAPSHOT_JOURNAL_BYTES } from '../../../server/db/store';
import { indexSearchBatch } from '../../../server/features/messages/search-index';
import { openBenchStore, seedFixture } from '../lib';

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const TAIL = process.env.BENCH_TAIL ? Number(process.env.BENCH_TAIL) : null;
const BATCH = 50_000;
const CHANNELS = Number(process.env.BENCH_SEED_CHANNELS ?? 10);
const WORDS = [
  'backup',
  'deploy',
  'disk',
  'memory',
  'network',
  'timeout',
  'restart',
  'certificate',
  'database',
  'replica',
  'cron',
  'upload',
  'invoice',
  'payment',
  'login',
  'failed',
  'warning',
  'latency',
  'queue',
  'worker',
  'cache',
  'storage',
  'billing',
  'alert',
  'nginx',
  'postgres',
  'redis',
  'kafka',
  'docker',
  'kernel',
  'sensor',
  'battery',
];
const W = WORDS.map((w) => w.padEnd(12)).join('');
const word = (expr: string) => `trim(substr('${W}', ((${expr}) % 32) * 12 + 1, 12))`;

const phase = (name: string) => process.stdout.write(`${JSON.stringify({ phase: name })}\n`);
const t0 = performance.now();
phase('bulk insert');
const store = await openBenchStore(dataDir);
const fx = seedFixture(store, { channels: CHANNELS, devices: 2 });
// One message a second; recent: the last (tail included) about a day before now.
const base =
  process.env.BENCH_SEED_RECENT === '1' ? Date.now() - (ROWS + 100_000) * 1000 : Date.UTC(2025, 0, 1);
const channelCase = `CASE n % ${CHANNELS} ${fx.channelIds.map((id, i) => `WHEN ${i} THEN ${id}`).join(' ')} END`;
for (let from = 0; from < ROWS; from += BATCH) {
  const to = Math.min(ROWS, from + BATCH);
  store.db.transaction(() =>
    store.db.exec(
      `INSERT INTO messages (channel_id, user_id, message, title, priority, date, sender_name)
       WITH RECURSIVE seq(n) AS (SELECT ${from} UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ${to})
       SELECT ${channelCase}, ${fx.userId},
         'Job ' || ${word('n * 7')} || ' on host' || (n % 200) || ' ' || ${word('n * 13 + 5')} || ': ' ||
           ${word('n * 17 + 3')} || ' after ' || (n % 3600) || ' s, ' || (n % 1000) || ' items processed, code ' || (n % 97),
         ${word('n * 11 + 1')} || ' ' || ${word('n * 19 + 2')},
         n % 11, ${base} + n * 1000, 'seed'
       FROM seq`,
    ),
  );
  // Indexed in the same transaction, one FTS4 segment per bulk batch (as the insert trigger did before 0008).
  indexSearchBatch(store.db, BATCH);
}
const insertedMs = performance.now() - t0;
phase('snapshot');
await store.snapshot();
const snapshotMs = performance.now() - t0 - insertedMs;
// No await in the loop: the store's own snapshot (due at the threshold) cannot run in between.
let tail = 0;
phase('journal tail');
const tailDone = () => (TAIL === null ? store.stats().journalBytes >= SNAPSHOT_JOURNAL_BYTES : tail >= TAIL);
/** The server indexes a batch every SEARCH_INDEX_LAG_MS: at ~2,000 messages a second, about this many. */
const TAIL_INDEX_EVERY = 500;
for (let i = 0; !tailDone(); i = ++tail) {
  if (i > 0 && i % TAIL_INDEX_EVERY === 0) indexSearchBatch(store.db);
  store.db.transaction(() =>
    store.db.run(
      'INSERT INTO messages (channel_id, user_id, message, title, priority, date, sender_name) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [
        fx.channelIds[i % CHANNELS]!,
        fx.userId,
        `Tail message ${i} from host${i % 200}: deploy finished`,
        'tail',
        5,
        base + (ROWS + i) * 1000,
        'tail',
      ],
    ),
  );
}
const tailBytes = store.stats().journalBytes; // read before the store's own snapshot can start
await store.sync();
process.stdout.write(
  `${JSON.stringify({ fixture: fx, insertedMs, snapshotMs, rows: ROWS + tail, tail, tailBytes })}\n`,
);
process.exit(0);

/**
 * Journal and snapshot costs (docs/operations.md, "Data directory and durability"). A plain script: `npx tsx test/bench/journal.bench.ts`
 * or through `npm run bench`.
 * - durable writes/s: each write is one transaction inserting one message-like row, then awaiting
 *   sync(); 1, 16 and 128 concurrent writers, a few seconds each;
 * - records per fdatasync (how well group commit batches);
 * - start-up replay of the journal those writes left;
 * - snapshot time at 100k message-like rows (~200 bytes each).
 */
import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from '../../server/db/migrations.generated';
import { openStore, type Store } from '../../server/db/store';
import { systemClock } from '../../server/lib/clock';
import { createLogger } from '../../server/lib/log';
import { printTable, type Result } from './lib';

const SECONDS_PER_LEVEL = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = [1, 16, 128];
const SNAPSHOT_ROWS = 100_000;
const TEXT = 'Backup of /home finished: 1,204 files, 3.2 GB transferred in 00:04:12, no errors reported. ';

const log = createLogger('warn');

async function open(dir: string, snapshotJournalBytes?: number): Promise<Store> {
  return openStore({ dataDir: dir, log, clock: systemClock, migrations, snapshotJournalBytes });
}

function seed(store: Store): number {
  const now = systemClock.now();
  return store.db.transaction(() => {
    const user = store.db.run('INSERT INTO users (email, password_hash, created_at) VALUES (?, ?, ?)', [
      'bench@example.com',
      'x',
      now,
    ]).lastInsertRowid;
    return store.db.run('INSERT INTO channels (user_id, name, created_at) VALUES (?, ?, ?)', [
      user,
      'bench',
      now,
    ]).lastInsertRowid;
  });
}

let seq = 0;
type Insert = (store: Store) => void;

function insertPlain(store: Store): void {
  const n = ++seq;
  store.db.run('INSERT INTO bench_rows (body, at) VALUES (?, ?)', [`${TEXT}#${n}`, n]);
}

function insertMessage(store: Store, channel: number): void {
  const n = ++seq;
  store.db.run(
    'INSERT INTO messages (channel_id, user_id, message, title, priority, date, extras) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [
      channel,
      1,
      `${TEXT}#${n}`,
      `Backup ${n}`,
      5,
      1_767_225_600_000 + n,
      '{"client::display":{"contentType":"text/plain"}}',
    ],
  );
}

async function durableWrites(
  store: Store,
  insert: Insert,
  writers: number,
): Promise<{ perSec: number; perSync: number }> {
  const syncsBefore = store.stats().journalSyncs;
  let done = 0;
  const started = performance.now();
  const end = started + SECONDS_PER_LEVEL * 1000;
  const one = async () => {
    while (performance.now() < end) {
      store.db.transaction(() => insert(store));
      await store.sync();
      done++;
    }
  };
  await Promise.all(Array.from({ length: writers }, one));
  const secs = (performance.now() - started) / 1000;
  const syncs = store.stats().journalSyncs - syncsBefore;
  return { perSec: Math.round(done / secs), perSync: Math.round((done / Math.max(syncs, 1)) * 10) / 10 };
}

export async function run(): Promise<Result> {
  const result: Result = { node: process.version, seconds_per_level: SECONDS_PER_LEVEL };
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-'));
  try {
    // Durable writes. A huge snapshot threshold keeps snapshots out of the measurement.
    const writesDir = join(dir, 'writes');
    let store = await open(writesDir, 2 ** 40);
    const channel = seed(store);
    await store.sync();
    // Messages carry FTS4 triggers (0003_channels.sql): the realistic case, and the slow one.
    for (const c of CONCURRENCY) {
      const { perSec, perSync } = await durableWrites(store, (s) => insertMessage(s, channel), c);
      result[`durable_writes_per_s_${c}`] = perSec;
      result[`records_per_fsync_${c}`] = perSync;
    }
    // The same on a plain table, for comparison.
    store.db.exec(
      'CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL, at INTEGER NOT NULL)',
    );
    for (const c of [16]) {
      const { perSec, perSync } = await durableWrites(store, insertPlain, c);
      result[`plain_table_writes_per_s_${c}`] = perSec;
      result[`plain_table_records_per_fsync_${c}`] = perSync;
    }
    const { journalRecords, journalBytes } = store.stats();
    // A crash image (everything synced), then start-up on it: replay of every record written above.
    const imageDir = join(dir, 'image');
    await cp(writesDir, imageDir, { recursive: true });
    await store.close();
    const replayStart = performance.now();
    store = await open(imageDir, 2 ** 40);
    result.replay_records = journalRecords;
    result.replay_mb = Math.round((journalBytes / 1024 / 1024) * 10) / 10;
    result.replay_ms = Math.round(performance.now() - replayStart);
    await store.close();

    // Snapshot of 100k message-like rows.
    const snapDir = join(dir, 'snapshot');
    store = await open(snapDir, 2 ** 40);
    const ch = seed(store);
    for (let i = 0; i < SNAPSHOT_ROWS; i += 1000) {
      store.db.transaction(() => {
        for (let j = 0; j < 1000; j++) insertMessage(store, ch);
      });
    }
    await store.sync();
    const exportStart = performance.now();
    const bytes = store.db.exportBytes();
    result.export_ms_100k = Math.round(performance.now() - exportStart);
    result.snapshot_mb_100k = Math.round((bytes.length / 1024 / 1024) * 10) / 10;
    await store.snapshot();
    result.snapshot_ms_100k = Math.round(store.stats().lastSnapshotMs ?? -1);
    result.row_bytes = Math.round((await stat(join(snapDir, 'belfry.db'))).size / SNAPSHOT_ROWS);
    await store.close();
    const loadStart = performance.now();
    store = await open(snapDir, 2 ** 40);
    result.open_ms_100k = Math.round(performance.now() - loadStart);
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printTable('journal', await run());
}

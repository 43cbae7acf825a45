import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../lib/clock';
import { memoryLogger } from '../lib/log';
import { SqlJsDb } from './database';
import {
  encodeJournalHeader,
  type JournalFile,
  journalFileName,
  type OpenJournalFile,
  openAppendFile,
} from './journal';
import { type Migration, NewerDatabaseError } from './migrate';
import { migrations as realMigrations } from './migrations.generated';
import { loadSqlJs } from './snapshot';
import {
  CorruptDatabaseError,
  openStore,
  SNAPSHOT_QUIET_WAIT_MS,
  type Store,
  type StoreOptions,
} from './store';

const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'test',
    sql: `CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, n, data BLOB);
          CREATE TABLE parents (id INTEGER PRIMARY KEY);
          CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents(id));`,
  },
];

let dir: string;
let log: ReturnType<typeof memoryLogger>;
let clock: ManualClock;
const open: Store[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belfry-store-'));
  log = memoryLogger();
  clock = new ManualClock();
});

afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

async function openTest(extra: Partial<StoreOptions> = {}): Promise<Store> {
  const store = await openStore({ dataDir: dir, log, clock, migrations, ...extra });
  open.push(store);
  return store;
}

/**
 * A crash, as far as the files are concerned: the data dir is copied as it stands (every write
 * synced, nothing else running) and the test carries on with the copy. The original store is then
 * closed against its old directory, so no file handle is left for the garbage collector.
 */
async function crash(store: Store): Promise<void> {
  await store.sync();
  const image = await mkdtemp(join(tmpdir(), 'belfry-store-'));
  await cp(dir, image, { recursive: true });
  open.splice(open.indexOf(store), 1);
  await store.close();
  await rm(dir, { recursive: true, force: true });
  dir = image;
}

function insert(store: Store, name: string, n: number | null = null, data: Uint8Array | null = null): number {
  return store.db.run('INSERT INTO items (name, n, data) VALUES (?, ?, ?)', [name, n, data]).lastInsertRowid;
}

function names(store: Store): string[] {
  return store.db.all<{ name: string }>('SELECT name FROM items ORDER BY id').map((r) => r.name);
}

async function journals(): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.startsWith('journal-')).sort();
}

async function lastJournal(): Promise<string> {
  const list = await journals();
  return join(dir, list[list.length - 1]!);
}

function warnings(): string[] {
  return log.lines.filter((l) => l.includes(' WARN '));
}

describe('openStore', () => {
  it('initialises sql.js once per process', () => {
    expect(loadSqlJs()).toBe(loadSqlJs());
  });

  it('keeps writes across close and reopen', async () => {
    const a = await openTest();
    insert(a, 'one');
    a.db.transaction(() => {
      insert(a, 'two');
      insert(a, 'three');
    });
    await a.close();
    expect(await readdir(dir)).toContain('belfry.db');
    const b = await openTest();
    expect(names(b)).toEqual(['one', 'two', 'three']);
    expect(b.db.all('SELECT version FROM schema_migrations')).toEqual([{ version: 1 }]);
  });

  it('replays the journal after a crash without a snapshot', async () => {
    const a = await openTest();
    for (let i = 0; i < 50; i++) insert(a, `m${i}`);
    await crash(a);
    expect(await readdir(dir)).not.toContain('belfry.db');
    const b = await openTest();
    expect(names(b)).toHaveLength(50);
    expect(names(b)[49]).toBe('m49');
    expect(b.stats().journalRecords).toBeGreaterThanOrEqual(50);
    expect(warnings()).toEqual([]);
  });

  it('replays the journal on top of a snapshot after a crash', async () => {
    const a = await openTest();
    insert(a, 'before');
    await a.snapshot();
    insert(a, 'after');
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['before', 'after']);
  });

  it('keeps working after a snapshot, then reopens with everything', async () => {
    const a = await openTest();
    insert(a, 'a');
    await a.snapshot();
    expect(a.stats().lastSnapshotAt).toBe(clock.now());
    expect(a.stats().lastSnapshotMs).toBeGreaterThan(0);
    expect(a.stats().journalRecords).toBe(0);
    expect(await journals()).toEqual([journalFileName(2)]);
    // export() reopens the sql.js handle: the PRAGMAs must be back.
    expect(a.db.first('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(a.db.first('PRAGMA journal_mode')).toEqual({ journal_mode: 'memory' });
    expect(() => a.db.run('INSERT INTO children (id, parent_id) VALUES (1, 99)')).toThrow(/FOREIGN KEY/);
    insert(a, 'b');
    await a.snapshot();
    insert(a, 'c');
    await a.sync();
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['a', 'b', 'c']);
    expect(b.db.first('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(b.db.first('PRAGMA journal_mode')).toEqual({ journal_mode: 'memory' });
  });

  it('writes a plain SQLite file that records the journal generation it continues with', async () => {
    const a = await openTest();
    insert(a, 'x');
    await a.snapshot();
    const SQL = await loadSqlJs();
    const raw = new SQL.Database(await readFile(join(dir, 'belfry.db')));
    expect(raw.exec('SELECT name FROM items')[0]?.values).toEqual([['x']]);
    expect(raw.exec('PRAGMA user_version')[0]?.values).toEqual([[2]]);
    expect(raw.exec('PRAGMA integrity_check')[0]?.values).toEqual([['ok']]);
    raw.close();
  });

  it('round-trips bytes and large numbers through the journal', async () => {
    const blob = new Uint8Array(256).map((_, i) => i);
    const values = [2 ** 53, -(2 ** 53), 2 ** 53 - 1, 2 ** 31, 1.25, 1e-300, 0.1 + 0.2];
    const a = await openTest();
    for (const v of values) insert(a, String(v), v, blob);
    a.db.run('INSERT INTO items (name, n, data) VALUES (:name, :n, :data)', {
      name: 'named',
      n: 2 ** 40 + 1,
      data: blob,
    });
    insert(a, 'empty', 0, new Uint8Array(0));
    await crash(a);
    const b = await openTest();
    const rows = b.db.all<{ name: string; n: number; data: Uint8Array }>(
      'SELECT name, n, data FROM items ORDER BY id',
    );
    expect(rows.map((r) => r.n)).toEqual([...values, 2 ** 40 + 1, 0]);
    for (const r of rows.slice(0, -1)) expect(r.data).toEqual(blob);
    expect(rows[rows.length - 1]!.data).toEqual(new Uint8Array(0));
  });

  it('journals nothing of a nested transaction that rolled back', async () => {
    const a = await openTest();
    a.db.transaction(() => {
      insert(a, 'kept');
      expect(() =>
        a.db.transaction(() => {
          insert(a, 'rolled back');
          throw new Error('nope');
        }),
      ).toThrow('nope');
      insert(a, 'kept too');
    });
    expect(() =>
      a.db.transaction(() => {
        insert(a, 'outer rolled back');
        throw new Error('nope');
      }),
    ).toThrow('nope');
    // The rollbacks themselves (SQLite's rollback journal is in memory: journal_mode = MEMORY).
    expect(names(a)).toEqual(['kept', 'kept too']);
    await a.sync();
    const journal = await readFile(await lastJournal());
    expect(journal.includes('rolled back')).toBe(false);
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['kept', 'kept too']);
  });

  it('discards a torn tail (record cut mid-way) with a warning and keeps earlier records', async () => {
    const a = await openTest();
    insert(a, 'first');
    insert(a, 'second');
    insert(a, 'torn');
    await crash(a);
    const path = await lastJournal();
    const size = (await stat(path)).size;
    await truncate(path, size - 5);
    const b = await openTest();
    expect(names(b)).toEqual(['first', 'second']);
    const warn = warnings();
    expect(warn).toHaveLength(1);
    expect(warn[0]).toContain(path);
    expect(warn[0]).toMatch(/at offset \d+, \d+ bytes dropped \(record runs past the end of the file\)/);
    // Truncated at the cut, then appended to: the next start sees no damage.
    insert(b, 'third');
    await crash(b);
    log.lines.length = 0;
    const c = await openTest();
    expect(names(c)).toEqual(['first', 'second', 'third']);
    expect(warnings()).toEqual([]);
  });

  it('discards a last record whose checksum fails', async () => {
    const a = await openTest();
    insert(a, 'first');
    insert(a, 'corrupted');
    await crash(a);
    const path = await lastJournal();
    const bytes = await readFile(path);
    const at = bytes.lastIndexOf('corrupted');
    bytes[at]! ^= 0x01;
    await writeFile(path, bytes);
    const b = await openTest();
    expect(names(b)).toEqual(['first']);
    expect(warnings()[0]).toContain('checksum mismatch');
    expect(warnings()[0]).toContain(path);
    await crash(b);
    log.lines.length = 0;
    const c = await openTest();
    expect(names(c)).toEqual(['first']);
    expect(warnings()).toEqual([]);
  });

  it('refuses a journal damaged before intact records, naming file and offset, and leaves it untouched', async () => {
    const a = await openTest();
    insert(a, 'first');
    insert(a, 'flipped');
    insert(a, 'acknowledged after');
    insert(a, 'last');
    await crash(a);
    const path = await lastJournal();
    const bytes = await readFile(path);
    const at = bytes.lastIndexOf('flipped');
    bytes[at + 3]! ^= 0x01;
    await writeFile(path, bytes);
    const err = await openStore({ dataDir: dir, log, clock, migrations }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptDatabaseError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `${path.replace(/[.\\/]/g, '\\$&')} is damaged at offset \\d+ \\(checksum mismatch\\), and intact records follow at offset \\d+`,
      ),
    );
    expect(await readFile(path)).toEqual(bytes);
    expect(warnings()).toEqual([]);
  });

  it('refuses to start when the journal belfry.db continues with is missing', async () => {
    const a = await openTest();
    insert(a, 'in the snapshot');
    await a.snapshot();
    insert(a, 'only in the journal');
    await crash(a);
    await rm(join(dir, journalFileName(2)));
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toThrow(
      /belfry\.db continues with .*journal-000002\.log, which is missing/,
    );
    // The documented way out: an empty journal file accepts the loss.
    await writeFile(join(dir, journalFileName(2)), '');
    const b = await openTest();
    expect(names(b)).toEqual(['in the snapshot']);
  });

  it('refuses a belfry.db that is not SQLite, and leaves it alone', async () => {
    const garbage = Buffer.from('this is not a database at all, just some text that someone saved here');
    await writeFile(join(dir, 'belfry.db'), garbage);
    const err = await openStore({ dataDir: dir, log, clock, migrations }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptDatabaseError);
    expect((err as Error).message).toContain(join(dir, 'belfry.db'));
    expect((err as Error).message).toMatch(/restore belfry\.db from a backup/);
    expect(await readFile(join(dir, 'belfry.db'))).toEqual(garbage);
    expect(await journals()).toEqual([]);
  });

  it('refuses a belfry.db with a SQLite header but damaged pages', async () => {
    const a = await openTest();
    for (let i = 0; i < 200; i++) insert(a, `row ${i}`.repeat(20));
    await a.close();
    const path = join(dir, 'belfry.db');
    const bytes = await readFile(path);
    bytes.fill(0xa5, 100, bytes.length);
    await writeFile(path, bytes);
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toBeInstanceOf(
      CorruptDatabaseError,
    );
    expect(await readFile(path)).toEqual(bytes);
  });

  it('refuses an empty belfry.db', async () => {
    await writeFile(join(dir, 'belfry.db'), '');
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toThrow(/the file is empty/);
  });

  it('refuses a database written by a newer version', async () => {
    const a = await openTest();
    a.db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      9999,
      'future',
      0,
    ]);
    await a.close();
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toBeInstanceOf(
      NewerDatabaseError,
    );
  });

  it('refuses journals that do not continue belfry.db', async () => {
    const a = await openTest();
    insert(a, 'x');
    await a.close(); // belfry.db continues with generation 2
    await rm(join(dir, journalFileName(2)));
    await writeFile(join(dir, journalFileName(5)), encodeJournalHeader(5));
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toThrow(
      /journal-000005\.log cannot be replayed: belfry\.db continues with journal-000002\.log/,
    );
  });

  it('refuses journals without the belfry.db they continue', async () => {
    const a = await openTest();
    insert(a, 'x');
    await a.snapshot();
    insert(a, 'y');
    await crash(a);
    await rm(join(dir, 'belfry.db'));
    await expect(openStore({ dataDir: dir, log, clock, migrations })).rejects.toBeInstanceOf(
      CorruptDatabaseError,
    );
  });

  it('applies the real migrations and keeps them across restarts', async () => {
    const a = await openTest({ migrations: realMigrations });
    a.db.run('INSERT INTO meta (key, value) VALUES (?, ?)', ['k', 'v']);
    await crash(a);
    const b = await openTest({ migrations: realMigrations });
    expect(b.db.first('SELECT value FROM meta WHERE key = ?', ['k'])).toEqual({ value: 'v' });
    expect(b.db.all('SELECT version FROM schema_migrations').length).toBe(realMigrations.length);
  });
});

describe('group commit', () => {
  function countingOpener() {
    const counts = { syncs: 0 };
    const openFile: OpenJournalFile = async (path, mode) => {
      const real = await openAppendFile(path, mode);
      return {
        write: (d) => real.write(d),
        datasync: () => {
          counts.syncs++;
          return real.datasync();
        },
        truncate: (length) => real.truncate(length),
        close: () => real.close(),
      };
    };
    return { counts, openFile };
  }

  it('covers 100 concurrent writes with far fewer fsyncs than records', async () => {
    const { counts, openFile } = countingOpener();
    const a = await openTest({ io: { openJournalFile: openFile } });
    await a.sync();
    const before = a.stats().journalSyncs;
    const writer = async (i: number) => {
      await new Promise((r) => setImmediate(r));
      insert(a, `w${i}`);
      await a.sync();
    };
    await Promise.all(Array.from({ length: 100 }, (_, i) => writer(i)));
    const syncs = a.stats().journalSyncs - before;
    expect(syncs).toBeGreaterThan(0);
    expect(syncs).toBeLessThanOrEqual(10);
    expect(counts.syncs).toBeGreaterThanOrEqual(syncs);
    expect(a.hasUnsynced()).toBe(false);
    await crash(a);
    const b = await openTest();
    expect(names(b)).toHaveLength(100);
  });

  it('resolves sync() at once when nothing is pending', async () => {
    const a = await openTest();
    await a.sync();
    expect(a.hasUnsynced()).toBe(false);
    insert(a, 'x');
    expect(a.hasUnsynced()).toBe(true);
    await a.sync();
    expect(a.hasUnsynced()).toBe(false);
  });
});

describe('failures', () => {
  /** The real journal file, failing writes (ENOSPC) or fdatasyncs (after the write reached the file). */
  function faultyOpener() {
    const faults = { write: false, datasync: false };
    const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    const openFile: OpenJournalFile = async (path, mode) => {
      const real = await openAppendFile(path, mode);
      const file: JournalFile = {
        write: (d) => (faults.write ? Promise.reject(enospc()) : real.write(d)),
        datasync: () => (faults.datasync ? Promise.reject(enospc()) : real.datasync()),
        truncate: (length) => real.truncate(length),
        close: () => real.close(),
      };
      return file;
    };
    return { faults, openFile };
  }

  it('turns unhealthy, rejects waiters and logs when the journal cannot be written', async () => {
    const { faults, openFile } = faultyOpener();
    const a = await openTest({ io: { openJournalFile: openFile } });
    insert(a, 'durable');
    await a.sync();
    expect(a.healthy()).toBe(true);
    faults.write = true;
    insert(a, 'refused');
    await expect(a.sync()).rejects.toThrow(/ENOSPC/);
    expect(a.healthy()).toBe(false);
    expect(log.lines.some((l) => l.includes('ERROR journal write failed') && l.includes('ENOSPC'))).toBe(
      true,
    );
    a.check(); // the in-memory database still answers
    await expect(a.snapshot()).rejects.toThrow(/journal failed/);
    // The final snapshot is skipped: the image in memory holds the refused write.
    await a.close();
    const b = await openTest();
    expect(names(b)).toEqual(['durable']);
  });

  it('never persists a batch whose fdatasync failed, although its bytes reached the file', async () => {
    const { faults, openFile } = faultyOpener();
    const a = await openTest({ io: { openJournalFile: openFile } });
    insert(a, 'durable');
    await a.sync();
    faults.datasync = true;
    insert(a, 'refused 1');
    insert(a, 'refused 2');
    await expect(a.sync()).rejects.toThrow(/ENOSPC/);
    await a.close();
    const b = await openTest();
    expect(names(b)).toEqual(['durable']);
    expect(warnings()).toEqual([]); // cut back cleanly: not even a torn tail
  });

  it('recovers once the journal works again, without the writes it refused', async () => {
    const { faults, openFile } = faultyOpener();
    const a = await openTest({ io: { openJournalFile: openFile } });
    insert(a, 'durable');
    await a.sync();
    faults.datasync = true;
    insert(a, 'refused');
    await expect(a.sync()).rejects.toThrow(/ENOSPC/);
    insert(a, 'refused while failed');
    await expect(a.sync()).rejects.toThrow(/ENOSPC/);
    // Still no space: the probe fails and the store stays red.
    expect(await a.recover()).toBe(false);
    expect(a.healthy()).toBe(false);
    faults.datasync = false;
    // maybeSnapshot (the scheduler's periodic job) retries.
    expect(await a.maybeSnapshot()).toBe(true);
    expect(a.healthy()).toBe(true);
    expect(names(a)).toEqual(['durable']);
    insert(a, 'after');
    await a.sync();
    await a.snapshot();
    insert(a, 'after snapshot');
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['durable', 'after', 'after snapshot']);
  });

  it('keeps the old snapshot and journals when the temp file cannot be written', async () => {
    const a = await openTest();
    insert(a, 'one');
    await a.snapshot();
    insert(a, 'two');
    await mkdir(join(dir, 'belfry.db.tmp')); // opening it for writing fails (EISDIR)
    await expect(a.snapshot()).rejects.toThrow(/EISDIR/);
    expect(a.stats().journalRecords).toBeGreaterThan(0);
    expect(log.lines.some((l) => l.includes('snapshot failed'))).toBe(true);
    insert(a, 'three');
    await rm(join(dir, 'belfry.db.tmp'), { recursive: true });
    await a.snapshot();
    insert(a, 'four');
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['one', 'two', 'three', 'four']);
  });

  it('keeps the old snapshot and journals when writing a snapshot fails', async () => {
    let failSnapshot = true;
    const a = await openTest({
      io: {
        writeSnapshotFile: async (path, bytes) => {
          if (failSnapshot) throw new Error('EIO: snapshot write failed');
          await writeFile(path, bytes);
        },
      },
    });
    insert(a, 'one');
    await expect(a.snapshot()).rejects.toThrow(/EIO/);
    expect(a.stats().journalRecords).toBeGreaterThan(0);
    expect(await readdir(dir)).not.toContain('belfry.db.tmp');
    insert(a, 'two');
    await crash(a);
    const b = await openTest();
    expect(names(b)).toEqual(['one', 'two']);
    failSnapshot = false;
  });

  it('recovers from a crash after the rename but before the old journal was removed', async () => {
    const a = await openTest();
    insert(a, 'one');
    await a.sync();
    const oldJournal = basename(await lastJournal());
    const saved = await readFile(join(dir, oldJournal));
    await a.snapshot();
    insert(a, 'two');
    await crash(a);
    await writeFile(join(dir, oldJournal), saved); // as if the crash hit before the clean-up
    await writeFile(join(dir, 'belfry.db.tmp'), 'half a snapshot');
    const b = await openTest();
    expect(names(b)).toEqual(['one', 'two']);
    expect(await readdir(dir)).not.toContain('belfry.db.tmp');
    expect(await journals()).toEqual([journalFileName(2)]);
  });

  it('recovers from a crash before the rename (old belfry.db, both journals)', async () => {
    const a = await openTest();
    insert(a, 'one');
    await a.snapshot(); // belfry.db continues with generation 2
    await copyFile(join(dir, 'belfry.db'), join(dir, 'old.db'));
    insert(a, 'two');
    await a.sync();
    const gen2 = await readFile(await lastJournal());
    await a.snapshot(); // generation 3
    insert(a, 'three');
    await crash(a);
    // Put the files back the way they were before the second rename became durable.
    await copyFile(join(dir, 'old.db'), join(dir, 'belfry.db'));
    await rm(join(dir, 'old.db'));
    await writeFile(join(dir, journalFileName(2)), gen2);
    const b = await openTest();
    expect(names(b)).toEqual(['one', 'two', 'three']);
  });

  it('discards an incomplete new journal file', async () => {
    const a = await openTest();
    insert(a, 'one');
    await a.close();
    const path = await lastJournal();
    await writeFile(path, Buffer.alloc(7));
    const b = await openTest();
    expect(names(b)).toEqual(['one']);
    expect(warnings()[0]).toContain('incomplete journal file');
    insert(b, 'two');
    await crash(b);
    const c = await openTest();
    expect(names(c)).toEqual(['one', 'two']);
  });
});

describe('snapshot image', () => {
  it('writes belfry.db straight from the database file (no export copy), as it was at the snapshot', async () => {
    const a = await openTest();
    for (let i = 0; i < 200; i++) insert(a, `before ${i}`, i, new Uint8Array(2000).fill(i));
    const exportBytes = vi.spyOn(SqlJsDb.prototype, 'exportBytes');
    try {
      const done = a.snapshot();
      await new Promise((r) => setImmediate(r)); // past the snapshot's synchronous step
      insert(a, 'after');
      await done;
      expect(exportBytes).not.toHaveBeenCalled();
    } finally {
      exportBytes.mockRestore();
    }
    const SQL = await loadSqlJs();
    const file = new SQL.Database(await readFile(join(dir, 'belfry.db')));
    try {
      expect(file.exec('PRAGMA integrity_check')[0]!.values).toEqual([['ok']]);
      expect(file.exec('PRAGMA user_version')[0]!.values).toEqual([[2]]);
      const rows = file.exec(
        'SELECT name, n, length(data), hex(substr(data, 2000, 1)) FROM items ORDER BY id',
      )[0]!;
      expect(rows.values.length).toBe(200);
      expect(rows.values[199]).toEqual(['before 199', 199, 2000, 'C7']);
    } finally {
      file.close();
    }
    await crash(a);
    const b = await openTest();
    expect(names(b).slice(-2)).toEqual(['before 199', 'after']);
  });
});

describe('snapshot policy', () => {
  it('scales the size threshold with the database image', async () => {
    const a = await openTest({ snapshotJournalBytes: 1024 });
    insert(a, 'big', null, new Uint8Array(400 * 1024).fill(7));
    await a.sync();
    await a.snapshot();
    const first = a.stats().lastSnapshotAt;
    expect(first).not.toBeNull();
    clock.advance(1000);
    // Far past 1 KiB but under a quarter of the ~400 KiB image: no snapshot is due.
    for (let i = 0; i < 40; i++) insert(a, `row ${i} ${'x'.repeat(1000)}`);
    await a.sync();
    expect(a.stats().journalBytes).toBeGreaterThan(20 * 1024);
    expect(await a.maybeSnapshot()).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.stats().lastSnapshotAt).toBe(first);
    // Past a quarter of the image it is.
    for (let i = 0; i < 80; i++) insert(a, `more ${i} ${'x'.repeat(1000)}`);
    await a.sync();
    for (let i = 0; i < 50 && a.stats().lastSnapshotAt === first; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(a.stats().lastSnapshotAt).toBeGreaterThan(first!);
  });

  it('snapshots on its own when the journal passes the size threshold', async () => {
    const a = await openTest({ snapshotJournalBytes: 4096 });
    for (let i = 0; i < 100; i++) {
      insert(a, `row ${i} ${'x'.repeat(100)}`);
      await a.sync();
    }
    for (let i = 0; i < 20 && a.stats().lastSnapshotAt === null; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(a.stats().lastSnapshotAt).not.toBeNull();
    expect(a.stats().journalBytes).toBeLessThan(8192);
    // crash() copies file by file: let the automatic snapshots finish first (a real crash is atomic).
    await a.snapshot();
    await crash(a);
    const b = await openTest();
    expect(names(b)).toHaveLength(100);
  });

  /** Waits (bounded) for the store's own timers: the quiet-moment poll runs every 100 ms. */
  async function settle(a: Store, until: () => boolean = () => a.stats().lastSnapshotAt !== null) {
    for (let i = 0; i < 50 && !until(); i++) await new Promise((r) => setTimeout(r, 20));
  }

  it('with a quiet hook, waits for a quiet moment from half the threshold on', async () => {
    let quiet = false;
    const a = await openTest({ snapshotJournalBytes: 8192, quiet: () => quiet });
    for (let i = 0; i < 200 && a.stats().journalBytes < 4096; i++) {
      insert(a, `row ${'x'.repeat(100)}`);
      await a.sync();
    }
    expect(a.stats().journalBytes).toBeGreaterThanOrEqual(4096);
    await settle(a, () => false); // a second of polls: still busy, so no snapshot
    expect(a.stats().lastSnapshotAt).toBeNull();
    quiet = true;
    await settle(a);
    expect(a.stats().lastSnapshotAt).not.toBeNull();
  });

  it('with a quiet hook, snapshots at the full threshold even when never quiet', async () => {
    const a = await openTest({ snapshotJournalBytes: 8192, quiet: () => false });
    for (let i = 0; i < 200 && a.stats().lastSnapshotAt === null; i++) {
      insert(a, `row ${'x'.repeat(100)}`);
      await a.sync();
    }
    await settle(a);
    expect(a.stats().lastSnapshotAt).not.toBeNull();
  });

  it('with a quiet hook, stops waiting for a quiet moment after SNAPSHOT_QUIET_WAIT_MS', async () => {
    const a = await openTest({ snapshotJournalBytes: 8192, quiet: () => false });
    for (let i = 0; i < 200 && a.stats().journalBytes < 4096; i++) {
      insert(a, `row ${'x'.repeat(100)}`);
      await a.sync();
    }
    await settle(a, () => false);
    expect(a.stats().lastSnapshotAt).toBeNull();
    clock.advance(SNAPSHOT_QUIET_WAIT_MS);
    await settle(a);
    expect(a.stats().lastSnapshotAt).not.toBeNull();
  });

  it('folds a long replayed journal into a snapshot in a quiet moment, not during the first requests', async () => {
    const a = await openTest();
    for (let i = 0; i < 60; i++) insert(a, `row ${i} ${'x'.repeat(100)}`);
    await crash(a);
    let quiet = false;
    const b = await openTest({ snapshotJournalBytes: 2048, quiet: () => quiet });
    expect(b.stats().journalBytes).toBeGreaterThan(4096);
    insert(b, 'a write after start-up'); // below replayed + half the threshold: no forced snapshot
    await b.sync();
    await settle(b, () => false);
    expect(b.stats().lastSnapshotAt).toBeNull();
    quiet = true;
    await settle(b);
    expect(b.stats().lastSnapshotAt).not.toBeNull();
    expect(names(b)).toHaveLength(61);
  });

  it('maybeSnapshot snapshots once the oldest record is older than the maximum age', async () => {
    const a = await openTest({ snapshotMaxAgeMs: 60_000 });
    await a.snapshot();
    expect(await a.maybeSnapshot()).toBe(false);
    clock.advance(120_000);
    expect(await a.maybeSnapshot()).toBe(false); // nothing written since
    insert(a, 'x');
    clock.advance(59_000);
    expect(await a.maybeSnapshot()).toBe(false);
    clock.advance(1_000);
    expect(await a.maybeSnapshot()).toBe(true);
    expect(a.stats().journalRecords).toBe(0);
  });

  it('coalesces snapshots requested while one is waiting', async () => {
    const a = await openTest();
    insert(a, 'x');
    await Promise.all([a.snapshot(), a.snapshot(), a.snapshot()]);
    expect(await journals()).toEqual([journalFileName(2)]);
    expect(log.lines.filter((l) => l.includes('snapshot written'))).toHaveLength(1);
    insert(a, 'y');
    const first = a.snapshot();
    await new Promise((r) => setImmediate(r)); // the first one has started: a new request needs its own
    await Promise.all([first, a.snapshot()]);
    expect(await journals()).toEqual([journalFileName(4)]);
  });
});

describe('close', () => {
  it('is idempotent, reports unhealthy afterwards and check() throws', async () => {
    const a = await openTest();
    insert(a, 'x');
    a.check();
    expect(a.healthy()).toBe(true);
    await Promise.all([a.close(), a.close()]);
    await a.close();
    expect(a.healthy()).toBe(false);
    expect(() => a.check()).toThrow(/closed/);
    await expect(a.sync()).resolves.toBeUndefined();
  });

  it('skips the final snapshot when nothing changed since the last one', async () => {
    const a = await openTest();
    await a.snapshot();
    const before = await stat(join(dir, 'belfry.db'));
    // Migrations write one idempotent record at open; a clean snapshot after it leaves nothing to write.
    await a.close();
    expect((await stat(join(dir, 'belfry.db'))).mtimeMs).toBe(before.mtimeMs);
  });
});

describe('relaxed transactions', () => {
  it('are not waited for, yet are written with the next batch and kept across a clean restart', async () => {
    const store = await openTest();
    await store.sync(); // the migrations' records
    store.db.relaxed(() => store.db.run("INSERT INTO items (name) VALUES ('bookkeeping')"));
    expect(store.hasUnsynced()).toBe(false);
    await store.sync(); // resolves at once: nothing required is pending
    store.db.run("INSERT INTO items (name) VALUES ('required')");
    expect(store.hasUnsynced()).toBe(true);
    await store.sync();
    expect(store.hasUnsynced()).toBe(false);
    await store.close();
    open.splice(open.indexOf(store), 1);
    const again = await openTest();
    expect(again.db.all('SELECT name FROM items ORDER BY id')).toEqual([
      { name: 'bookkeeping' },
      { name: 'required' },
    ]);
  });

  it('join the enclosing transaction when nested', async () => {
    const store = await openTest();
    await store.sync();
    store.db.transaction(() => {
      store.db.relaxed(() => store.db.run("INSERT INTO items (name) VALUES ('inner')"));
    });
    expect(store.hasUnsynced()).toBe(true);
    await store.sync();
  });
});

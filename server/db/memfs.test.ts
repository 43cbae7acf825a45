import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imageOf, SqlJsDb } from './database';
import {
  FILE_GROW_STEP,
  fileNameOf,
  fileStorage,
  memfsPatched,
  patchSource,
  setFileReservationForTests,
} from './memfs';
import { beginSnapshot, emptyDatabase, loadSnapshot, loadSqlJs } from './snapshot';

let dir: string;
const dbs: SqlJsDb[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belfry-memfs-'));
});

afterEach(async () => {
  for (const db of dbs.splice(0)) db.close();
  await rm(dir, { recursive: true, force: true });
});

function track(db: SqlJsDb): SqlJsDb {
  dbs.push(db);
  return db;
}

/** ~`mb` MB of rows whose content depends on their id, so a misplaced page shows in the checksum. */
function fill(db: SqlJsDb, from: number, mb: number): void {
  const rows = Math.round((mb * 1024 * 1024) / 1000);
  db.transaction(() =>
    db.exec(
      `WITH RECURSIVE seq(n) AS (SELECT ${from} UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ${from + rows})
       INSERT INTO t (id, body) SELECT n, printf('%.1000c', char(65 + n % 26)) || n FROM seq`,
    ),
  );
}

/** Rows whose body is still the one written for their id. */
function checksum(db: SqlJsDb): { rows: number } {
  return db.first<{ rows: number }>(
    "SELECT count(*) AS rows FROM t WHERE body = printf('%.1000c', char(65 + id % 26)) || id",
  )!;
}

function integrity(db: SqlJsDb): string {
  return Object.values(db.first('PRAGMA integrity_check') ?? {}).join();
}

/**
 * The same database image: equal bytes but for the header's change counter (24–27), schema cookie
 * (40–43) and version-valid-for number (92–95), which the backup behind export() bumps in its copy.
 */
function sameImage(a: Uint8Array, b: Uint8Array): boolean {
  const strip = (x: Uint8Array) => {
    const c = Buffer.from(x);
    c.fill(0, 24, 28);
    c.fill(0, 40, 44);
    c.fill(0, 92, 96);
    return c;
  };
  return strip(a).equals(strip(b));
}

const rawOf = (db: SqlJsDb) => (db as unknown as { raw: Parameters<typeof fileNameOf>[0] }).raw;

describe('MEMFS file storage (memfs.ts)', () => {
  it('loads sql.js with every MEMFS patch applied', async () => {
    await loadSqlJs();
    expect(memfsPatched).toBe(true);
    const source = readFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.js'), 'utf8');
    expect(patchSource(source)).toContain('Module.belfryGrow(');
    // Any other text (another sql.js version) loads unpatched instead of half patched.
    expect(patchSource(source.replace('a.Ua=new Uint8Array(g)', 'a.Ua=new Uint8Array(g+1)'))).toBeNull();
  });

  it('grows a store database in place: one buffer, no copy, and its bytes are the image export() gives', async () => {
    const db = track(new SqlJsDb(await emptyDatabase()));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(db, 0, 2);
    const storage = fileStorage(fileNameOf(rawOf(db)));
    expect(storage).toBeDefined();
    const before = storage!.length;
    // Well past several growth steps: stock MEMFS would have replaced (copied) the array each time.
    fill(db, 1_000_000, (3 * FILE_GROW_STEP) / (1024 * 1024));
    expect(fileStorage(fileNameOf(rawOf(db)))).toBe(storage);
    expect(storage!.length).toBeGreaterThan(before + 2 * FILE_GROW_STEP);
    const image = db.fileImage()!;
    expect(image.buffer).toBe(storage!.buffer);
    const exported = db.exportBytes();
    expect(sameImage(image, exported)).toBe(true);
    expect(integrity(db)).toBe('ok');
    expect(checksum(db).rows).toBe(2097 + 25166);
  });

  it('keeps the data of a file truncated by VACUUM, and grows again from there', async () => {
    const db = track(new SqlJsDb(await emptyDatabase()));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(db, 0, 20);
    const storage = fileStorage(fileNameOf(rawOf(db)))!;
    db.run('DELETE FROM t WHERE id >= 1000');
    db.exec('VACUUM');
    const shrunk = db.fileImage()!;
    expect(shrunk.length).toBeLessThan(2 * 1024 * 1024);
    expect(fileStorage(fileNameOf(rawOf(db)))).toBe(storage);
    // A truncated tail reads as zero: nothing of the old pages is left past the end of the file.
    expect(storage.subarray(shrunk.length).every((b) => b === 0)).toBe(true);
    expect(checksum(db).rows).toBe(1000);
    fill(db, 1000, 12);
    expect(integrity(db)).toBe('ok');
    expect(checksum(db).rows).toBe(1000 + 12583);
    expect(sameImage(db.fileImage()!, db.exportBytes())).toBe(true);
  });

  it('opens belfry.db in the buffer it was read into, and the image it gives back is the file', async () => {
    const a = track(new SqlJsDb(await emptyDatabase()));
    a.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(a, 0, 3);
    const bytes = a.exportBytes();
    await writeFile(join(dir, 'belfry.db'), bytes);
    const loaded = await loadSnapshot(dir);
    const b = track(new SqlJsDb(loaded!.raw));
    const storage = fileStorage(fileNameOf(loaded!.raw));
    expect(storage).toBeDefined();
    expect(storage!.length).toBe(bytes.length);
    expect(Buffer.from(b.fileImage()!).equals(Buffer.from(bytes))).toBe(true);
    fill(b, 10_000, 10);
    expect(fileStorage(fileNameOf(loaded!.raw))).toBe(storage);
    expect(integrity(b)).toBe('ok');
    expect(checksum(b)).toMatchObject({ rows: 3146 + 10486 });
  });

  it('leaves databases the store does not own to stock MEMFS', async () => {
    const SQL = await loadSqlJs();
    const db = track(new SqlJsDb(new SQL.Database()));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(db, 0, 2);
    expect(fileStorage(fileNameOf(rawOf(db)))).toBeUndefined();
    expect(db.fileImage()).toBeNull();
  });

  it('forgets a managed file when its database is closed', async () => {
    const db = new SqlJsDb(await emptyDatabase());
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(db, 0, 1);
    const name = fileNameOf(rawOf(db));
    expect(fileStorage(name)).toBeDefined();
    db.close();
    expect(fileStorage(name)).toBeUndefined();
  });

  it('falls back to stock MEMFS when no address space can be reserved, keeping the data', async () => {
    const a = track(new SqlJsDb(await emptyDatabase()));
    a.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const restore = setFileReservationForTests(2 ** 60); // more than any ArrayBuffer may reserve
    try {
      const b = track(new SqlJsDb(await emptyDatabase()));
      b.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      fill(b, 0, 3);
      expect(fileStorage(fileNameOf(rawOf(b)))).toBeUndefined();
      expect(b.fileImage()).toBeNull(); // the store's snapshot then exports
      await writeFile(join(dir, 'belfry.db'), b.exportBytes());
      const loaded = await loadSnapshot(dir);
      const c = track(new SqlJsDb(loaded!.raw));
      fill(c, 10_000, 2);
      expect(integrity(c)).toBe('ok');
      expect(checksum(c).rows).toBe(3146 + 2097);
      // A file already in a resizable buffer keeps growing in place.
      const storage = fileStorage(fileNameOf(rawOf(a)));
      expect(storage).toBeDefined();
      fill(a, 0, 2);
      expect(fileStorage(fileNameOf(rawOf(a)))).toBe(storage);
    } finally {
      restore();
    }
    expect(checksum(a).rows).toBe(2097);
  });

  it('writes a captured image as it was at the capture while the database keeps changing', async () => {
    const db = track(new SqlJsDb(await emptyDatabase()));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    fill(db, 0, 2);
    const expected = db.fileImage()!.slice();
    const capture = db.captureImage(4096)!;
    const pending = beginSnapshot(dir, capture, undefined, { sliceMs: 0 }); // yields after every chunk
    let stop = false;
    let rounds = 0;
    const churn = (async () => {
      while (!stop) {
        // Pages all over the file: rows rewritten and deleted from the start on, new ones appended.
        db.transaction(() => {
          db.run('UPDATE t SET body = ? WHERE id = ?', [`changed ${rounds}`, (rounds * 37) % 2000]);
          db.run('DELETE FROM t WHERE id = ?', [rounds]);
          db.run('INSERT INTO t (id, body) VALUES (?, ?)', [100_000 + rounds, 'x'.repeat(3000)]);
        });
        rounds++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    await pending.finish();
    stop = true;
    await churn;
    expect(rounds).toBeGreaterThan(100); // the writes really went on between the chunks
    const written = await readFile(join(dir, 'belfry.db'));
    expect(written.equals(Buffer.from(expected))).toBe(true);
    expect(capture.copiedChunks).toBeGreaterThan(0);
    expect(integrity(db)).toBe('ok');
    // Closed with the last chunk: later writes copy nothing more aside.
    const copied = capture.copiedChunks;
    db.run('UPDATE t SET body = ? WHERE id = 1500', ['after']);
    expect(capture.copiedChunks).toBe(copied);
  });

  it('refuses an image whose size or page size does not match the file', () => {
    const storage = new Uint8Array(8192);
    storage[16] = 0x10; // page size 4096
    expect(imageOf(storage, 4096, 2).length).toBe(8192);
    expect(() => imageOf(storage, 4096, 3)).toThrow(/not 3 pages/);
    expect(() => imageOf(storage, 1024, 2)).toThrow(/page size/);
  });
});

/**
 * belfry.db: the snapshot, a plain SQLite file (sqlite3 opens it). Its header's `user_version` holds
 * the journal generation the snapshot continues with: it contains every record of the generations
 * below, and start-up replays `journal-<user_version>.log` and later on top of it.
 */
import { readFileSync } from 'node:fs';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import initSqlJs, { type Database as SqlJsDatabase, type SqlJsStatic } from 'sql.js';
import { syncDir } from './journal';

export const SNAPSHOT_FILE = 'belfry.db';
export const SNAPSHOT_TEMP_FILE = 'belfry.db.tmp';
const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** belfry.db (or the journal that continues it) cannot be used; Belfry refuses to start over it. */
export class CorruptDatabaseError extends Error {
  override name = 'CorruptDatabaseError';
}

let sqlJs: Promise<SqlJsStatic> | null = null;

/**
 * sql.js, initialised once per process. The wasm is read from node_modules/sql.js/dist through
 * require.resolve, which works the same from source, tsx, vitest and a packaged build.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  if (!sqlJs) {
    const require = createRequire(import.meta.url);
    const promise = (async () => {
      const wasm = readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'));
      const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer;
      return initSqlJs({ wasmBinary });
    })();
    // A failed initialisation is not cached: the next open tries again.
    promise.catch(() => {
      if (sqlJs === promise) sqlJs = null;
    });
    sqlJs = promise;
  }
  return sqlJs;
}

export interface LoadedSnapshot {
  raw: SqlJsDatabase;
  /** The first journal generation not contained in the snapshot. */
  generation: number;
  /** Size of the file. */
  bytes: number;
}

function corrupt(path: string, detail: string): CorruptDatabaseError {
  return new CorruptDatabaseError(
    `${path} is not a usable Belfry database (${detail}). Belfry will not start over it: ` +
      'restore belfry.db from a backup, or move it away to start with an empty database.',
  );
}

/** Reads and validates belfry.db; null when there is none. Never modifies the file. */
export async function loadSnapshot(dir: string): Promise<LoadedSnapshot | null> {
  const path = join(dir, SNAPSHOT_FILE);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (bytes.length < 100 || bytes.toString('latin1', 0, 16) !== SQLITE_MAGIC) {
    throw corrupt(path, bytes.length === 0 ? 'the file is empty' : 'no SQLite header');
  }
  const SQL = await loadSqlJs();
  let raw: SqlJsDatabase | undefined;
  try {
    raw = new SQL.Database(bytes);
    raw.exec('SELECT count(*) FROM sqlite_master');
    const version = raw.exec('PRAGMA user_version')[0]?.values[0]?.[0];
    return {
      raw,
      generation: typeof version === 'number' && version > 0 ? version : 1,
      bytes: bytes.length,
    };
  } catch (err) {
    raw?.close();
    throw corrupt(path, err instanceof Error ? err.message : String(err));
  }
}

/** An empty in-memory database for a data dir without a snapshot. */
export async function emptyDatabase(): Promise<SqlJsDatabase> {
  const SQL = await loadSqlJs();
  return new SQL.Database();
}

export type WriteFileHook = (path: string, bytes: Uint8Array) => Promise<void>;

/** Writes a whole file (readable by its owner only) and fsyncs it. */
export const writeFileDurably: WriteFileHook = async (path, bytes) => {
  const fh = await open(path, 'w', 0o600);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
};

/**
 * Replaces belfry.db atomically: temp file → fsync → rename over belfry.db → fsync the directory.
 * When this resolves the new snapshot survives a crash; before, the old one (and the journals it
 * needs) are still in place.
 */
export async function writeSnapshot(
  dir: string,
  bytes: Uint8Array,
  writeFile: WriteFileHook = writeFileDurably,
): Promise<void> {
  const tmp = join(dir, SNAPSHOT_TEMP_FILE);
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, join(dir, SNAPSHOT_FILE));
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await syncDir(dir);
}

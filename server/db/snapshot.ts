/**
 * belfry.db: the snapshot, a plain SQLite file (sqlite3 opens it). Its header's `user_version` holds
 * the journal generation the snapshot continues with: it contains every record of the generations
 * below, and start-up replays `journal-<user_version>.log` and later on top of it.
 */
import { closeSync, fsync, openSync, readFileSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Database as SqlJsDatabase, SqlJsStatic } from 'sql.js';
import { syncDir } from './journal';
import {
  adoptOnOpen,
  closeRaw,
  type FileCapture,
  fileNameOf,
  initPatchedSqlJs,
  manageFile,
  resizableFile,
} from './memfs';
import { DATA_FILE_MODE } from './permissions';

export const SNAPSHOT_FILE = 'belfry.db';
export const SNAPSHOT_TEMP_FILE = 'belfry.db.tmp';
const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** belfry.db (or the journal that continues it) cannot be used; Belfry refuses to start over it. */
export class CorruptDatabaseError extends Error {
  override name = 'CorruptDatabaseError';
}

let sqlJs: Promise<SqlJsStatic> | null = null;

/**
 * sql.js, initialised once per process, with the MEMFS hooks of memfs.ts. The wasm is read from
 * node_modules/sql.js/dist through require.resolve, which works the same from source, tsx, vitest and a
 * packaged build.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  if (!sqlJs) {
    const require = createRequire(import.meta.url);
    const promise = (async () => {
      const wasm = readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'));
      const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer;
      return initPatchedSqlJs(wasmBinary);
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

/** Pieces in which belfry.db is read at start-up (the syscalls' size, not a copy). */
const IO_CHUNK = 16 * 1024 * 1024;

/**
 * Reads a whole file into a resizable buffer (memfs.ts) that becomes the database's MEMFS file as it is:
 * its first growth after start-up is then a resize in place, not a copy into a bigger array.
 */
async function readIntoFileStorage(path: string): Promise<Uint8Array | null> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const size = (await fh.stat()).size;
    // Without address space for a resizable buffer, a Buffer: MEMFS's slice of it is a view, not a copy.
    const bytes = resizableFile(size) ?? Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(bytes, at, Math.min(IO_CHUNK, size - at), at);
      if (bytesRead === 0) throw new Error(`${path} shrank while it was read`);
      at += bytesRead;
    }
    return bytes;
  } finally {
    await fh.close();
  }
}

/** Reads and validates belfry.db; null when there is none. Never modifies the file. */
export async function loadSnapshot(dir: string): Promise<LoadedSnapshot | null> {
  const path = join(dir, SNAPSHOT_FILE);
  const bytes = await readIntoFileStorage(path);
  if (bytes === null) return null;
  if (bytes.length < 100 || Buffer.from(bytes.subarray(0, 16)).toString('latin1') !== SQLITE_MAGIC) {
    throw corrupt(path, bytes.length === 0 ? 'the file is empty' : 'no SQLite header');
  }
  const SQL = await loadSqlJs();
  let raw: SqlJsDatabase | undefined;
  const size = bytes.length;
  try {
    adoptOnOpen(bytes);
    raw = new SQL.Database(bytes);
    manageFile(fileNameOf(raw));
    raw.exec('SELECT count(*) FROM sqlite_master');
    const version = raw.exec('PRAGMA user_version')[0]?.values[0]?.[0];
    return {
      raw,
      generation: typeof version === 'number' && version > 0 ? version : 1,
      bytes: size,
    };
  } catch (err) {
    if (raw) closeRaw(raw);
    throw corrupt(path, err instanceof Error ? err.message : String(err));
  }
}

/** An empty in-memory database for a data dir without a snapshot. */
export async function emptyDatabase(): Promise<SqlJsDatabase> {
  const SQL = await loadSqlJs();
  const raw = new SQL.Database();
  manageFile(fileNameOf(raw));
  return raw;
}

/** Tests only: writes and fsyncs a snapshot's temp file instead of beginSnapshot's own writes. */
export type WriteFileHook = (path: string, bytes: Uint8Array) => Promise<void>;

/** A snapshot image on its way to disk: `finish` makes it belfry.db, `abort` drops it. */
export interface PendingSnapshot {
  finish(): Promise<void>;
  abort(): Promise<void>;
}

/** Chunks in which a captured image is written (and copied aside when a write comes first). */
export const SNAPSHOT_CHUNK_BYTES = 256 * 1024;
/** The writer yields to the event loop after this much writing. */
const SNAPSHOT_SLICE_MS = 4;

const fsyncFd = promisify(fsync);

/**
 * Exported bytes as a capture (they no longer change): a snapshot's image when memfs.ts does not
 * manage the database file.
 */
export function bytesAsCapture(bytes: Uint8Array): FileCapture {
  return {
    size: bytes.length,
    chunkBytes: SNAPSHOT_CHUNK_BYTES,
    copiedChunks: 0,
    chunk: (i) =>
      bytes.subarray(i * SNAPSHOT_CHUNK_BYTES, Math.min((i + 1) * SNAPSHOT_CHUNK_BYTES, bytes.length)),
    close: () => {},
  };
}

/**
 * Replaces belfry.db with the image `capture` holds: a capture of the live file (memfs.ts), or exported
 * bytes (bytesAsCapture). Synchronous here: belfry.db.tmp is created (a failure throws, and the capture
 * is closed). `finish()` writes the image in chunks of `capture.chunkBytes`, each with one
 * synchronous write (no write is in flight while the database changes: a capture copies a chunk aside
 * before a write changes it, so the file gets the bytes of the capture's moment), yielding to the event
 * loop every few ms; then fsyncs the temp file, renames it over belfry.db and fsyncs the directory. When
 * it resolves the new snapshot survives a crash; before, the old one (and the journals it needs) are
 * still in place. A test hook gets the whole image, read at once. `sliceMs`: tests yield after every chunk.
 */
export function beginSnapshot(
  dir: string,
  capture: FileCapture,
  writeFile: WriteFileHook | undefined,
  opts: { sliceMs?: number } = {},
): PendingSnapshot {
  const sliceMs = opts.sliceMs ?? SNAPSHOT_SLICE_MS;
  const tmp = join(dir, SNAPSHOT_TEMP_FILE);
  let fd: number | null = null;
  let copy: Uint8Array | null = null;
  try {
    if (writeFile) {
      copy = new Uint8Array(capture.size);
      for (let i = 0; i * capture.chunkBytes < capture.size; i++)
        copy.set(capture.chunk(i), i * capture.chunkBytes);
      capture.close();
    } else fd = openSync(tmp, 'w', DATA_FILE_MODE);
  } catch (err) {
    capture.close();
    throw err;
  }
  const closeFd = () => {
    if (fd === null) return;
    const f = fd;
    fd = null;
    closeSync(f);
  };
  const abort = async () => {
    capture.close();
    try {
      closeFd();
    } catch {
      // already failed; the temp file goes anyway
    }
    await rm(tmp, { force: true }).catch(() => {});
  };
  const writeChunks = async (f: number) => {
    let slice = performance.now();
    for (let i = 0; i * capture.chunkBytes < capture.size; i++) {
      const bytes = capture.chunk(i);
      for (let done = 0; done < bytes.length; )
        done += writeSync(f, bytes, done, bytes.length - done, i * capture.chunkBytes + done);
      if (performance.now() - slice >= sliceMs) {
        await new Promise((r) => setImmediate(r));
        slice = performance.now();
      }
    }
    capture.close();
  };
  return {
    abort,
    finish: async () => {
      try {
        if (copy) await writeFile!(tmp, copy);
        else {
          await writeChunks(fd!);
          await fsyncFd(fd!);
          closeFd();
        }
        copy = null;
        await rename(tmp, join(dir, SNAPSHOT_FILE));
      } catch (err) {
        await abort();
        throw err;
      }
      await syncDir(dir);
    },
  };
}

/**
 * sql.js keeps its database file in Emscripten's in-memory filesystem (MEMFS) as one Uint8Array. Stock
 * MEMFS grows a file by allocating a new array (×1.125 beyond 1 MB) and copying the old one into it,
 * so while a 300 MB database grows, old and new copies are resident together (RSS ~435 → ~800 MB at
 * 1M messages). A snapshot loaded at start-up sits in an array of its exact size (the readFile Buffer:
 * MEMFS's `slice` of a Buffer is a view), so its first growth copies all of it; truncation reallocates
 * too.
 *
 * Here the files the store owns live in a resizable ArrayBuffer (reserved up to FILE_MAX_BYTES of
 * address space, committed as it grows): growth is `resize()` in place, never a copy, and the store can
 * read the file's current bytes directly (a snapshot streams them to disk without an export copy).
 *
 * A snapshot captures the file (captureFile): its bytes are written out in chunks while the database
 * keeps changing, and a chunk not yet written is copied aside just before a write would change it.
 *
 * sql.js does not expose its FS object, so the spots of MEMFS that write or allocate file storage are
 * redirected to hooks here by a textual patch of `sql.js/dist/sql-wasm.js` (1.16.0) at load time. A
 * sql.js whose text does not match loads unpatched (stock behaviour, `memfsPatched` false;
 * memfs.test.ts fails then, so an upgrade is noticed).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { Database as SqlJsDatabase, SqlJsStatic } from 'sql.js';

/** Address space reserved per managed file: the largest typed array Node allows (4 GiB). */
export const FILE_MAX_BYTES = 2 ** 32;
/** Managed files grow in steps of this (committed address space; untouched pages are not resident). */
export const FILE_GROW_STEP = 8 * 1024 * 1024;

/**
 * The patches: each `from` must occur exactly once (line breaks in the minified text may fall anywhere).
 * `Module` is sql.js's module object, the config passed to initSqlJs, which carries the hooks.
 */
const PATCHES: readonly { name: string; from: string; to: string }[] = [
  {
    // MEMFS write: every write into a file, before it changes a byte (copy-on-write for captures).
    name: 'will write',
    from: 'write(a,b,d,c,e,g){b.buffer===v.buffer&&(g=!1);if(!c)return 0;a=a.node;a.mtime=a.ctime=Date.now();',
    to: 'write(a,b,d,c,e,g){b.buffer===v.buffer&&(g=!1);if(!c)return 0;a=a.node;a.mtime=a.ctime=Date.now();Module.belfryWillWrite(a.name,e,c);',
  },
  {
    // MEMFS write: growing a file's storage.
    name: 'grow',
    from: 'm>=g||(g=Math.max(g,m*(m<1048576?2:1.125)>>>0),m&&(g=Math.max(g,256)),m=a.Ua.subarray(0,a.Wa),a.Ua=new Uint8Array(g),a.Ua.set(m));',
    to: 'm>=g||(a.Ua=Module.belfryGrow(a.name,a.Ua,a.Wa,g));',
  },
  {
    // MEMFS write: the first write into an empty file (how `new Database(bytes)` fills its file).
    name: 'first write',
    from: 'else a.Ua=b.slice(d,d+c),a.Wa=c;return c}',
    to: 'else a.Ua=Module.belfryFirstWrite(a.name,b,d,c),a.Wa=c;return c}',
  },
  {
    // MEMFS setattr: truncating or extending a file.
    name: 'resize',
    from: 'd=a.Ua,a.Ua=new Uint8Array(b),a.Ua.set(d.subarray(0,Math.min(b,a.Wa)))',
    to: 'a.Ua=Module.belfryResize(a.name,a.Ua,a.Wa,b)',
  },
];

/** ES2024 resizable ArrayBuffers (Node ≥ 20), beyond the ES2023 lib the project compiles against. */
interface ResizableArrayBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  resize(byteLength: number): void;
}
const ResizableBuffer = ArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => ResizableArrayBuffer;

function bufferOf(view: Uint8Array): ResizableArrayBuffer {
  return view.buffer as ResizableArrayBuffer;
}

/** Managed MEMFS files by name: their resizable storage, or null until the first growth. */
const managed = new Map<string, Uint8Array | null>();
/** Buffers handed to `new Database(bytes)` that MEMFS may keep instead of copying. */
const adoptable = new WeakSet<Uint8Array>();

function roundUp(n: number): number {
  return Math.ceil(n / FILE_GROW_STEP) * FILE_GROW_STEP;
}

/** Address space asked for per file (tests make it fail). */
let reservation = FILE_MAX_BYTES;

/** Tests only: reserve `bytes` per file from now on (an impossible size fails); returns the undo. */
export function setFileReservationForTests(bytes: number): () => void {
  reservation = bytes;
  return () => {
    reservation = FILE_MAX_BYTES;
  };
}

/**
 * A length-tracking view of a resizable ArrayBuffer of `bytes` bytes (zero-filled), or null when the
 * address space cannot be reserved (a `ulimit -v`, say): the caller then keeps stock MEMFS behaviour.
 */
export function resizableFile(bytes: number): Uint8Array | null {
  if (bytes > FILE_MAX_BYTES) return null;
  try {
    return new Uint8Array(new ResizableBuffer(bytes, { maxByteLength: reservation }));
  } catch (err) {
    if (err instanceof RangeError) return null;
    throw err;
  }
}

/** MEMFS's own growth: a new array ×2 (below 1 MB) or ×1.125 bigger, the used bytes copied over. */
function stockGrow(contents: Uint8Array, used: number, needed: number): Uint8Array {
  const capacity = contents.length;
  let size = Math.max(needed, (capacity * (capacity < 1048576 ? 2 : 1.125)) >>> 0);
  if (capacity) size = Math.max(size, 256);
  const grown = new Uint8Array(size);
  grown.set(contents.subarray(0, used));
  return grown;
}

function isResizable(view: Uint8Array): boolean {
  return bufferOf(view).resizable === true && view.byteOffset === 0;
}

function ensureCapacity(view: Uint8Array, needed: number): void {
  if (view.length >= needed) return;
  bufferOf(view).resize(Math.min(FILE_MAX_BYTES, roundUp(needed)));
}

/** A file's bytes as they were when captured, read out chunk by chunk while the file changes. */
export interface FileCapture {
  readonly size: number;
  readonly chunkBytes: number;
  /** Chunk `i` as it was at the capture; a view valid until the next write. Chunks go in order. */
  chunk(i: number): Uint8Array;
  /** Chunks copied aside so far (a write came before they were read). */
  readonly copiedChunks: number;
  /** Stops preserving (after the last chunk, or to give up). */
  close(): void;
}

class Capture implements FileCapture {
  /** Bytes below this were read already: later writes there need not be preserved. */
  private done = 0;
  private readonly saved = new Map<number, Uint8Array>();
  copiedChunks = 0;
  closed = false;

  constructor(
    private readonly name: string,
    private readonly storage: Uint8Array,
    readonly size: number,
    readonly chunkBytes: number,
  ) {}

  /** Before [at, at + length) changes: copy aside the chunks of it not read yet. */
  willChange(at: number, length: number): void {
    const from = Math.max(at, this.done);
    const to = Math.min(at + length, this.size);
    if (from >= to) return;
    for (let i = Math.floor(from / this.chunkBytes); i * this.chunkBytes < to; i++) {
      if (this.saved.has(i)) continue;
      this.saved.set(
        i,
        this.storage.slice(i * this.chunkBytes, Math.min((i + 1) * this.chunkBytes, this.size)),
      );
      this.copiedChunks++;
    }
  }

  chunk(i: number): Uint8Array {
    if (this.closed) throw new Error('the capture is closed');
    if (managed.get(this.name) !== this.storage) throw new Error('the captured file was replaced');
    const start = i * this.chunkBytes;
    const end = Math.min(start + this.chunkBytes, this.size);
    const bytes = this.saved.get(i) ?? this.storage.subarray(start, end);
    this.saved.delete(i);
    this.done = Math.max(this.done, end);
    return bytes;
  }

  close(): void {
    this.closed = true;
    this.saved.clear();
    const list = captures.get(this.name)?.filter((c) => c !== this);
    if (list?.length) captures.set(this.name, list);
    else captures.delete(this.name);
  }
}

/** Open captures by file name. */
const captures = new Map<string, Capture[]>();

function willChange(name: string, at: number, length: number): void {
  const list = captures.get(name);
  if (list) for (const c of list) c.willChange(at, length);
}

/**
 * Captures the first `size` bytes of a managed file as they are now (null when the file is not
 * managed). Until close(), every write copies aside the chunks it would change that were not read yet.
 */
export function captureFile(filename: string, size: number, chunkBytes: number): FileCapture | null {
  const storage = fileStorage(filename);
  if (!storage || size > storage.length) return null;
  const capture = new Capture(filename, storage, size, chunkBytes);
  captures.set(filename, [...(captures.get(filename) ?? []), capture]);
  return capture;
}

const hooks = {
  /** Every write into a MEMFS file, before it changes anything. */
  belfryWillWrite(name: string, at: number, length: number): void {
    if (captures.size > 0) willChange(name, at, length);
  },

  /** A file needs `needed` bytes of storage and has fewer. Stock: grow ×2 / ×1.125 by copying. */
  belfryGrow(name: string, contents: Uint8Array, used: number, needed: number): Uint8Array {
    if (!managed.has(name)) return stockGrow(contents, used, needed);
    let view = managed.get(name);
    if (view !== contents || !view || !isResizable(view)) {
      // The first growth of a managed file (created empty or small): one copy, then never again.
      view = resizableFile(roundUp(needed));
      if (!view) {
        managed.delete(name); // no address space for it: stock MEMFS from now on
        return stockGrow(contents, used, needed);
      }
      view.set(contents.subarray(0, used));
      managed.set(name, view);
      return view;
    }
    ensureCapacity(view, needed);
    return view;
  },

  /** The first write into an empty file. Stock: a copy of the written bytes. */
  belfryFirstWrite(name: string, data: Uint8Array, offset: number, length: number): Uint8Array {
    if (adoptable.has(data) && offset === 0 && length === data.length) {
      adoptable.delete(data);
      managed.set(name, data);
      return data;
    }
    return data.slice(offset, offset + length);
  },

  /** Truncate or extend to `size`. Stock: a new array of exactly `size` bytes and a copy. */
  belfryResize(name: string, contents: Uint8Array, used: number, size: number): Uint8Array {
    const view = managed.get(name);
    if (view && view === contents && isResizable(view)) {
      if (size < used) {
        willChange(name, size, used - size);
        // Bytes past the end of a file must read as zero when a later write leaves a gap.
        view.fill(0, size, Math.min(used, view.length));
        bufferOf(view).resize(Math.max(roundUp(size), FILE_GROW_STEP));
      } else ensureCapacity(view, size);
      return view;
    }
    const next = new Uint8Array(size);
    next.set(contents.subarray(0, Math.min(size, used)));
    return next;
  },
};

/** True when the loaded sql.js carries the MEMFS patches (false: stock growth, export() snapshots). */
export let memfsPatched = false;

/**
 * Loads sql.js with the MEMFS hooks; `wasmBinary` is the module's wasm. Falls back to the stock module
 * when the text does not match (another sql.js version).
 */
export async function initPatchedSqlJs(wasmBinary: ArrayBuffer): Promise<SqlJsStatic> {
  const require = createRequire(import.meta.url);
  const path = require.resolve('sql.js/dist/sql-wasm.js');
  const patched = patchSource(readFileSync(path, 'utf8'));
  if (!patched) {
    const initSqlJs = (await import('sql.js')).default;
    return initSqlJs({ wasmBinary });
  }
  const module = { exports: {} as unknown };
  const load = new Function('module', 'exports', 'require', '__filename', '__dirname', patched);
  load(module, module.exports, createRequire(path), path, dirname(path));
  const initSqlJs = module.exports as (config: object) => Promise<SqlJsStatic>;
  const SQL = await initSqlJs({ wasmBinary, ...hooks });
  memfsPatched = true;
  return SQL;
}

/** The source with every patch applied, or null when one of them does not match exactly once. */
export function patchSource(source: string): string | null {
  let out = source;
  for (const p of PATCHES) {
    // The minifier wraps lines at arbitrary points: allow a line break between any two characters.
    const pattern = new RegExp(
      [...p.from].map((ch) => ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\n?'),
      'g',
    );
    const hits = out.match(pattern);
    if (hits?.length !== 1) return null;
    out = out.replace(pattern, () => p.to);
  }
  return out;
}

/**
 * Marks the MEMFS file of a database (its `filename`) as managed: from its next growth on it lives in
 * a resizable buffer. Call before the database's first write.
 */
export function manageFile(filename: string): void {
  if (!managed.has(filename)) managed.set(filename, null);
}

/** Offers `bytes` to the next `new Database(bytes)`: its file then uses this very buffer (no copy). */
export function adoptOnOpen(bytes: Uint8Array): void {
  if (isResizable(bytes)) adoptable.add(bytes);
}

/** Forgets a managed file (its database was closed); its captures fail from now on. */
export function releaseFile(filename: string): void {
  managed.delete(filename);
}

/**
 * The current storage of a managed file (length ≥ its size), or undefined when it is not managed or
 * not yet in a resizable buffer. A live view: valid until the database next writes.
 */
export function fileStorage(filename: string): Uint8Array | undefined {
  const view = managed.get(filename);
  return view && isResizable(view) ? view : undefined;
}

/** The MEMFS file name sql.js gave a database (not in its type declarations). */
export function fileNameOf(raw: SqlJsDatabase): string {
  return (raw as unknown as { filename: string }).filename;
}

/** Closes a sql.js database and forgets its managed file. */
export function closeRaw(raw: SqlJsDatabase): void {
  const name = fileNameOf(raw);
  try {
    raw.close();
  } finally {
    releaseFile(name);
  }
}

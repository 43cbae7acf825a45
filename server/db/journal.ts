/**
 * The write-ahead journal behind the in-memory sql.js database.
 *
 * On disk: `journal-<generation>.log` (generation zero-padded to 6 digits), one file per generation.
 *   header  16 bytes: magic "BELFRYJ1" | u32 LE generation | u32 LE crc32 of the first 12 bytes
 *   record  u32 LE payload length | u32 LE crc32(payload) | payload
 * A record is one committed top-level transaction (its JournalEntry[]); see encodeEntries for the
 * payload. A snapshot (snapshot.ts) records in belfry.db which generation it continues with; older
 * generations are covered by it and deleted.
 *
 * Appends are group-committed by JournalWriter: records accumulate in memory while the previous
 * write+fdatasync runs, then go out together under one fdatasync.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from '../lib/log';
import type { JournalEntry, Param, Params } from './database';
import { DATA_FILE_MODE } from './permissions';

export const JOURNAL_MAGIC = 'BELFRYJ1';
export const JOURNAL_HEADER_BYTES = 16;
export const RECORD_HEADER_BYTES = 8;
/** A record longer than this is treated as damage, not as a transaction (nothing legitimate is this big). */
export const MAX_RECORD_BYTES = 1024 * 1024 * 1024;

const JOURNAL_RE = /^journal-(\d+)\.log$/;

export function journalFileName(generation: number): string {
  return `journal-${String(generation).padStart(6, '0')}.log`;
}

/** The generation of a journal file name, or null when the name is not a journal's. */
export function parseJournalFileName(name: string): number | null {
  const m = JOURNAL_RE.exec(name);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------------------------------------
// Payload codec
//
// payload := u32 entryCount, entry*
// entry   := string sql, u8 kind (0 no params, 1 positional, 2 named), [u32 n, value* | (string key, value)*]
// value   := u8 tag, then: 0 null | 1 f64 | 2 i32 | 3 utf-8 string | 4 utf-16le string | 5 bytes
// string  := u8 tag (3 utf-8 | 4 utf-16le), u32 byteLength, bytes
// Numbers are f64 unless they are int32 (and not -0), so every JS number round-trips bit for bit.
// Strings that are not well-formed UTF-16 (lone surrogates) are kept as UTF-16 code units: UTF-8
// would turn them into U+FFFD and replay would bind a different string than the original.
// Values sql.js accepts beyond Param are normalised the way sql.js binds them: booleans become 0/1,
// bigints become their decimal string, other array-likes become bytes.
// ---------------------------------------------------------------------------------------------

enum Tag {
  Null = 0,
  F64 = 1,
  I32 = 2,
  Utf8 = 3,
  Utf16 = 4,
  Bytes = 5,
}

enum Kind {
  None = 0,
  Positional = 1,
  Named = 2,
}

export class JournalFormatError extends Error {}

interface WellFormed {
  isWellFormed(): boolean;
}

class ByteWriter {
  buf: Buffer;
  pos: number;
  constructor(initial: number, reserve: number) {
    this.buf = Buffer.allocUnsafe(Math.max(initial, reserve + 64));
    this.pos = reserve;
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }
  i32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32LE(v, this.pos);
    this.pos += 4;
  }
  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }
  bytes(v: Uint8Array): void {
    this.u32(v.length);
    this.raw(v);
  }
  /** Bytes as they are, without a length (an entry of the statement-text cache, a value after its length). */
  raw(v: Uint8Array): void {
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }
  string(s: string): void {
    if ((s as unknown as WellFormed).isWellFormed()) {
      const n = Buffer.byteLength(s, 'utf8');
      this.u8(Tag.Utf8);
      this.u32(n);
      this.ensure(n);
      this.buf.write(s, this.pos, n, 'utf8');
      this.pos += n;
    } else {
      const n = s.length * 2;
      this.u8(Tag.Utf16);
      this.u32(n);
      this.ensure(n);
      this.buf.write(s, this.pos, n, 'utf16le');
      this.pos += n;
    }
  }
  value(v: unknown): void {
    switch (typeof v) {
      case 'number':
        if (v === (v | 0) && !Object.is(v, -0)) {
          this.u8(Tag.I32);
          this.i32(v);
        } else {
          this.u8(Tag.F64);
          this.f64(v);
        }
        return;
      case 'string':
        this.string(v);
        return;
      case 'boolean':
        this.u8(Tag.I32);
        this.i32(v ? 1 : 0);
        return;
      case 'bigint':
        this.string(v.toString());
        return;
      case 'object':
        if (v === null) {
          this.u8(Tag.Null);
          return;
        }
        if (v instanceof Uint8Array) {
          this.u8(Tag.Bytes);
          this.bytes(v);
          return;
        }
        if (typeof (v as { length?: unknown }).length === 'number') {
          this.u8(Tag.Bytes);
          this.bytes(Uint8Array.from(v as ArrayLike<number>));
          return;
        }
        break;
      default:
        break;
    }
    throw new JournalFormatError(`cannot journal a parameter of type ${typeof v}`);
  }
}

/**
 * Statement texts as encoded in a record (tag, length, bytes), by text. A POST /message journals the same
 * few statements every time, each a few hundred bytes of SQL: encoding them once spares the UTF-8 check,
 * the length count and the copy-out per record. Bounded like the statement cache; the bytes are the ones
 * ByteWriter.string writes, so records are unchanged.
 */
const encodedSql = new Map<string, Buffer>();
const ENCODED_SQL_MAX = 256;

function encodedStatement(sql: string): Buffer {
  let bytes = encodedSql.get(sql);
  if (bytes === undefined) {
    const w = new ByteWriter(Buffer.byteLength(sql, 'utf8') + 8, 0);
    w.string(sql);
    bytes = Buffer.from(w.buf.subarray(0, w.pos));
    if (encodedSql.size >= ENCODED_SQL_MAX) encodedSql.delete(encodedSql.keys().next().value!);
    encodedSql.set(sql, bytes);
  }
  return bytes;
}

/** Encodes one transaction as a framed record: [u32 length][u32 crc32][payload]. */
export function encodeRecord(entries: readonly JournalEntry[]): Buffer {
  const w = new ByteWriter(256, RECORD_HEADER_BYTES);
  w.u32(entries.length);
  for (const [sql, params] of entries) {
    w.raw(encodedStatement(sql));
    if (params === null || params === undefined) {
      w.u8(Kind.None);
    } else if (Array.isArray(params)) {
      w.u8(Kind.Positional);
      w.u32(params.length);
      for (const v of params as readonly unknown[]) w.value(v);
    } else {
      const keys = Object.keys(params);
      w.u8(Kind.Named);
      w.u32(keys.length);
      for (const k of keys) {
        w.string(k);
        w.value((params as Readonly<Record<string, unknown>>)[k]);
      }
    }
  }
  const payloadLength = w.pos - RECORD_HEADER_BYTES;
  const out = w.buf.subarray(0, w.pos);
  out.writeUInt32LE(payloadLength, 0);
  out.writeUInt32LE(crc32(out.subarray(RECORD_HEADER_BYTES)), 4);
  return out;
}

class ByteReader {
  private pos = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get done(): boolean {
    return this.pos === this.bytes.length;
  }
  private need(n: number): void {
    if (this.pos + n > this.bytes.length) throw new JournalFormatError('record payload ends early');
  }
  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const v = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  stringOfTag(tag: number): string {
    const n = this.u32();
    const raw = this.raw(n);
    const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    if (tag === Tag.Utf8) return buf.toString('utf8');
    if (tag === Tag.Utf16 && n % 2 === 0) return buf.toString('utf16le');
    throw new JournalFormatError(`bad string tag ${tag}`);
  }
  string(): string {
    return this.stringOfTag(this.u8());
  }
  value(): Param {
    const tag = this.u8();
    switch (tag) {
      case Tag.Null:
        return null;
      case Tag.F64:
        return this.f64();
      case Tag.I32:
        return this.i32();
      case Tag.Utf8:
      case Tag.Utf16:
        return this.stringOfTag(tag);
      case Tag.Bytes:
        // A plain Uint8Array copy (not a Buffer view into the whole journal file).
        return new Uint8Array(this.raw(this.u32()));
      default:
        throw new JournalFormatError(`bad value tag ${tag}`);
    }
  }
}

/** Decodes a record payload (without its 8-byte frame) back into the entries that were committed. */
export function decodePayload(payload: Uint8Array): JournalEntry[] {
  const r = new ByteReader(payload);
  const count = r.u32();
  const entries: JournalEntry[] = [];
  for (let i = 0; i < count; i++) {
    const sql = r.string();
    const kind = r.u8();
    let params: Params | null;
    if (kind === Kind.None) params = null;
    else if (kind === Kind.Positional) {
      const n = r.u32();
      const list: Param[] = [];
      for (let j = 0; j < n; j++) list.push(r.value());
      params = list;
    } else if (kind === Kind.Named) {
      const n = r.u32();
      const named: Record<string, Param> = {};
      for (let j = 0; j < n; j++) {
        const key = r.string();
        named[key] = r.value();
      }
      params = named;
    } else throw new JournalFormatError(`bad params kind ${kind}`);
    entries.push([sql, params]);
  }
  if (!r.done) throw new JournalFormatError('trailing bytes after the last entry');
  return entries;
}

// ---------------------------------------------------------------------------------------------
// File header and scanning
// ---------------------------------------------------------------------------------------------

export function encodeJournalHeader(generation: number): Buffer {
  const h = Buffer.alloc(JOURNAL_HEADER_BYTES);
  h.write(JOURNAL_MAGIC, 0, 'latin1');
  h.writeUInt32LE(generation, 8);
  h.writeUInt32LE(crc32(h.subarray(0, 12)), 12);
  return h;
}

export type HeaderCheck = { ok: true } | { ok: false; reason: string };

export function checkJournalHeader(bytes: Uint8Array, generation: number): HeaderCheck {
  if (bytes.length < JOURNAL_HEADER_BYTES) return { ok: false, reason: 'header is incomplete' };
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, JOURNAL_HEADER_BYTES);
  if (h.toString('latin1', 0, 8) !== JOURNAL_MAGIC)
    return { ok: false, reason: 'not a Belfry journal (bad magic)' };
  if (h.readUInt32LE(12) !== crc32(h.subarray(0, 12)))
    return { ok: false, reason: 'header checksum mismatch' };
  const g = h.readUInt32LE(8);
  if (g !== generation)
    return { ok: false, reason: `header says generation ${g}, file name says ${generation}` };
  return { ok: true };
}

export interface JournalRecord {
  /** Offset of the record's frame in the file. */
  offset: number;
  /** Whole framed size (header + payload). */
  size: number;
  payload: Uint8Array;
}

export interface ScanResult {
  records: JournalRecord[];
  /** Offset just past the last intact record: the file is truncated here when a tail is damaged. */
  validEnd: number;
  /**
   * Present when bytes after validEnd could not be read as a record. `intactAfter` is the offset of an
   * intact record found further on (null when there is none): then the damage is not a torn tail but
   * a hole in the middle of the acknowledged history.
   */
  damage: { offset: number; droppedBytes: number; reason: string; intactAfter: number | null } | null;
}

/**
 * Splits a journal file (header already checked) into framed records. Scanning stops at the first
 * record that is incomplete or fails its checksum. With append-only writes and an fsync before every
 * acknowledgement, a crash can only leave such damage at the very end (the unacknowledged last batch):
 * the scan then looks for an intact record anywhere after the damage (findIntactRecord). Finding one
 * means the damage is in the middle (a flipped byte, a bad sector) and records after it were acknowledged.
 */
export function scanJournal(bytes: Uint8Array): ScanResult {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: JournalRecord[] = [];
  let off = JOURNAL_HEADER_BYTES;
  const end = bytes.length;
  const damaged = (reason: string): ScanResult => ({
    records,
    validEnd: off,
    damage: { offset: off, droppedBytes: end - off, reason, intactAfter: findIntactRecord(bytes, off + 1) },
  });
  while (off < end) {
    if (end - off < RECORD_HEADER_BYTES) return damaged('incomplete record header');
    const len = view.getUint32(off, true);
    const sum = view.getUint32(off + 4, true);
    if (len === 0 || len > MAX_RECORD_BYTES) return damaged(`impossible record length ${len}`);
    if (off + RECORD_HEADER_BYTES + len > end) return damaged('record runs past the end of the file');
    const payload = bytes.subarray(off + RECORD_HEADER_BYTES, off + RECORD_HEADER_BYTES + len);
    if (crc32(payload) !== sum) return damaged('checksum mismatch');
    records.push({ offset: off, size: RECORD_HEADER_BYTES + len, payload });
    off += RECORD_HEADER_BYTES + len;
  }
  return { records, validEnd: off, damage: null };
}

/**
 * The offset of the first intact record starting at or after `from`, or null. Every byte offset is a
 * candidate: a frame whose length fits in the file, whose checksum matches its payload and whose payload
 * decodes. Most offsets fail at once (their length runs past the end, or is 0), so a torn tail costs
 * little; a chance match needs a 32-bit checksum collision and a payload that decodes.
 */
export function findIntactRecord(bytes: Uint8Array, from: number): number | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length;
  for (let p = Math.max(from, JOURNAL_HEADER_BYTES); p + RECORD_HEADER_BYTES < end; p++) {
    const len = view.getUint32(p, true);
    if (len < 4 || len > end - p - RECORD_HEADER_BYTES) continue;
    const payload = bytes.subarray(p + RECORD_HEADER_BYTES, p + RECORD_HEADER_BYTES + len);
    if (crc32(payload) !== view.getUint32(p + 4, true)) continue;
    try {
      decodePayload(payload);
      return p;
    } catch {
      // a checksum collision, not a record
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// File access (injectable so tests can count fsyncs and inject failures)
// ---------------------------------------------------------------------------------------------

export interface JournalFile {
  /** Appends every byte of `data` at the end of the file. */
  write(data: Uint8Array): Promise<void>;
  datasync(): Promise<void>;
  /** Cuts the file to `length` bytes (a failed batch is taken back) and syncs it. */
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/** 'append' opens an existing journal; 'create' makes a new one and fails if the name is taken. */
export type OpenJournalFile = (path: string, mode: 'append' | 'create') => Promise<JournalFile>;

/** Opens a journal file for appending with Node's fs. */
export const openAppendFile: OpenJournalFile = async (path, mode) => {
  const fh = await open(path, mode === 'create' ? 'ax' : 'a', DATA_FILE_MODE);
  return {
    async write(data) {
      let done = 0;
      while (done < data.length) {
        const { bytesWritten } = await fh.write(data, done, data.length - done, null);
        if (bytesWritten <= 0) throw new Error(`short write to ${path}`);
        done += bytesWritten;
      }
    },
    datasync: () => fh.datasync(),
    async truncate(length) {
      await fh.truncate(length);
      await fh.datasync();
    },
    close: () => fh.close(),
  };
};

/**
 * fsyncs a directory so a create, rename or unlink in it is durable. Windows cannot open a directory
 * for this (and NTFS journals its metadata), some filesystems answer EINVAL: both are skipped.
 */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
  } finally {
    await fh?.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Group-committing writer
// ---------------------------------------------------------------------------------------------

type Item =
  | { kind: 'record'; bytes: Buffer; seq: number }
  | { kind: 'rotate'; generation: number; done: Deferred };

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be listening (a rotation nobody awaits): never an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface JournalWriterOptions {
  dir: string;
  log: Logger;
  openFile?: OpenJournalFile;
  /** Extra wait before each batch; 0 means adaptive (the batch is whatever piled up during the last fsync). */
  windowMs?: number;
  /** Called once, on the first write or fsync failure. */
  onFailure?: (err: Error) => void;
  /**
   * How long relaxed records may wait for a batch of their own (default RELAXED_FLUSH_MS). They go out at
   * once with any required record; alone they start a batch only after this, so background bookkeeping
   * (search-index batches, delivery outbox marks) costs one fdatasync per window instead of one per commit,
   * and a request's fdatasync never queues behind a train of them.
   */
  relaxedFlushMs?: number;
}

/** Default wait of relaxed-only records before they are written and fdatasync'd on their own. */
export const RELAXED_FLUSH_MS = 100;

/**
 * Appends records to the current generation's file. One loop writes a batch, fdatasyncs it, then
 * resolves every sync() waiter whose records it covered; records arriving meanwhile form the next
 * batch. A rotation (snapshot) is queued between records, so a generation's file is complete and
 * synced before the next one is created and written.
 */
export class JournalWriter {
  private queue: Item[] = [];
  private waiters: Waiter[] = [];
  private file: JournalFile | null = null;
  private running = false;
  private scheduled = false;
  private appendedSeq = 0;
  /** The last record a response must wait for (relaxed records do not raise it). */
  private requiredSeq = 0;
  private durableSeq = 0;
  private failure: Error | null = null;
  private closed = false;
  private idle: Deferred | null = null;
  /** Armed while only relaxed records wait: starts their batch after relaxedFlushMs. */
  private relaxedTimer: NodeJS.Timeout | null = null;
  /** The relaxed records' window has passed: the next batch goes even without a required record. */
  private relaxedDue = false;
  /** The last record taken into a batch. */
  private takenSeq = 0;
  /** Size of the current file up to its last fdatasync'd batch. */
  private durableEnd = 0;
  private cutFailed = false;
  /** The generation of the open file (`generation` moves on as soon as a rotation is queued). */
  private fileGeneration = 0;
  syncs = 0;
  bytesWritten = 0;

  private readonly openFile: OpenJournalFile;

  private constructor(
    private readonly opts: JournalWriterOptions,
    public generation: number,
  ) {
    this.openFile = opts.openFile ?? openAppendFile;
  }

  /** Opens an existing, already validated and truncated journal file (`size` bytes) for appending. */
  static async append(opts: JournalWriterOptions, generation: number, size: number): Promise<JournalWriter> {
    const w = new JournalWriter(opts, generation);
    w.file = await w.openFile(join(opts.dir, journalFileName(generation)), 'append');
    w.durableEnd = size;
    w.fileGeneration = generation;
    return w;
  }

  /** Creates a fresh journal file for `generation` (header written and durable). */
  static async create(opts: JournalWriterOptions, generation: number): Promise<JournalWriter> {
    const w = new JournalWriter(opts, generation);
    w.file = await w.createFile(generation);
    w.durableEnd = JOURNAL_HEADER_BYTES;
    w.fileGeneration = generation;
    return w;
  }

  get failed(): Error | null {
    return this.failure;
  }

  /** After a failure whose clean-up could not cut the file back: the file and its durable length. */
  get uncut(): { file: string; length: number } | null {
    return this.cutFailed ? { file: journalFileName(this.fileGeneration), length: this.durableEnd } : null;
  }

  hasUnsynced(): boolean {
    return this.durableSeq < this.requiredSeq;
  }

  /**
   * Queues one framed record. Synchronous: it is called from the commit of a transaction. A relaxed
   * record (bookkeeping such as lastUsed) is written and fsynced with the next batch like any other, but
   * nobody waits for it: hasUnsynced() and sync() look only at the records that are not relaxed. Records
   * stay in order, so a crash can only lose a relaxed record together with everything after it.
   */
  append(record: Buffer, relaxed = false): void {
    // A failed writer (closed or not) writes nothing more but still counts the record, so that sync()
    // refuses it: a commit made while the store recovers must be answered 503, never 200.
    if (this.closed && !this.failure) throw new Error('journal is closed');
    const seq = ++this.appendedSeq;
    if (!relaxed) this.requiredSeq = seq;
    if (this.failure) return;
    this.queue.push({ kind: 'record', bytes: record, seq });
    if (relaxed && !this.closed) this.kickLater();
    else this.kick();
  }

  /** Relaxed records alone: a batch after relaxedFlushMs, unless a required record or a rotation comes first. */
  private kickLater(): void {
    if (this.running || this.scheduled || this.failure || this.relaxedTimer) return;
    this.relaxedTimer = setTimeout(() => {
      this.relaxedTimer = null;
      this.relaxedDue = true;
      this.kick();
    }, this.opts.relaxedFlushMs ?? RELAXED_FLUSH_MS);
  }

  /**
   * Records appended from now on go to `generation`'s file. The returned promise resolves once the
   * previous file is synced and closed and the new one exists durably.
   */
  rotate(generation: number): Promise<void> {
    if (this.closed) throw new Error('journal is closed');
    const done = deferred();
    this.queue.push({ kind: 'rotate', generation, done });
    this.generation = generation;
    if (this.failure) done.reject(this.failure);
    this.kick();
    return done.promise;
  }

  /** Resolves when every record appended before the call is durable (relaxed ones aside). */
  sync(): Promise<void> {
    const target = this.requiredSeq;
    if (this.durableSeq >= target) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ seq: target, resolve, reject }));
  }

  /** Marks the journal failed from outside (a commit that could not be encoded). */
  poison(err: Error): void {
    if (this.failure) return;
    // Nothing of the unencodable commit reached the file: cut back to what is durable, after the batch
    // being written (if any) settles.
    this.failure = err;
    void (async () => {
      while (this.running) {
        this.idle ??= deferred();
        await this.idle.promise;
      }
      await this.fail(err);
    })();
  }

  /** Waits for the queue to drain (or fail), then closes the file. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.kick(); // relaxed records waiting for their window go now
    while (this.running || this.scheduled || (this.queue.length > 0 && !this.failure)) {
      this.idle ??= deferred();
      await this.idle.promise;
    }
    const f = this.file;
    this.file = null;
    await f?.close();
  }

  private kick(): void {
    if (this.relaxedTimer) {
      clearTimeout(this.relaxedTimer);
      this.relaxedTimer = null;
    }
    if (this.running || this.scheduled || this.failure || this.queue.length === 0) return;
    this.scheduled = true;
    // A microtask, not now: transactions committed in the same tick join the first batch.
    queueMicrotask(() => {
      this.scheduled = false;
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.failure) {
        const head = this.queue[0]!;
        if (head.kind === 'rotate') {
          this.queue.shift();
          await this.switchTo(head.generation);
          head.done.resolve();
          continue;
        }
        // Only relaxed records left and their window not over: they wait (kickLater in finally).
        if (!this.mustWrite()) break;
        if (this.opts.windowMs && this.opts.windowMs > 0) await sleep(this.opts.windowMs);
        const batch: Buffer[] = [];
        let last = 0;
        while (this.queue.length > 0 && this.queue[0]!.kind === 'record') {
          const item = this.queue.shift() as Extract<Item, { kind: 'record' }>;
          batch.push(item.bytes);
          last = item.seq;
        }
        this.takenSeq = last;
        this.relaxedDue = false;
        const data = batch.length === 1 ? batch[0]! : Buffer.concat(batch);
        const file = this.file;
        if (!file) throw new Error('journal file is not open');
        await file.write(data);
        this.bytesWritten += data.length;
        await file.datasync();
        this.syncs++;
        this.durableEnd += data.length;
        this.durableSeq = last;
        this.settle();
      }
    } catch (err) {
      await this.fail(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.running = false;
      if (this.queue.length > 0 && !this.failure) {
        if (this.mustWrite()) this.kick();
        else this.kickLater();
      } else if (this.idle) {
        const idle = this.idle;
        this.idle = null;
        idle.resolve();
      }
    }
  }

  /** Whether the queued records must be written now: a required one, a rotation, closing, or their window passed. */
  private mustWrite(): boolean {
    return (
      this.requiredSeq > this.takenSeq ||
      this.relaxedDue ||
      this.closed ||
      this.queue.some((i) => i.kind === 'rotate')
    );
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.durableSeq) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }

  /**
   * Stops the writer for good: every waiter is refused, and the part of the failed batch that reached
   * the file is cut off, so nothing a client was refused can be replayed later (and no damage is left
   * in the middle of the file for the next batch to follow).
   */
  private async fail(err: Error): Promise<void> {
    this.failure = err;
    this.opts.log.error('journal write failed; the store is unhealthy and refuses writes', {
      file: journalFileName(this.fileGeneration),
      error: err,
    });
    for (const w of this.waiters) w.reject(err);
    this.waiters = [];
    for (const item of this.queue) if (item.kind === 'rotate') item.done.reject(err);
    this.opts.onFailure?.(err);
    if (this.file) {
      try {
        await this.file.truncate(this.durableEnd);
      } catch (cut) {
        this.cutFailed = true;
        this.opts.log.error('could not cut the failed batch off the journal', {
          file: journalFileName(this.fileGeneration),
          error: cut,
        });
      }
    }
  }

  private async switchTo(generation: number): Promise<void> {
    const old = this.file;
    this.file = null;
    await old?.close();
    this.file = await this.createFile(generation);
    this.durableEnd = JOURNAL_HEADER_BYTES;
    this.fileGeneration = generation;
  }

  private async createFile(generation: number): Promise<JournalFile> {
    const file = await this.openFile(join(this.opts.dir, journalFileName(generation)), 'create');
    try {
      await file.write(encodeJournalHeader(generation));
      await file.datasync();
      await syncDir(this.opts.dir);
    } catch (err) {
      await file.close().catch(() => {});
      throw err;
    }
    return file;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

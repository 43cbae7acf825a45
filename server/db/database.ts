import type { Database as SqlJsDatabase, SqlValue, Statement } from 'sql.js';
import { captureFile, closeRaw, type FileCapture, fileNameOf, fileStorage } from './memfs';

/** A bound parameter. Stores convert booleans and dates before they reach the database. */
export type Param = string | number | null | Uint8Array;
export type Params = readonly Param[] | Readonly<Record<string, Param>>;
export type Row = Record<string, SqlValue>;

/** One write statement as it is journaled and replayed. */
export type JournalEntry = readonly [sql: string, params: Params | null];

export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/**
 * The five verbs every family store uses. Synchronous on purpose: sql.js is, and keeping
 * network or timers out of a transaction is what keeps replay deterministic.
 */
export interface Db {
  all<T = Row>(sql: string, params?: Params): T[];
  first<T = Row>(sql: string, params?: Params): T | undefined;
  run(sql: string, params?: Params): RunResult;
  exec(sql: string): void;
  transaction<T>(fn: () => T): T;
  /**
   * A transaction whose loss in a crash is harmless (lastUsed and similar bookkeeping): committed and
   * journaled like any other, but no response waits for its fsync. Inside another transaction it is
   * simply part of that one.
   */
  relaxed<T>(fn: () => T): T;
  /**
   * Runs `fn` once the outermost transaction around this call has committed (and its journal record is
   * appended), or at once outside a transaction. Dropped when the transaction or savepoint it was
   * registered in rolls back. Bus events that announce committed rows (`message:created`) go through
   * here, so a listener never sees a row a rollback takes back, nor one the journal does not hold yet.
   */
  afterCommit(fn: () => void): void;
  /** A transaction (or savepoint) is open now. */
  readonly inTransaction: boolean;
  /**
   * Grows with every write statement (committed or not) and every database swap: a reader that caches
   * something derived from the database knows it may still be right while this has not moved.
   */
  readonly writeCount: number;
}

/** Receives the write statements of each committed top-level transaction, in commit order. */
export type CommitSink = (entries: readonly JournalEntry[], relaxed: boolean) => void;

// Statements that change the database and must be journaled when they come through all()/first()
// (INSERT ... RETURNING, or a WITH clause in front of a write). Journaling a read by mistake is harmless.
const WRITE_RE =
  /^\s*(insert|update|delete|replace|create|drop|alter)\b|^\s*with\b[\s\S]*\b(insert|update|delete|replace)\b/i;

/** A cached statement with what is known of it once: its row builder, and whether it writes. */
interface Prepared {
  stmt: Statement;
  toRow: RowMaker;
  isWrite: boolean;
  isInsert: boolean;
}

/** Prepared statements kept; the oldest is freed first beyond this. */
export const STATEMENT_CACHE_MAX = 512;

const INSERT_RE = /^\s*(insert|replace)\b/i;

/** Rows as objects, with the column names read once per statement instead of once per row. */
function toObject(columns: readonly string[], values: SqlValue[]): Row {
  const row: Row = {};
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    // Assigning `__proto__` would set the prototype instead of a column.
    if (c === '__proto__')
      Object.defineProperty(row, c, {
        value: values[i],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else row[c] = values[i]!;
  }
  return row;
}

type RowMaker = (values: SqlValue[]) => Row;

/**
 * A statement's row builder: an object literal with its column names as fixed keys, compiled once per
 * prepared statement. Every row of the statement then shares one hidden class and is one allocation;
 * filling an empty object column by column (toObject) goes through a keyed store that is megamorphic
 * across the app's statements (Builtins_KeyedStoreIC_Megamorphic was ~2.4 % of a deep page in `perf`).
 * The names are our own SQL's result columns, quoted by JSON.stringify; duplicates and `__proto__`
 * (which a literal would treat as the prototype) keep the generic path.
 */
export function rowMaker(columns: readonly string[]): RowMaker {
  if (columns.length === 0 || columns.includes('__proto__') || new Set(columns).size !== columns.length)
    return (values) => toObject(columns, values);
  const fields = columns.map((c, i) => `${JSON.stringify(c)}: v[${i}]`).join(', ');
  return new Function('v', `return { ${fields} };`) as RowMaker;
}

/**
 * sql.js behind the five verbs, with nested transactions (savepoints), a statement cache and a
 * commit hook that the journal hangs on. `exportBytes()` frees the cached statements and re-applies
 * the setup (PRAGMAs) around sql.js's export, as older sql.js versions reopened the handle there.
 */
export class SqlJsDb implements Db {
  private readonly cache = new Map<string, Prepared>();
  private depth = 0;
  private relaxedOuter = false;
  private pending: JournalEntry[] = [];
  private after: (() => void)[] = [];
  private sink: CommitSink | null = null;
  private writes = 0;

  constructor(
    private raw: SqlJsDatabase,
    private readonly setup: (raw: SqlJsDatabase) => void = applyDefaultSetup,
  ) {
    this.setup(raw);
  }

  /** Where committed writes go (the journal). Null while replaying. */
  setCommitSink(sink: CommitSink | null): void {
    this.sink = sink;
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  all<T = Row>(sql: string, params?: Params): T[] {
    const p = this.prepare(sql);
    const stmt = p.stmt;
    try {
      bind(stmt, params);
      const rows: T[] = [];
      while (stmt.step()) rows.push(p.toRow(stmt.get()) as T);
      if (p.isWrite) this.record(sql, params ?? null);
      return rows;
    } finally {
      stmt.reset();
    }
  }

  first<T = Row>(sql: string, params?: Params): T | undefined {
    const p = this.prepare(sql);
    const stmt = p.stmt;
    try {
      bind(stmt, params);
      const row = stmt.step() ? (p.toRow(stmt.get()) as T) : undefined;
      if (p.isWrite) this.record(sql, params ?? null);
      return row;
    } finally {
      stmt.reset();
    }
  }

  run(sql: string, params?: Params): RunResult {
    const p = this.prepare(sql);
    try {
      bind(p.stmt, params);
      p.stmt.step();
    } finally {
      p.stmt.reset();
    }
    const changes = this.raw.getRowsModified();
    // Only an INSERT or REPLACE has a rowid worth reporting: spare everything else the extra call.
    let lastInsertRowid = 0;
    if (p.isInsert) {
      const rowid = this.prepare('SELECT last_insert_rowid()').stmt;
      rowid.step();
      lastInsertRowid = Number(rowid.get()[0] ?? 0);
      rowid.reset();
    }
    this.record(sql, params ?? null);
    return { changes, lastInsertRowid };
  }

  exec(sql: string): void {
    this.raw.exec(sql);
    this.record(sql, null);
  }

  relaxed<T>(fn: () => T): T {
    if (this.depth > 0) return this.transaction(fn);
    this.relaxedOuter = true;
    try {
      return this.outer(fn);
    } finally {
      this.relaxedOuter = false;
    }
  }

  afterCommit(fn: () => void): void {
    if (this.depth === 0) fn();
    else this.after.push(fn);
  }

  transaction<T>(fn: () => T): T {
    if (this.depth === 0) return this.outer(fn);
    const name = `sp${this.depth}`;
    const mark = this.pending.length;
    const afterMark = this.after.length;
    this.control(`SAVEPOINT ${name}`);
    this.depth++;
    try {
      const result = fn();
      this.depth--;
      this.control(`RELEASE ${name}`);
      return result;
    } catch (err) {
      this.depth--;
      this.control(`ROLLBACK TO ${name}`);
      this.control(`RELEASE ${name}`);
      this.pending.length = mark;
      this.after.length = afterMark;
      throw err;
    }
  }

  /** Re-executes journaled statements without journaling them again (start-up replay). */
  replay(entries: readonly JournalEntry[]): void {
    const sink = this.sink;
    this.sink = null;
    try {
      this.transaction(() => {
        for (const [sql, params] of entries) {
          if (params === null) this.raw.exec(sql);
          else this.run(sql, params);
        }
      });
    } finally {
      this.sink = sink;
    }
  }

  /** A consistent image of the database. Must not be called inside a transaction. */
  exportBytes(): Uint8Array {
    if (this.depth > 0) throw new Error('cannot export inside a transaction');
    this.clearCache();
    const bytes = this.raw.export();
    this.setup(this.raw);
    return bytes;
  }

  /**
   * The database file as it is now, without a copy: a view of its MEMFS storage (memfs.ts), or null when
   * the file is not a managed one (then use exportBytes()). Between transactions the file is the whole
   * database (journal_mode MEMORY writes every page at COMMIT; there is no WAL). The view is live: it is
   * valid only until the next write, so use it synchronously. Must not be called inside a transaction.
   */
  fileImage(): Uint8Array | null {
    if (this.depth > 0) throw new Error('cannot read the file inside a transaction');
    const storage = fileStorage(fileNameOf(this.raw));
    if (!storage) return null;
    const size = this.first<{ page_size: number; page_count: number }>(
      'SELECT page_size, page_count FROM pragma_page_size(), pragma_page_count()',
    );
    return imageOf(storage, Number(size?.page_size ?? 0), Number(size?.page_count ?? 0));
  }

  /**
   * Captures the database file as it is now (memfs.ts captureFile): its chunks can be read later while
   * the database keeps changing. Null when the file is not a managed one (then use exportBytes()). Not
   * inside a transaction; the caller closes it.
   */
  captureImage(chunkBytes: number): FileCapture | null {
    const image = this.fileImage();
    return image ? captureFile(fileNameOf(this.raw), image.length, chunkBytes) : null;
  }

  close(): void {
    this.clearCache();
    closeRaw(this.raw);
  }

  /**
   * Takes over `other`'s database (reloaded from disk) and closes this one's; `other` must not be used
   * afterwards. Not inside a transaction. This object stays the one every family holds.
   */
  adopt(other: SqlJsDb): void {
    if (this.depth > 0 || other.depth > 0) throw new Error('cannot swap a database inside a transaction');
    this.clearCache();
    other.clearCache();
    closeRaw(this.raw);
    this.raw = other.raw;
    this.writes++;
  }

  get writeCount(): number {
    return this.writes;
  }

  private outer<T>(fn: () => T): T {
    this.control('BEGIN');
    this.depth = 1;
    this.pending = [];
    this.after = [];
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.depth = 0;
      this.pending = [];
      this.after = [];
      this.control('ROLLBACK');
      throw err;
    }
    this.depth = 0;
    this.control('COMMIT');
    const entries = this.pending;
    this.pending = [];
    if (entries.length > 0) this.sink?.(entries, this.relaxedOuter);
    const after = this.after;
    if (after.length > 0) {
      this.after = [];
      runAll(after);
    }
    return result;
  }

  private record(sql: string, params: Params | null): void {
    this.writes++;
    if (this.depth > 0) this.pending.push([sql, params]);
    else this.sink?.([[sql, params]], false);
  }

  /** BEGIN, COMMIT, savepoints: prepared once (exec() parses its SQL every time, ~10 µs a transaction). */
  private control(sql: string): void {
    const stmt = this.prepare(sql).stmt;
    try {
      stmt.step();
    } finally {
      stmt.reset();
    }
  }

  private prepare(sql: string): Prepared {
    let p = this.cache.get(sql);
    if (!p) {
      // Bounded: statements built with a variable number of `?` (IN lists) must not grow it forever.
      if (this.cache.size >= STATEMENT_CACHE_MAX) {
        const [oldest, evicted] = this.cache.entries().next().value!;
        evicted.stmt.free();
        this.cache.delete(oldest);
      }
      const stmt = this.raw.prepare(sql);
      p = {
        stmt,
        toRow: rowMaker(stmt.getColumnNames()),
        isWrite: WRITE_RE.test(sql),
        isInsert: INSERT_RE.test(sql),
      };
      this.cache.set(sql, p);
    }
    return p;
  }

  private clearCache(): void {
    for (const p of this.cache.values()) p.stmt.free();
    this.cache.clear();
  }
}

/** Runs every callback even when one throws; the first error is rethrown once all have run. */
function runAll(fns: readonly (() => void)[]): void {
  let failed = false;
  let first: unknown;
  for (const fn of fns) {
    try {
      fn();
    } catch (err) {
      if (!failed) first = err;
      failed = true;
    }
  }
  if (failed) throw first;
}

/** The first `pages` pages of a file's storage, checked against the SQLite header. */
export function imageOf(storage: Uint8Array, pageSize: number, pages: number): Uint8Array {
  const size = pageSize * pages;
  if (pageSize <= 0 || size > storage.length)
    throw new Error(`the database file is not ${pages} pages of ${pageSize} bytes`);
  // Header bytes 16–17: the page size (1 means 65536), as SQLite wrote it into the file.
  const inHeader = (storage[16]! << 8) | storage[17]!;
  if ((inHeader === 1 ? 65536 : inHeader) !== pageSize)
    throw new Error('the database file header does not match its page size');
  return storage.subarray(0, size);
}

function bind(stmt: Statement, params: Params | undefined): void {
  if (!params) return;
  if (Array.isArray(params)) stmt.bind(params as SqlValue[]);
  else {
    const named: Record<string, SqlValue> = {};
    for (const [k, v] of Object.entries(params))
      named[k.startsWith(':') || k.startsWith('$') || k.startsWith('@') ? k : `:${k}`] = v;
    stmt.bind(named);
  }
}

/**
 * Re-applied after every open and every export: sql.js forgets these when it reopens the handle.
 *
 * `journal_mode = MEMORY`: SQLite's rollback journal lives in the heap instead of a file in Emscripten's
 * MEMFS. The database file is itself in memory and Belfry's own fsync'd journal and snapshots make it
 * durable, so the rollback journal only serves ROLLBACK (failed transactions, savepoints), which works the
 * same in memory. With the default (DELETE) every commit created, wrote and deleted a MEMFS file through
 * Emscripten's JS file layer: 43 → 10 µs for a one-row transaction, 323 → 120 µs for one with a 4 kB row
 * (the webhook router's event), measured side by side in one process.
 */
export function applyDefaultSetup(raw: SqlJsDatabase): void {
  raw.exec('PRAGMA foreign_keys = ON; PRAGMA recursive_triggers = ON; PRAGMA journal_mode = MEMORY;');
}

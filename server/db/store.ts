/**
 * The durable store: sql.js in memory, made durable by belfry.db (snapshot) + journal-<gen>.log
 * (every committed transaction since). See docs/operations.md "Data directory and durability".
 *
 * Start-up: load belfry.db → replay journals from its generation on (a torn tail is cut off) →
 * attach the journal → migrate (journaled like any write).
 * Snapshot: in one synchronous step, stamp the next generation into the image, capture the database
 * file (sql.js's in-memory file, copy-on-write: memfs.ts) and rotate the journal, so every later commit
 * lands in the new generation; then write the capture into belfry.db.tmp in chunks, make it durable,
 * rename it over belfry.db, and only then delete the journals it covers.
 */
import { open, readdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Database as SqlJsDatabase } from 'sql.js';
import type { Clock } from '../lib/clock';
import { makeDirs } from '../lib/dirs';
import type { Logger } from '../lib/log';
import { applyDefaultSetup, type CommitSink, type JournalEntry, SqlJsDb } from './database';
import {
  checkJournalHeader,
  decodePayload,
  encodeRecord,
  JOURNAL_HEADER_BYTES,
  type JournalRecord,
  JournalWriter,
  journalFileName,
  type OpenJournalFile,
  parseJournalFileName,
  scanJournal,
  syncDir,
} from './journal';
import { closeRaw, type FileCapture } from './memfs';
import { type Migration, migrate } from './migrate';
import { DATA_DIR_MODE } from './permissions';
import { ReplayIndexing, type TriggerKeptIndex } from './replay-index';
import {
  beginSnapshot,
  bytesAsCapture,
  CorruptDatabaseError,
  emptyDatabase,
  loadSnapshot,
  type PendingSnapshot,
  SNAPSHOT_CHUNK_BYTES,
  SNAPSHOT_FILE,
  SNAPSHOT_TEMP_FILE,
  type WriteFileHook,
} from './snapshot';

export { CorruptDatabaseError } from './snapshot';

export const SNAPSHOT_JOURNAL_BYTES = 4 * 1024 * 1024;
/**
 * The snapshot threshold is at least this fraction of the database image: with a small configured
 * threshold and a big database, snapshots (each a full image) would otherwise follow one another.
 */
export const SNAPSHOT_IMAGE_FRACTION = 0.25;
/** With a `quiet` hook, a snapshot waits at most this long for a quiet moment once it is due. */
export const SNAPSHOT_QUIET_WAIT_MS = 30_000;
const SNAPSHOT_QUIET_POLL_MS = 100;
export const SNAPSHOT_MAX_AGE_MS = 60 * 60 * 1000;
export const GROUP_COMMIT_WINDOW_MS = 0;
/** Journal records replayed per in-memory transaction at start-up (one BEGIN/COMMIT each is slow). */
const REPLAY_CHUNK = 500;

export interface StoreOptions {
  dataDir: string;
  log: Logger;
  clock: Clock;
  migrations: readonly Migration[];
  /**
   * Snapshot when the journal passes this many bytes (checked on every commit). Default 4 MiB (~18k
   * messages): next to a 1M-message FTS index a crash then costs at most ~1 s of replay at start-up
   * (with triggerKeptIndexes; ~4 s without), and a snapshot, ~0.4–0.9 s at that size (in slices of
   * ≤ 4 ms), comes every 9–18k messages. With `quiet`, a snapshot is due from half of it
   * on and waits for a quiet moment; at the full threshold it no longer waits. The threshold in effect
   * is never below SNAPSHOT_IMAGE_FRACTION of the last snapshot's size (snapshotThreshold).
   */
  snapshotJournalBytes?: number;
  /**
   * True when nobody would wait for a snapshot now (no request for a moment). A snapshot of a million
   * messages takes ~0.4–0.9 s (in slices, but it adds work), so a due snapshot waits for such a
   * moment (at most SNAPSHOT_QUIET_WAIT_MS by the store's clock) unless the journal reaches the full threshold. Without it a
   * snapshot runs as soon as the threshold is passed.
   */
  quiet?: () => boolean;
  /** Snapshot when the oldest unsnapshotted record is older (checked by maybeSnapshot). Default 1 hour. */
  snapshotMaxAgeMs?: number;
  /** Extra wait before each journal batch. Default 0: adaptive group commit. */
  groupCommitWindowMs?: number;
  /**
   * Full-text indexes kept by triggers, filled once at the end of a journal replay instead of statement
   * by statement (replay-index.ts: FTS4 costs ~0.4 ms a replayed message otherwise, next to 1M).
   */
  triggerKeptIndexes?: readonly TriggerKeptIndex[];
  /** Tests only: replace file access to count fsyncs or inject failures. */
  io?: StoreIo;
}

export interface StoreIo {
  openJournalFile?: OpenJournalFile;
  writeSnapshotFile?: WriteFileHook;
}

export interface StoreStats {
  /** Journal bytes not yet covered by a durable snapshot. */
  journalBytes: number;
  journalRecords: number;
  lastSnapshotAt: number | null;
  lastSnapshotMs: number | null;
  /** fdatasync calls on the journal since open (group commit: far fewer than records). */
  journalSyncs: number;
}

export interface Store {
  readonly db: SqlJsDb;
  sync(): Promise<void>;
  hasUnsynced(): boolean;
  snapshot(): Promise<void>;
  /**
   * After a journal failure (disk full): tries the journal again and, when it works, reloads the
   * database from disk so that nothing refused stays in memory. True when the store is healthy.
   */
  recover(): Promise<boolean>;
  maybeSnapshot(): Promise<boolean>;
  healthy(): boolean;
  check(): void;
  close(): Promise<void>;
  stats(): StoreStats;
}

/**
 * Statements not worth journaling: connection settings and VACUUM change no logical content, and
 * replay runs inside a transaction where VACUUM fails and PRAGMAs are ignored. user_version is ours.
 */
const NOT_JOURNALED_RE = /^\s*(pragma|vacuum)\b/i;

/**
 * sql.js keeps its database file in Emscripten's in-memory filesystem. Our journal is the durability,
 * so SQLite's own file work per transaction buys nothing: its rollback journal file (MEMORY still
 * lets ROLLBACK and savepoints work), syncs, and the lock/hot-journal checks at the start of every
 * transaction (EXCLUSIVE: one connection owns the file). Together ~2.5x faster commits with FTS4
 * and ~3x on plain tables (measured, docs/operations.md). Re-applied after every export like the
 * default PRAGMAs.
 */
export function applyStoreSetup(raw: SqlJsDatabase): void {
  applyDefaultSetup(raw);
  raw.exec(
    'PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY;',
  );
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  const dir = resolve(opts.dataDir);
  makeDirs(dir, DATA_DIR_MODE);
  const opened = await openFromDisk(dir, opts);
  try {
    const store = new BelfryStore(dir, opened, opts);
    migrate(opened.db, opts.migrations, opts.clock.now());
    store.afterOpen();
    return store;
  } catch (err) {
    await opened.writer.close().catch(() => {});
    opened.db.close();
    throw err;
  }
}

interface Opened {
  db: SqlJsDb;
  writer: JournalWriter;
  recovered: Recovered;
  hasSnapshot: boolean;
  /** Size of belfry.db (0 without one). */
  imageBytes: number;
}

/** belfry.db + the journals that continue it, and a writer appending to the last one. */
async function openFromDisk(dir: string, opts: StoreOptions): Promise<Opened> {
  // A leftover of a snapshot interrupted before its rename: the old belfry.db is still valid.
  await rm(join(dir, SNAPSHOT_TEMP_FILE), { force: true });

  const snap = await loadSnapshot(dir);
  const base = snap?.generation ?? 1;
  const raw = snap?.raw ?? (await emptyDatabase());
  let db: SqlJsDb;
  try {
    db = new SqlJsDb(raw, applyStoreSetup);
  } catch (err) {
    closeRaw(raw);
    throw err;
  }
  try {
    const recovered = await recoverJournals(dir, db, base, snap !== null, opts);
    const writerOpts = {
      dir,
      log: opts.log,
      openFile: opts.io?.openJournalFile,
      windowMs: opts.groupCommitWindowMs ?? GROUP_COMMIT_WINDOW_MS,
    };
    const writer =
      recovered.appendTo !== null
        ? await JournalWriter.append(writerOpts, recovered.appendTo, recovered.appendSize)
        : await JournalWriter.create(writerOpts, base);
    return { db, writer, recovered, hasSnapshot: snap !== null, imageBytes: snap?.bytes ?? 0 };
  } catch (err) {
    db.close();
    throw err;
  }
}

interface Recovered {
  /** The generation to keep appending to, or null to create `base`'s file. */
  appendTo: number | null;
  /** Size of appendTo's file. */
  appendSize: number;
  bytes: number;
  records: number;
}

/** Replays every journal generation the snapshot does not contain, cutting off a torn tail. */
async function recoverJournals(
  dir: string,
  db: SqlJsDb,
  base: number,
  hasSnapshot: boolean,
  opts: Pick<StoreOptions, 'log' | 'triggerKeptIndexes'>,
): Promise<Recovered> {
  const log = opts.log;
  const generations = (await readdir(dir))
    .map(parseJournalFileName)
    .filter((g): g is number => g !== null)
    .sort((a, b) => a - b);

  for (const g of generations.filter((g) => g < base)) {
    // Covered by belfry.db: left by a crash between a snapshot's rename and its clean-up.
    await rm(join(dir, journalFileName(g)), { force: true });
    log.info('removed a journal already contained in the snapshot', { file: journalFileName(g) });
  }
  const live = generations.filter((g) => g >= base);
  if (hasSnapshot && live.length === 0) {
    // A snapshot's journal is durable before the snapshot is (runSnapshot): it was lost or removed.
    const missing = join(dir, journalFileName(base));
    throw new CorruptDatabaseError(
      `${join(dir, SNAPSHOT_FILE)} continues with ${missing}, which is missing: the writes made after ` +
        'that snapshot are lost. Restore the journal (or the data directory) from a backup; to start ' +
        `from the snapshot alone and accept that loss, create an empty file ${missing}.`,
    );
  }
  for (let i = 0; i < live.length; i++) {
    if (live[i] !== base + i) {
      const missing = journalFileName(base + i);
      const why =
        i > 0
          ? `${missing} before it is missing`
          : hasSnapshot
            ? `${SNAPSHOT_FILE} continues with ${missing}, which is missing`
            : `there is no ${SNAPSHOT_FILE} for it to continue`;
      throw new CorruptDatabaseError(
        `${join(dir, journalFileName(live[i]!))} cannot be replayed: ${why}. ` +
          `If you restored ${SNAPSHOT_FILE} from a backup, move the journal-*.log files out of ${dir}; ` +
          'otherwise restore the data directory from a backup.',
      );
    }
  }

  let appendTo: number | null = null;
  let appendSize = 0;
  let bytes = 0;
  let records = 0;
  let indexing: ReplayIndexing | null | undefined;
  for (let i = 0; i < live.length; i++) {
    const g = live[i]!;
    const last = i === live.length - 1;
    const name = journalFileName(g);
    const path = join(dir, name);
    const data = await readFile(path);
    const header = checkJournalHeader(data, g);
    if (!header.ok) {
      if (last && data.length <= JOURNAL_HEADER_BYTES) {
        // Created but its header never became durable: it holds no records.
        log.warn(`discarded an incomplete journal file ${path} (${header.reason})`, { file: path });
        await rm(path, { force: true });
        continue;
      }
      throw new CorruptDatabaseError(
        `${path} is damaged (${header.reason}). Restore the data directory from a backup.`,
      );
    }
    const scan = scanJournal(data);
    if (scan.damage) {
      const { offset, droppedBytes, reason, intactAfter } = scan.damage;
      if (intactAfter !== null) {
        throw new CorruptDatabaseError(
          `${path} is damaged at offset ${offset} (${reason}), and intact records follow at offset ` +
            `${intactAfter}: this is not a write cut short by a crash, and starting would lose acknowledged ` +
            'writes. The file was left untouched. Restore the data directory from a backup, or copy ' +
            `${path} away and truncate it to ${offset} bytes to start with the data up to the damage.`,
        );
      }
      if (!last) {
        throw new CorruptDatabaseError(
          `${path} is damaged at offset ${offset} (${reason}) but later journals exist. ` +
            'Restore the data directory from a backup, or move the later journal-*.log files away to ' +
            'start with the data up to the damage.',
        );
      }
      log.warn(
        `discarded a torn journal tail: ${path} at offset ${offset}, ${droppedBytes} bytes dropped (${reason})`,
        { file: path, offset, droppedBytes, reason },
      );
      await truncateDurably(path, scan.validEnd);
    }
    if (indexing === undefined && scan.records.length > 0)
      indexing = ReplayIndexing.begin(db, opts.triggerKeptIndexes ?? []);
    replayRecords(db, path, scan.records, indexing ?? null);
    bytes += scan.validEnd - JOURNAL_HEADER_BYTES;
    records += scan.records.length;
    appendTo = g;
    appendSize = scan.validEnd;
  }
  if (indexing?.deferred) db.transaction(() => indexing.finish());
  if (records > 0) log.info('replayed the journal', { records, bytes, generations: live.length });
  return { appendTo, appendSize, bytes, records };
}

function replayRecords(
  db: SqlJsDb,
  path: string,
  records: readonly JournalRecord[],
  indexing: ReplayIndexing | null,
): void {
  for (let start = 0; start < records.length; start += REPLAY_CHUNK) {
    const chunk = records.slice(start, start + REPLAY_CHUNK);
    db.transaction(() => {
      for (const rec of chunk) {
        let entries: JournalEntry[];
        try {
          entries = decodePayload(rec.payload);
        } catch (err) {
          throw new CorruptDatabaseError(
            `${path} holds an unreadable record at offset ${rec.offset} (${errorMessage(err)}); ` +
              'it may have been written by a newer Belfry. Restore the data directory from a backup.',
          );
        }
        try {
          if (indexing?.deferred && entries.some(([sql]) => !indexing.allows(sql))) indexing.finish();
          db.replay(entries);
        } catch (err) {
          throw new CorruptDatabaseError(
            `replaying ${path} failed at offset ${rec.offset}: ${errorMessage(err)}. The journal does not ` +
              `match ${SNAPSHOT_FILE}; restore the data directory from a backup.`,
          );
        }
      }
    });
  }
}

async function truncateDurably(path: string, length: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(length);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

class BelfryStore implements Store {
  private generation: number;
  private uncoveredBytes: number;
  private uncoveredRecords: number;
  private oldestUncoveredAt: number | null;
  private lastSnapshotAt: number | null = null;
  private lastSnapshotMs: number | null = null;
  private snapshotChain: Promise<void> = Promise.resolve();
  private snapshotQueued: Promise<void> | null = null;
  private autoSnapshotScheduled = false;
  /** The due snapshot must not wait for a quiet moment any more. */
  private autoSnapshotForced = false;
  /** Journal bytes at which a snapshot stops waiting for a quiet moment (raised after a long replay). */
  private forceSnapshotAtBytes: number;
  private quietTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private closed = false;
  private closePromise: Promise<void> | null = null;
  private readonly sink: CommitSink = (entries, relaxed) => this.onCommit(entries, relaxed);
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly snapshotJournalBytes: number;
  private readonly snapshotMaxAgeMs: number;
  readonly db: SqlJsDb;
  private writer: JournalWriter;
  private hasSnapshotFile: boolean;
  /** Size of the last snapshot image: the snapshot threshold scales with it. */
  private imageBytes: number;
  private recovering: Promise<boolean> | null = null;

  constructor(
    private readonly dir: string,
    opened: Opened,
    private readonly opts: StoreOptions,
  ) {
    this.log = opts.log;
    this.clock = opts.clock;
    this.db = opened.db;
    this.writer = opened.writer;
    this.hasSnapshotFile = opened.hasSnapshot;
    this.imageBytes = opened.imageBytes;
    this.snapshotJournalBytes = opts.snapshotJournalBytes ?? SNAPSHOT_JOURNAL_BYTES;
    this.snapshotMaxAgeMs = opts.snapshotMaxAgeMs ?? SNAPSHOT_MAX_AGE_MS;
    this.generation = 0;
    this.uncoveredBytes = 0;
    this.uncoveredRecords = 0;
    this.oldestUncoveredAt = null;
    this.forceSnapshotAtBytes = 0;
    this.adoptRecovered(opened.recovered);
    this.db.setCommitSink(this.sink);
  }

  private adoptRecovered(recovered: Recovered): void {
    // A replayed journal is durable already: folding it into a snapshot can wait for a quiet moment
    // instead of stalling the first requests after start-up.
    const threshold = this.snapshotThreshold();
    this.forceSnapshotAtBytes = Math.max(threshold, recovered.bytes + threshold / 2);
    this.generation = this.writer.generation;
    this.uncoveredBytes = recovered.bytes;
    this.uncoveredRecords = recovered.records;
    this.oldestUncoveredAt = recovered.records > 0 ? this.clock.now() : null;
  }

  /**
   * Journal bytes at which a snapshot is due: the configured threshold, but at least a fraction of
   * the database image, so that a big database is not exported over and over for small journals.
   */
  snapshotThreshold(): number {
    return Math.max(this.snapshotJournalBytes, Math.ceil(this.imageBytes * SNAPSHOT_IMAGE_FRACTION));
  }

  /** A long journal replayed at start-up is worth folding into a snapshot soon. */
  afterOpen(): void {
    this.checkSnapshotDue();
  }

  sync(): Promise<void> {
    return this.writer.sync();
  }

  hasUnsynced(): boolean {
    return this.writer.hasUnsynced();
  }

  healthy(): boolean {
    return !this.closing && !this.writer.failed;
  }

  check(): void {
    if (this.closed) throw new Error('the store is closed');
    this.db.first('SELECT 1');
  }

  stats(): StoreStats {
    return {
      journalBytes: this.uncoveredBytes,
      journalRecords: this.uncoveredRecords,
      lastSnapshotAt: this.lastSnapshotAt,
      lastSnapshotMs: this.lastSnapshotMs,
      journalSyncs: this.writer.syncs,
    };
  }

  snapshot(): Promise<void> {
    if (this.closing) return Promise.reject(new Error('the store is closing'));
    // A snapshot that has not started yet exports later than this call: it covers this caller too.
    if (this.snapshotQueued) return this.snapshotQueued;
    const next = this.snapshotChain
      .catch(() => {})
      .then(() => {
        this.snapshotQueued = null;
        return this.runSnapshot();
      });
    this.snapshotQueued = next;
    this.snapshotChain = next;
    return next;
  }

  async maybeSnapshot(): Promise<boolean> {
    if (this.closing) return false;
    if (this.writer.failed) return this.recover();
    const bySize = this.uncoveredBytes >= this.snapshotThreshold();
    const byAge =
      this.oldestUncoveredAt !== null && this.clock.now() - this.oldestUncoveredAt >= this.snapshotMaxAgeMs;
    if (!bySize && !byAge) return false;
    await this.snapshot();
    return true;
  }

  recover(): Promise<boolean> {
    if (!this.writer.failed) return Promise.resolve(!this.closing);
    this.recovering ??= this.tryRecover().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  /**
   * The failed writer cut its file back to the last durable batch, so the disk holds exactly what was
   * acknowledged. Probe the journal with an empty record (append + fdatasync, like any write); once that
   * works, load the database from disk again and swap it in: writes that were refused (in memory only)
   * are gone, and appends continue on the disk's journal.
   */
  private async tryRecover(): Promise<boolean> {
    if (this.closing) return false;
    await this.snapshotChain.catch(() => {});
    const failed = this.writer;
    await failed.close().catch(() => {});
    let opened: Opened;
    try {
      const uncut = failed.uncut;
      // The failed batch must go before anything reads the file: its clients were refused.
      if (uncut) await truncateDurably(join(this.dir, uncut.file), uncut.length);
      opened = await openFromDisk(this.dir, this.opts);
    } catch (err) {
      this.log.warn('the journal is still unusable; retrying later', { error: err });
      return false;
    }
    try {
      opened.writer.append(encodeRecord([]));
      await opened.writer.sync();
    } catch (err) {
      await opened.writer.close().catch(() => {});
      opened.db.close();
      this.log.warn('the journal is still unusable; retrying later', { error: err });
      return false;
    }
    if (this.closing) {
      await opened.writer.close().catch(() => {});
      opened.db.close();
      return false;
    }
    // Synchronous from here: no commit can land between the swap of the image and of the writer.
    this.db.adopt(opened.db);
    this.writer = opened.writer;
    this.imageBytes = opened.imageBytes;
    this.hasSnapshotFile = opened.hasSnapshot;
    this.adoptRecovered({
      ...opened.recovered,
      bytes: opened.recovered.bytes + opened.writer.bytesWritten,
    });
    this.uncoveredRecords++;
    this.log.info('the journal works again; reloaded the database from disk, the refused writes are gone', {
      generation: this.generation,
    });
    return true;
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    if (this.quietTimer) clearTimeout(this.quietTimer);
    await this.snapshotChain.catch(() => {});
    await this.writer.sync().catch(() => {}); // a failure was logged when it happened
    if (this.writer.failed) {
      this.log.error(
        'no final snapshot: the journal failed, and the database in memory holds writes that were refused; ' +
          'the next start replays what the journal acknowledged',
      );
    } else if (this.uncoveredRecords > 0 || !this.hasSnapshotFile) {
      try {
        await this.runSnapshot();
      } catch (err) {
        this.log.error('final snapshot failed; the journal still holds the data', { error: err });
      }
    }
    try {
      await this.writer.close();
    } catch (err) {
      this.log.error('closing the journal failed', { error: err });
    }
    this.db.close();
    this.closed = true;
  }

  private onCommit(entries: readonly JournalEntry[], relaxed: boolean): void {
    const kept = entries.filter(([sql, params]) => params !== null || !NOT_JOURNALED_RE.test(sql));
    if (kept.length === 0) return;
    let record: Buffer;
    try {
      record = encodeRecord(kept);
    } catch (err) {
      // Committed in memory but impossible to journal: nothing after it can be made durable either.
      this.writer.poison(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    try {
      this.writer.append(record, relaxed);
    } catch (err) {
      this.log.error('a commit after the journal closed was not journaled', { error: err });
      return;
    }
    this.uncoveredBytes += record.length;
    this.uncoveredRecords++;
    this.oldestUncoveredAt ??= this.clock.now();
    this.checkSnapshotDue();
  }

  private checkSnapshotDue(): void {
    if (this.uncoveredBytes >= this.forceSnapshotAtBytes) this.scheduleAutoSnapshot(true);
    else if (this.opts.quiet && this.uncoveredBytes >= this.snapshotThreshold() / 2)
      this.scheduleAutoSnapshot(false);
  }

  /** Runs a snapshot soon: at once when forced (or without a quiet hook), else in a quiet moment. */
  private scheduleAutoSnapshot(force: boolean): void {
    if (this.closing) return;
    if (force) this.autoSnapshotForced = true;
    if (this.autoSnapshotScheduled) return;
    this.autoSnapshotScheduled = true;
    const since = this.clock.now();
    const attempt = () => {
      this.quietTimer = null;
      if (this.closing) return;
      const quiet = this.opts.quiet;
      if (
        this.autoSnapshotForced ||
        !quiet ||
        quiet() ||
        this.clock.now() - since >= SNAPSHOT_QUIET_WAIT_MS
      ) {
        this.snapshot().catch(() => {}); // runSnapshot logged it
        return;
      }
      this.quietTimer = setTimeout(attempt, SNAPSHOT_QUIET_POLL_MS);
      this.quietTimer.unref();
    };
    setImmediate(attempt);
  }

  private async runSnapshot(): Promise<void> {
    if (this.closed) throw new Error('the store is closed');
    const started = performance.now();
    this.autoSnapshotScheduled = false;
    this.autoSnapshotForced = false;
    // The image in memory holds writes that were refused: it must never reach belfry.db.
    if (this.writer.failed) throw new Error('the journal failed; no snapshot until it recovers');
    this.forceSnapshotAtBytes = this.snapshotThreshold();
    const next = this.generation + 1;

    // Synchronous on purpose: no transaction can commit between the image and the rotation, so every
    // record is either in the image or in generation `next`. The image is a capture of the database file
    // (memfs.ts: written out later chunk by chunk, a chunk copied aside only when a commit would change
    // it first; exportBytes() only for a file memfs.ts does not manage).
    let image: FileCapture;
    let pending: PendingSnapshot;
    this.db.setCommitSink(null);
    try {
      this.db.exec(`PRAGMA user_version = ${next}`);
      image = this.db.captureImage(SNAPSHOT_CHUNK_BYTES) ?? bytesAsCapture(this.db.exportBytes());
      pending = beginSnapshot(this.dir, image, this.opts.io?.writeSnapshotFile);
    } catch (err) {
      this.log.error('snapshot failed; the journal keeps the data', { file: SNAPSHOT_FILE, error: err });
      throw err;
    } finally {
      this.db.setCommitSink(this.sink);
    }
    const rotated = this.writer.rotate(next);
    this.generation = next;
    const covered = {
      bytes: this.uncoveredBytes,
      records: this.uncoveredRecords,
      oldest: this.oldestUncoveredAt,
    };
    this.uncoveredBytes = 0;
    this.uncoveredRecords = 0;
    this.oldestUncoveredAt = null;
    /** The event loop was blocked this long: stamp, capture (or export), temp file, rotation. */
    const blockedMs = performance.now() - started;

    try {
      // Every record before the image is durable and the journal the image continues with exists before
      // belfry.db names it: a batch that fails now was refused to its clients, and the image (which
      // holds it) is then dropped; and a missing journal always means damage (recoverJournals).
      await rotated;
      await pending.finish();
    } catch (err) {
      await pending.abort();
      // The old belfry.db and every journal are untouched: nothing is lost, it all stays to replay.
      this.uncoveredBytes += covered.bytes;
      this.uncoveredRecords += covered.records;
      if (covered.oldest !== null) this.oldestUncoveredAt = covered.oldest;
      this.log.error('snapshot failed; the journal keeps the data', { file: SNAPSHOT_FILE, error: err });
      throw err;
    }
    this.hasSnapshotFile = true;
    this.imageBytes = image.size;
    this.forceSnapshotAtBytes = this.snapshotThreshold();
    await this.dropJournalsBelow(next);
    const totalMs = performance.now() - started;
    this.lastSnapshotAt = this.clock.now();
    this.lastSnapshotMs = totalMs;
    this.log.info('snapshot written', {
      generation: next,
      bytes: image.size,
      records: covered.records,
      blockedMs: Math.round(blockedMs * 10) / 10,
      copiedAsideBytes: image.copiedChunks * image.chunkBytes,
      totalMs: Math.round(totalMs * 10) / 10,
    });
  }

  private async dropJournalsBelow(generation: number): Promise<void> {
    for (const name of await readdir(this.dir)) {
      const g = parseJournalFileName(name);
      if (g === null || g >= generation) continue;
      try {
        await rm(join(this.dir, name), { force: true });
      } catch (err) {
        // Harmless: start-up removes journals the snapshot covers.
        this.log.warn('could not remove a journal covered by the snapshot', { file: name, error: err });
      }
    }
    await syncDir(this.dir).catch((err: unknown) => {
      this.log.warn('could not sync the data directory after removing journals', { error: err });
    });
  }
}

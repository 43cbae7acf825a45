import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../lib/log';
import type { JournalEntry } from './database';
import {
  checkJournalHeader,
  decodePayload,
  encodeJournalHeader,
  encodeRecord,
  JOURNAL_HEADER_BYTES,
  type JournalFile,
  JournalWriter,
  journalFileName,
  type OpenJournalFile,
  openAppendFile,
  parseJournalFileName,
  RECORD_HEADER_BYTES,
  scanJournal,
} from './journal';

function roundTrip(entries: readonly JournalEntry[]): JournalEntry[] {
  const rec = encodeRecord(entries);
  expect(rec.readUInt32LE(0)).toBe(rec.length - RECORD_HEADER_BYTES);
  return decodePayload(rec.subarray(RECORD_HEADER_BYTES));
}

function fileOf(...records: Buffer[]): Buffer {
  return Buffer.concat([encodeJournalHeader(1), ...records]);
}

describe('journal record codec', () => {
  it('encodes a statement text the same whether it was seen before or not, past the cache bound', () => {
    // Statement texts are encoded once and reused (encodedStatement): a reused encoding must be byte
    // for byte what a fresh one is, for texts that are not well-formed UTF-16 too, and after eviction.
    const texts = Array.from({ length: 300 }, (_, i) => `INSERT INTO t VALUES (?) -- ${i} é`);
    texts.push('INSERT INTO t VALUES (?) -- lone \ud800 surrogate');
    const first = texts.map((sql) => encodeRecord([[sql, [1]]]));
    const again = texts.map((sql) => encodeRecord([[sql, [1]]]));
    for (let i = 0; i < texts.length; i++) {
      expect(again[i]!.equals(first[i]!)).toBe(true);
      expect(decodePayload(again[i]!.subarray(RECORD_HEADER_BYTES))).toEqual([[texts[i], [1]]]);
    }
    const mixed = roundTrip([
      [texts[0]!, [1]],
      [texts[300]!, ['x']],
      [texts[0]!, null],
    ]);
    expect(mixed).toEqual([
      [texts[0], [1]],
      [texts[300], ['x']],
      [texts[0], null],
    ]);
  });

  it('round-trips every parameter kind exactly', () => {
    const bytes = new Uint8Array([0, 1, 2, 254, 255, 0]);
    const numbers = [
      0,
      -0,
      1,
      -1,
      2 ** 31 - 1,
      2 ** 31,
      -(2 ** 31),
      2 ** 53,
      -(2 ** 53),
      2 ** 53 - 1,
      1.5,
      0.1 + 0.2,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.NaN,
    ];
    const strings = ['', 'plain', 'ünïcødé', '🔔 bell', 'lone \uD800 surrogate', '\uDC00', 'nul\u0000inside'];
    const entries: JournalEntry[] = [
      ['INSERT INTO t VALUES (?, ?, ?)', [null, bytes, new Uint8Array(0)]],
      ['INSERT INTO n VALUES (?)', numbers],
      ['INSERT INTO s VALUES (?)', strings],
      ['UPDATE t SET a = :a, b = $b WHERE c = @c', { a: 'x', $b: 2 ** 53, '@c': bytes }],
      ['CREATE TABLE x (y)', null],
      ['DELETE FROM t', []],
    ];
    const back = roundTrip(entries);
    expect(back).toHaveLength(entries.length);
    expect(back[0]![1]).toEqual([null, bytes, new Uint8Array(0)]);
    expect(((back[0]![1] as unknown[])[1] as object).constructor).toBe(Uint8Array);
    const backNumbers = back[1]![1] as number[];
    expect(numbers.every((n, i) => Object.is(backNumbers[i], n))).toBe(true);
    expect(back[2]![1]).toEqual(strings);
    expect(back[3]).toEqual(entries[3]);
    expect(back[4]).toEqual(['CREATE TABLE x (y)', null]);
    expect(back[5]).toEqual(['DELETE FROM t', []]);
  });

  it('normalises values the way sql.js binds them', () => {
    const odd = [true, false, 12345678901234567890n, [1, 2, 300]] as unknown as JournalEntry[1];
    const back = roundTrip([['INSERT INTO t VALUES (?, ?, ?, ?)', odd]]);
    expect(back[0]![1]).toEqual([1, 0, '12345678901234567890', new Uint8Array([1, 2, 44])]);
  });

  it('refuses a value sql.js could not have bound', () => {
    const bad = [{ not: 'bindable' }] as unknown as JournalEntry[1];
    expect(() => encodeRecord([['INSERT INTO t VALUES (?)', bad]])).toThrow(/cannot journal/);
  });

  it('keeps the sql text exact, lone surrogates included', () => {
    const sql = "INSERT INTO t VALUES ('\uD83D')";
    expect(roundTrip([[sql, null]])[0]![0]).toBe(sql);
  });
});

describe('journal files', () => {
  it('names generations so they sort', () => {
    expect(journalFileName(7)).toBe('journal-000007.log');
    expect(parseJournalFileName('journal-000007.log')).toBe(7);
    expect(parseJournalFileName('journal-1234567.log')).toBe(1234567);
    expect(parseJournalFileName('journal-7.log.bak')).toBeNull();
    expect(parseJournalFileName('belfry.db')).toBeNull();
  });

  it('checks the header magic, checksum and generation', () => {
    expect(checkJournalHeader(encodeJournalHeader(3), 3)).toEqual({ ok: true });
    expect(checkJournalHeader(encodeJournalHeader(3), 4).ok).toBe(false);
    expect(checkJournalHeader(encodeJournalHeader(3).subarray(0, 10), 3).ok).toBe(false);
    const flipped = encodeJournalHeader(3);
    flipped[9]! ^= 1;
    expect(checkJournalHeader(flipped, 3)).toEqual({ ok: false, reason: 'header checksum mismatch' });
    expect(checkJournalHeader(Buffer.alloc(16), 3).ok).toBe(false);
  });

  it('scans intact records', () => {
    const a = encodeRecord([['INSERT INTO t VALUES (?)', [1]]]);
    const b = encodeRecord([['INSERT INTO t VALUES (?)', [2]]]);
    const scan = scanJournal(fileOf(a, b));
    expect(scan.damage).toBeNull();
    expect(scan.records.map((r) => r.offset)).toEqual([
      JOURNAL_HEADER_BYTES,
      JOURNAL_HEADER_BYTES + a.length,
    ]);
    expect(scan.validEnd).toBe(JOURNAL_HEADER_BYTES + a.length + b.length);
  });

  it('stops at a record cut in the middle', () => {
    const a = encodeRecord([['INSERT INTO t VALUES (?)', [1]]]);
    const b = encodeRecord([['INSERT INTO t VALUES (?)', ['a longer value']]]);
    for (const cut of [1, 5, RECORD_HEADER_BYTES, b.length - 1]) {
      const scan = scanJournal(fileOf(a, b.subarray(0, cut)));
      expect(scan.records).toHaveLength(1);
      expect(scan.validEnd).toBe(JOURNAL_HEADER_BYTES + a.length);
      expect(scan.damage).toMatchObject({ offset: JOURNAL_HEADER_BYTES + a.length, droppedBytes: cut });
    }
  });

  it('stops at a record whose checksum fails', () => {
    const a = encodeRecord([['INSERT INTO t VALUES (?)', [1]]]);
    const b = Buffer.from(encodeRecord([['INSERT INTO t VALUES (?)', [2]]]));
    b[b.length - 1]! ^= 0x40;
    const scan = scanJournal(fileOf(a, b));
    expect(scan.records).toHaveLength(1);
    expect(scan.damage).toEqual({
      offset: JOURNAL_HEADER_BYTES + a.length,
      droppedBytes: b.length,
      reason: 'checksum mismatch',
      intactAfter: null,
    });
  });

  it('finds the intact records after damage in the middle (not a torn tail)', () => {
    const a = encodeRecord([['INSERT INTO t VALUES (?)', [1]]]);
    const b = Buffer.from(encodeRecord([['INSERT INTO t VALUES (?)', ['middle']]]));
    const c = encodeRecord([['INSERT INTO t VALUES (?)', [3]]]);
    const d = encodeRecord([['INSERT INTO t VALUES (?)', [4]]]);
    b[b.length - 3]! ^= 0x01;
    const scan = scanJournal(fileOf(a, b, c, d));
    expect(scan.records).toHaveLength(1);
    expect(scan.damage).toEqual({
      offset: JOURNAL_HEADER_BYTES + a.length,
      droppedBytes: b.length + c.length + d.length,
      reason: 'checksum mismatch',
      intactAfter: JOURNAL_HEADER_BYTES + a.length + b.length,
    });
    // A damaged length field: the frame boundaries are lost, the next record is still found.
    const e = Buffer.from(b);
    e.writeUInt32LE(0x7fffffff, 0);
    expect(scanJournal(fileOf(a, e, c)).damage?.intactAfter).toBe(JOURNAL_HEADER_BYTES + a.length + e.length);
  });

  it('treats a zero-filled tail as damage, not as records', () => {
    const a = encodeRecord([['INSERT INTO t VALUES (?)', [1]]]);
    const scan = scanJournal(fileOf(a, Buffer.alloc(4096)));
    expect(scan.records).toHaveLength(1);
    expect(scan.damage?.droppedBytes).toBe(4096);
    expect(scan.damage?.intactAfter).toBeNull();
  });
});

describe('JournalWriter', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** The real file opener, counting writes and fdatasyncs, optionally failing on demand. */
  function countingOpener(failOn?: { datasync?: number }) {
    const counts = { writes: 0, syncs: 0 };
    const openFile: OpenJournalFile = async (path, mode) => {
      const real = await openAppendFile(path, mode);
      const file: JournalFile = {
        write: async (data) => {
          counts.writes++;
          await real.write(data);
        },
        datasync: async () => {
          counts.syncs++;
          if (failOn?.datasync === counts.syncs)
            throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
          await real.datasync();
        },
        truncate: (length) => real.truncate(length),
        close: () => real.close(),
      };
      return file;
    };
    return { counts, openFile };
  }

  it('shares one fdatasync between the records that pile up while the previous one runs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'belfry-journal-'));
    const log = memoryLogger();
    const { counts, openFile } = countingOpener();
    const w = await JournalWriter.create({ dir, log, openFile }, 1);
    const syncsAfterCreate = counts.syncs;
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      w.append(encodeRecord([['INSERT INTO t VALUES (?)', [i]]]));
      waits.push(w.sync());
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waits);
    expect(w.hasUnsynced()).toBe(false);
    expect(counts.syncs - syncsAfterCreate).toBeLessThan(50);
    await w.close();
    const scan = scanJournal(await readFile(join(dir, journalFileName(1))));
    expect(scan.damage).toBeNull();
    expect(scan.records.map((r) => decodePayload(r.payload)[0]![1])).toEqual(
      Array.from({ length: 200 }, (_, i) => [i]),
    );
  });

  it('writes relaxed records alone only after their window, and at once with a required record', async () => {
    dir = await mkdtemp(join(tmpdir(), 'belfry-journal-'));
    const { counts, openFile } = countingOpener();
    const w = await JournalWriter.create({ dir, log: memoryLogger(), openFile, relaxedFlushMs: 60_000 }, 1);
    const base = counts.syncs;
    // A train of relaxed records (background bookkeeping) causes no fdatasync of its own...
    for (let i = 0; i < 50; i++) {
      w.append(encodeRecord([['INSERT INTO t VALUES (?)', [i]]]), true);
      await new Promise((r) => setImmediate(r));
    }
    expect(counts.syncs - base).toBe(0);
    expect(w.hasUnsynced()).toBe(false);
    // ...a required record takes them all along in one batch, in order.
    w.append(encodeRecord([['INSERT INTO t VALUES (?)', ['required']]]));
    await w.sync();
    expect(counts.syncs - base).toBe(1);
    // Alone again, a relaxed record goes out once its window has passed (the timer driven by hand).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const short = await JournalWriter.append(
      { dir, log: memoryLogger(), openFile, relaxedFlushMs: 60_000 },
      1,
      (await stat(join(dir, journalFileName(1)))).size,
    );
    await w.close();
    const before = counts.syncs;
    try {
      short.append(encodeRecord([['INSERT INTO t VALUES (?)', ['late']]]), true);
      vi.advanceTimersByTime(59_999);
      await new Promise((r) => setImmediate(r));
      expect(counts.syncs).toBe(before);
      vi.advanceTimersByTime(1);
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(counts.syncs).toBe(before + 1));
    await short.close();
    const scan = scanJournal(await readFile(join(dir, journalFileName(1))));
    expect(scan.records.map((r) => decodePayload(r.payload)[0]![1])).toEqual([
      ...Array.from({ length: 50 }, (_, i) => [i]),
      ['required'],
      ['late'],
    ]);
  });

  it('rejects waiters, logs and stays failed after an fsync error', async () => {
    dir = await mkdtemp(join(tmpdir(), 'belfry-journal-'));
    const log = memoryLogger();
    const failures: Error[] = [];
    const { openFile } = countingOpener({ datasync: 2 });
    const w = await JournalWriter.create({ dir, log, openFile, onFailure: (e) => failures.push(e) }, 1);
    w.append(encodeRecord([['INSERT INTO t VALUES (1)', null]]));
    await expect(w.sync()).rejects.toThrow(/EIO/);
    expect(w.failed?.message).toMatch(/EIO/);
    expect(failures).toHaveLength(1);
    expect(log.lines.some((l) => l.includes('ERROR journal write failed'))).toBe(true);
    w.append(encodeRecord([['INSERT INTO t VALUES (2)', null]]));
    await expect(w.sync()).rejects.toThrow(/EIO/);
    await w.close();
    // Closed for a recovery: a commit landing meanwhile is still refused, never taken as durable.
    w.append(encodeRecord([['INSERT INTO t VALUES (3)', null]]));
    expect(w.hasUnsynced()).toBe(true);
    await expect(w.sync()).rejects.toThrow(/EIO/);
    // The failed batch was cut off: only the header is left.
    expect((await readFile(join(dir, journalFileName(1)))).length).toBe(JOURNAL_HEADER_BYTES);
  });

  it('finishes a generation before starting the next', async () => {
    dir = await mkdtemp(join(tmpdir(), 'belfry-journal-'));
    const w = await JournalWriter.create({ dir, log: memoryLogger() }, 1);
    w.append(encodeRecord([['INSERT INTO t VALUES (1)', null]]));
    const rotated = w.rotate(2);
    w.append(encodeRecord([['INSERT INTO t VALUES (2)', null]]));
    await rotated;
    await w.sync();
    await w.close();
    const one = await readFile(join(dir, journalFileName(1)));
    const two = await readFile(join(dir, journalFileName(2)));
    expect(checkJournalHeader(two, 2)).toEqual({ ok: true });
    expect(scanJournal(one).records.map((r) => decodePayload(r.payload)[0]![0])).toEqual([
      'INSERT INTO t VALUES (1)',
    ]);
    expect(scanJournal(two).records.map((r) => decodePayload(r.payload)[0]![0])).toEqual([
      'INSERT INTO t VALUES (2)',
    ]);
  });
});

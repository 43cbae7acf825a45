/**
 * Durability under SIGKILL: the real server in a child process, several concurrent writers (devices and
 * messages), killed at random moments. Every write the server acknowledged (200) must survive every
 * crash, every acknowledged message must be found by search after each recovery (messages are indexed in
 * batches; a search first indexes what is waiting), and the final database must pass PRAGMA
 * integrity_check and FTS4's integrity-check, its index holding exactly the messages up to its watermark
 * and, after the catch-up, exactly all of them. A crash in the middle of an index batch's journal write
 * must lose that batch whole. Further tests tear the journal of a stopped server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/db/database';
import { decodePayload, scanJournal } from '../../server/db/journal';
import { migrations } from '../../server/db/migrations.generated';
import { openStore } from '../../server/db/store';
import { indexAllPending, MESSAGE_SEARCH_INDEX } from '../../server/features/messages/search-index';
import { ManualClock } from '../../server/lib/clock';
import { memoryLogger } from '../../server/lib/log';

const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = 'admin@example.com';
const PASSWORD = 'correct-horse-battery';
const BASIC = `Basic ${Buffer.from(`${ADMIN}:${PASSWORD}`).toString('base64')}`;
const ROUNDS = 5;
const WRITERS = 4;
const MESSAGE_WRITERS = 4;
/** A word in every message the writers send, to search for after each recovery. */
const PROBE = 'crashprobe';
/** Rounds run with a tiny journal threshold so snapshots happen (and get killed) mid-run. */
const SNAPSHOT_ROUNDS = new Set([1, 3]);

interface Running {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'server/cli.ts', '--port', '0', '--data-dir', dataDir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        BELFRY_ADMIN_EMAIL: ADMIN,
        BELFRY_ADMIN_PASSWORD: PASSWORD,
        BELFRY_LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start in time:\n${out}\n${err}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^Belfry listening on (http:\/\/\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`server exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return { child, url, stderr: () => err, exited };
}

async function kill(server: Running): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

interface Device {
  id: number;
  name: string;
}

async function listDevices(url: string): Promise<Device[]> {
  const res = await fetch(`${url}/client`, { headers: { authorization: BASIC } });
  expect(res.status).toBe(200);
  return (await res.json()) as Device[];
}

async function createDevice(url: string, name: string, auth = BASIC): Promise<Device & { token: string }> {
  const res = await fetch(`${url}/client`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Device & { token: string };
}

/**
 * Creates devices (`POST /client`) or sends messages (`POST /message`) until stopped; records only what
 * the server acknowledged with a 200. The device writers authenticate with a device token: Basic costs a
 * bcrypt check per request, which would leave only a handful of writes per round.
 */
async function writer(
  url: string,
  auth: string,
  path: '/client' | '/message',
  text: (n: number) => string,
  acked: Map<number, string>,
  stop: { now: boolean },
) {
  const field = path === '/client' ? 'name' : 'message';
  for (let n = 0; !stop.now; n++) {
    const value = text(n);
    try {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ [field]: value }),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        continue;
      }
      const body = (await res.json()) as { id: number } & Record<string, unknown>;
      expect(body[field]).toBe(value);
      acked.set(body.id, value);
    } catch {
      // Killed mid-request: not acknowledged, so it may or may not have survived.
      return;
    }
  }
}

/** Every page of `path` (GET /message or a search), newest first, as {id, name: text}. */
async function allMessages(url: string, auth: string, path: string): Promise<Device[]> {
  const out: Device[] = [];
  let since = 0;
  for (let page = 0; page < 1_000; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await fetch(`${url}${path}${sep}limit=200${since ? `&since=${since}` : ''}`, {
      headers: { authorization: auth },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      paging: { since?: number; next?: string };
      messages: { id: number; message: string }[];
    };
    out.push(...body.messages.map((m) => ({ id: m.id, name: m.message })));
    if (!body.paging.next) return out;
    since = body.paging.since!;
  }
  throw new Error(`${path}: more than 1,000 pages`);
}

function expectAllPresent(acked: Map<number, string>, found: readonly Device[]): void {
  const byId = new Map(found.map((d) => [d.id, d.name]));
  const missing = [...acked].filter(([id, name]) => byId.get(id) !== name);
  expect(missing).toEqual([]);
}

/**
 * The search index (its docsize rows: one per indexed message) holds exactly the messages up to its
 * watermark; after the catch-up the server runs (indexAllPending) exactly all messages, and FTS4's
 * integrity-check agrees.
 */
function expectIndexExact(db: Db, catchUp = true): void {
  const ids = (sql: string, params: number[] = []) => db.all<{ id: number }>(sql, params).map((r) => r.id);
  const w = db.first<{ w: number }>('SELECT indexed_up_to AS w FROM search_index_state')!.w;
  expect(ids('SELECT docid AS id FROM messages_fts_docsize ORDER BY docid')).toEqual(
    ids('SELECT id FROM messages WHERE id <= ? ORDER BY id', [w]),
  );
  if (!catchUp) return;
  indexAllPending(db);
  expect(ids('SELECT docid AS id FROM messages_fts_docsize ORDER BY docid')).toEqual(
    ids('SELECT id FROM messages ORDER BY id'),
  );
  db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belfry-crash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('crash safety', () => {
  // ~12 s on an idle 2-core machine; the timeout leaves room for a loaded one.
  it('keeps every acknowledged write across repeated SIGKILLs', { timeout: 120_000 }, async () => {
    const data = join(dir, 'kill');
    await mkdir(data, { recursive: true });
    // The writers create devices and send messages: lift the plan's limits (plans.json in the data dir).
    const lots = { devices: 1_000_000, eventsPerDay: 1_000_000 };
    await writeFile(join(data, 'plans.json'), JSON.stringify({ free: lots, pro: lots, business: lots }));

    const acked = new Map<number, string>();
    const ackedMessages = new Map<number, string>();
    let snapshotsSeen = 0;
    let writerAuth = '';
    let channelAuth = '';
    const rounds: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const env: Record<string, string> = SNAPSHOT_ROUNDS.has(round)
        ? { BELFRY_SNAPSHOT_JOURNAL_BYTES: '8000' }
        : {};
      const server = await startServer(data, env);
      // What the previous crash left must hold every acknowledged write.
      expectAllPresent(acked, await listDevices(server.url));
      if (round === 0) {
        const first = await createDevice(server.url, 'writers');
        acked.set(first.id, first.name);
        writerAuth = `Bearer ${first.token}`;
        const res = await fetch(`${server.url}/application`, {
          method: 'POST',
          headers: { authorization: writerAuth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'crash' }),
        });
        expect(res.status).toBe(200);
        channelAuth = `Bearer ${((await res.json()) as { token: string }).token}`;
      } else {
        expectAllPresent(ackedMessages, await allMessages(server.url, writerAuth, '/message'));
        expectAllPresent(
          ackedMessages,
          await allMessages(server.url, writerAuth, `/message/search?q=${PROBE}`),
        );
      }
      const stop = { now: false };
      const before = acked.size;
      const messagesBefore = ackedMessages.size;
      const writers = [
        ...Array.from({ length: WRITERS }, (_, w) =>
          writer(server.url, writerAuth, '/client', (n) => `dev-${round}-${w}-${n}`, acked, stop),
        ),
        ...Array.from({ length: MESSAGE_WRITERS }, (_, w) =>
          writer(
            server.url,
            channelAuth,
            '/message',
            (n) => `m-${round}-${w}-${n} ${PROBE}`,
            ackedMessages,
            stop,
          ),
        ),
      ];
      const delay = SNAPSHOT_ROUNDS.has(round) ? 450 + Math.random() * 150 : 150 + Math.random() * 450;
      const started = performance.now();
      await new Promise((r) => setTimeout(r, delay));
      // On a loaded machine the first acknowledgement (or snapshot) can come late: a round must have
      // some acknowledged writes, and a snapshot round at least one snapshot before the kill.
      const snapshotted = () => !SNAPSHOT_ROUNDS.has(round) || /snapshot written/.test(server.stderr());
      const idle = () => acked.size === before || ackedMessages.size === messagesBefore;
      while ((idle() || !snapshotted()) && performance.now() - started < 20_000) {
        await new Promise((r) => setTimeout(r, 5));
      }
      await kill(server);
      stop.now = true;
      await Promise.all(writers);
      expect(acked.size).toBeGreaterThan(before);
      expect(ackedMessages.size).toBeGreaterThan(messagesBefore);
      snapshotsSeen += (server.stderr().match(/snapshot written/g) ?? []).length;
      rounds.push(
        `round ${round}: ${acked.size - before} devices and ${ackedMessages.size - messagesBefore} messages acked in ${Math.round(performance.now() - started)} ms`,
      );
    }
    console.info(`crash test: ${rounds.join('; ')}; ${snapshotsSeen} snapshots written mid-run`);
    expect(snapshotsSeen).toBeGreaterThan(0);
    expect(await readdir(data)).toContain('belfry.db');

    // After the last kill: load belfry.db + replay in this process (the search index filled at the end,
    // as the server does), check integrity and content.
    const log = memoryLogger();
    const store = await openStore({
      dataDir: data,
      log,
      clock: new ManualClock(),
      migrations,
      triggerKeptIndexes: [MESSAGE_SEARCH_INDEX],
    });
    try {
      // First the catch-up: PRAGMA integrity_check includes FTS4's check, which compares the index with
      // the messages and so reports messages still waiting for their batch as a malformed index.
      expectIndexExact(store.db);
      expect(store.db.first('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
      expect(store.db.all('PRAGMA foreign_key_check')).toEqual([]);
      expectAllPresent(acked, store.db.all<Device>('SELECT id, name FROM devices'));
      expectAllPresent(
        ackedMessages,
        store.db.all<Device>(
          'SELECT m.id, m.message AS name FROM messages_fts f JOIN messages m ON m.id = f.docid WHERE messages_fts MATCH ?',
          [PROBE],
        ),
      );
    } finally {
      await store.close();
    }

    // And the server starts on what the store left.
    const server = await startServer(data);
    try {
      expectAllPresent(acked, await listDevices(server.url));
      expectAllPresent(
        ackedMessages,
        await allMessages(server.url, writerAuth, `/message/search?q=${PROBE}`),
      );
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });

  it('catches the search index up exactly after a crash in the middle of an index batch', {
    timeout: 60_000,
  }, async () => {
    const data = join(dir, 'batch');
    await mkdir(data, { recursive: true });
    const lots = { devices: 1_000_000, eventsPerDay: 1_000_000 };
    await writeFile(join(data, 'plans.json'), JSON.stringify({ free: lots, pro: lots, business: lots }));
    let server = await startServer(data);
    const dev = `Bearer ${(await createDevice(server.url, 'batch')).token}`;
    const res = await fetch(`${server.url}/application`, {
      method: 'POST',
      headers: { authorization: dev, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'batch' }),
    });
    const channel = `Bearer ${((await res.json()) as { token: string }).token}`;
    const acked = new Map<number, string>();
    const stop = { now: false };
    const writers = Array.from({ length: MESSAGE_WRITERS }, (_, w) =>
      writer(server.url, channel, '/message', (n) => `b-${w}-${n} ${PROBE}`, acked, stop),
    );
    // Index batches run every SEARCH_INDEX_LAG_MS while the writers send: wait for a few of them.
    const batches = async () => {
      const journals = (await readdir(data)).filter((f) => f.startsWith('journal-')).sort();
      const file = join(data, journals[journals.length - 1]!);
      const bytes = await readFile(file);
      const found = scanJournal(bytes).records.filter((r) =>
        decodePayload(r.payload).some(([sql]) => sql.includes('search_index_state')),
      );
      return { file, found };
    };
    const started = performance.now();
    while ((await batches()).found.length < 3 && performance.now() - started < 20_000)
      await new Promise((r) => setTimeout(r, 50));
    await kill(server);
    stop.now = true;
    await Promise.all(writers);
    // The crash hits the last batch's journal write halfway: it and everything after it is gone.
    const { file, found } = await batches();
    expect(found.length).toBeGreaterThanOrEqual(3);
    const last = found[found.length - 1]!;
    await truncate(file, last.offset + Math.floor(last.size / 2));

    const store = await openStore({
      dataDir: data,
      log: memoryLogger(),
      clock: new ManualClock(),
      migrations,
    });
    let kept: number[];
    try {
      // The torn batch is lost whole: its watermark too, so its messages wait above it.
      const w = store.db.first<{ w: number }>('SELECT indexed_up_to AS w FROM search_index_state')!.w;
      const top = store.db.first<{ top: number }>('SELECT max(id) AS top FROM messages')!.top;
      expect(w).toBeLessThan(top);
      expectIndexExact(store.db, false);
      kept = store.db.all<{ id: number }>('SELECT id FROM messages ORDER BY id').map((r) => r.id);
    } finally {
      await store.close();
    }
    // The server catches up on start and finds every message there is, exactly as GET /message lists them.
    server = await startServer(data);
    try {
      const listed = await allMessages(server.url, dev, '/message');
      expect(listed.map((m) => m.id).sort((a, b) => a - b)).toEqual(kept);
      expect(await allMessages(server.url, dev, `/message/search?q=${PROBE}`)).toEqual(listed);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    const after = await openStore({
      dataDir: data,
      log: memoryLogger(),
      clock: new ManualClock(),
      migrations,
    });
    try {
      expectIndexExact(after.db);
    } finally {
      await after.close();
    }
  });

  it('recovers from a journal torn mid-record, with a warning', { timeout: 60_000 }, async () => {
    const data = join(dir, 'torn');
    const acked = new Map<number, string>();
    let server = await startServer(data);
    for (let n = 0; n < 5; n++) {
      const body = await createDevice(server.url, `torn-${n}`);
      acked.set(body.id, body.name);
    }
    await kill(server);
    const journal = (await readdir(data)).filter((f) => f.startsWith('journal-')).sort();
    const last = join(data, journal[journal.length - 1]!);
    const size = (await stat(last)).size;
    await truncate(last, size - 10); // cuts the last record in the middle
    // The last record is the fifth device's insert (or a later write): only that one may be lost.
    acked.delete(Math.max(...acked.keys()));

    server = await startServer(data);
    try {
      expect(server.stderr()).toMatch(
        /WARN discarded a torn journal tail: .*journal-\d+\.log at offset \d+, \d+ bytes dropped/,
      );
      expectAllPresent(acked, await listDevices(server.url));
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });
  it('refuses to start over a journal damaged before acknowledged records, and keeps the file', {
    timeout: 60_000,
  }, async () => {
    const data = join(dir, 'flipped');
    const server = await startServer(data);
    for (let n = 0; n < 5; n++) await createDevice(server.url, `flipped-device-${n}`);
    await kill(server);
    const journal = (await readdir(data)).filter((f) => f.startsWith('journal-')).sort();
    const last = join(data, journal[journal.length - 1]!);
    const bytes = await readFile(last);
    const at = bytes.indexOf('flipped-device-1');
    expect(at).toBeGreaterThan(0);
    bytes[at + 3]! ^= 0x01;
    await writeFile(last, bytes);
    await expect(startServer(data)).rejects.toThrow(
      /belfry: \S+journal-\d+\.log is damaged at offset \d+ \(checksum mismatch\), and intact records follow at offset \d+/,
    );
    expect(await readFile(last)).toEqual(bytes);
  });
});

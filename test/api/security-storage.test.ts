/**
 * Issue 21, storage: the data dir is its owner's only (3), reset links stay out of the log (3), and the
 * data-dir lock is an OS lock that a stale belfry.lock cannot block (14).
 */
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirLockedError } from '../../server/db/lock';
import { deviceToken, makeChannel } from '../helpers/factories';
import { spawnServer } from '../helpers/spawn-server';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/test-server';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let parent: string;
let dataDir: string;
const servers: TestServer[] = [];

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), 'belfry-storage-'));
  dataDir = join(parent, 'data');
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  rmSync(parent, { recursive: true, force: true });
});

async function start(): Promise<TestServer> {
  const t = await startTestServer({ dataDir });
  servers.push(t);
  return t;
}

/** Every path under `dir` (itself included) whose mode is not 0700 (dirs) or 0600 (files). */
function looseModes(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    const st = lstatSync(path);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) out.push(`${path} ${mode.toString(8)}`);
      for (const name of readdirSync(path)) walk(join(path, name));
    } else if (mode !== 0o600) out.push(`${path} ${mode.toString(8)}`);
  };
  walk(dir);
  return out;
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

/** Writes that create every kind of file: an avatar, mail, journal records and a snapshot. */
async function fillDataDir(t: TestServer): Promise<void> {
  const dev = await deviceToken(t);
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'a.png');
  expect((await t.request('POST', '/current/user/image', { token: dev.token, body: form })).status).toBe(200);
  const channel = await makeChannel(t, dev.token, { name: 'logo' });
  expect(
    (await t.request('POST', `/application/${channel.id}/image`, { token: dev.token, body: form })).status,
  ).toBe(200);
  expect((await t.request('POST', '/user/reset-password', { json: { email: ADMIN_EMAIL } })).status).toBe(
    200,
  );
  await expect.poll(() => t.log.lines.some((l) => l.includes('mail kept in the outbox'))).toBe(true);
  await t.server.store.snapshot();
  expect((await t.request('GET', '/current/user', { token: dev.token })).status).toBe(200);
}

describe.skipIf(process.platform === 'win32')('data dir modes', () => {
  it('a fresh data dir holds only 0700 directories and 0600 files, running and after stop', async () => {
    const t = await start();
    await fillDataDir(t);
    const files = allFiles(dataDir);
    for (const f of ['belfry.db', 'secret.key', 'belfry.lock', 'uploads/avatars']) expect(files).toContain(f);
    expect(files.some((f) => /^journal-\d+\.log$/.test(f))).toBe(true);
    expect(files.some((f) => /^uploads\/avatars\/u\d+-[a-f0-9]{32}\.png$/.test(f))).toBe(true);
    expect(looseModes(dataDir)).toEqual([]);
    await t.close();
    expect(looseModes(dataDir)).toEqual([]);
  });

  it('a data dir left 0755 with 0644 files is made 0700/0600 at start, uploads included', async () => {
    const first = await start();
    await fillDataDir(first);
    await first.close();
    mkdirSync(join(dataDir, 'uploads', 'other'), { recursive: true });
    writeFileSync(join(dataDir, 'uploads', 'other', 'old.png'), PNG);
    const loosen = (path: string) => {
      const st = lstatSync(path);
      chmodSync(path, st.isDirectory() ? 0o755 : 0o644);
      if (st.isDirectory()) for (const name of readdirSync(path)) loosen(join(path, name));
    };
    loosen(dataDir);
    expect(looseModes(dataDir).length).toBeGreaterThan(5);
    await start();
    expect(looseModes(dataDir)).toEqual([]);
  });
});

describe('mail links', () => {
  it('POST /user/reset-password keeps the link in the outbox and out of the log', async () => {
    const t = await start();
    expect((await t.request('POST', '/user/reset-password', { json: { email: ADMIN_EMAIL } })).status).toBe(
      200,
    );
    await expect.poll(() => t.log.lines.some((l) => l.includes('mail kept in the outbox'))).toBe(true);
    const row = t.server.ctx.db.first<{ text: string }>('SELECT text FROM mail_outbox ORDER BY id DESC');
    const token = /reset-password\?token=([^\s]+)/.exec(row?.text ?? '')?.[1];
    expect(token).toBeTruthy();
    const raw = decodeURIComponent(token!);
    expect(
      t.log.lines.filter((l) => l.includes(token!) || l.includes(raw) || l.includes('reset-password?')),
    ).toEqual([]);
  });
});

describe('data dir lock', () => {
  it('createServer refuses a data dir another server in this process holds', async () => {
    await start();
    await expect(startTestServer({ dataDir })).rejects.toThrow(DataDirLockedError);
  });

  it('a stale belfry.lock naming a live unrelated process does not block start-up', async () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, 'belfry.lock'), `${sleeper.pid}\n`);
      const t = await start();
      expect((await t.request('GET', '/health')).status).toBe(200);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a Belfry in another process holds the lock until it is killed with SIGKILL', {
    timeout: 60_000,
  }, async () => {
    const holder = await spawnServer(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      BELFRY_ADMIN_EMAIL: ADMIN_EMAIL,
      BELFRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    try {
      const err = await startTestServer({ dataDir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DataDirLockedError);
      expect((err as Error).message).toBe(
        `${dataDir} is in use by another Belfry (pid ${holder.child.pid}). Stop it first, or use another --data-dir.`,
      );
    } finally {
      holder.child.kill('SIGKILL');
      await holder.exited;
    }
    const t = await start();
    expect((await t.request('GET', '/health')).status).toBe(200);
  });
});

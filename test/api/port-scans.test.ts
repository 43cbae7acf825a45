import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serviceNames } from '../../server/features/port-scans/ports';
import { PORT_SCANS_QUEUED_PER_USER } from '../../server/lib/limits';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs } from './realtime-helpers';

/**
 * Port scans (§3.2) of 127.0.0.1 against real TCP listeners: one that greets with an SSH banner, one that
 * accepts and says nothing, and closed ports. Scans run on real sockets; the tests wait for the scan's
 * `port-scan:status_changed` event on the bus, never for time.
 */
let t: TestServer;
let dev: string;
let appid: number;
let proofSite: FakeTarget;
let proofToken = '';
let ssh: Listener;
let silent: Listener;
let closed: number;
const events: { kind: string; appid: number; data: Record<string, any> }[] = [];
const waiters: (() => void)[] = [];

interface Listener {
  port: number;
  close(): Promise<void>;
}

/** A loopback TCP listener that writes `greeting` (if any) to each connection and keeps it open. */
async function listen(greeting?: string): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    if (greeting !== undefined) s.write(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();
const FINAL = new Set(['done', 'failed', 'cancelled']);

/** Resolves with the first recorded bus event that matches (already seen, or the next one to come). */
function untilEvent(
  match: (e: (typeof events)[number]) => boolean,
  server?: TestServer,
): Promise<(typeof events)[number]> {
  return new Promise((resolve) => {
    const look = () => {
      const hit = events.find(match);
      if (hit) {
        resolve(hit);
        return true;
      }
      return false;
    };
    if (look()) return;
    const w = () => {
      if (!look()) waiters.push(w);
    };
    waiters.push(w);
    void server;
  });
}

function record(s: TestServer) {
  s.server.ctx.bus.on('source:event', (e) => {
    events.push({ kind: e.kind, appid: e.appid, data: e.data as Record<string, any> });
    for (const w of waiters.splice(0)) w();
  });
}

const finished = (id: number) =>
  untilEvent((e) => e.kind === 'port-scan:status_changed' && e.data.id === id && FINAL.has(e.data.to));

/** 127.0.0.1 verified through the real http proof (a loopback server serving the token). */
async function verifyLoopback(s: TestServer, token: string): Promise<void> {
  const rec = await s.request('POST', '/verified-host/start', {
    token,
    json: { host: '127.0.0.1', method: 'http', httpPort: proofSite.port },
  });
  proofToken = rec.body.token;
  const res = await s.request('POST', '/verified-host/check', { token, json: { id: rec.body.id } });
  if (res.status !== 200) throw new Error(`verify: ${res.status} ${res.text}`);
}

beforeAll(async () => {
  proofSite = await startTarget((_req, res) => res.end(proofToken));
  ssh = await listen('SSH-2.0-BelfryTest_1.0\r\n\x00\x01');
  silent = await listen();
  closed = await closedPort();
  t = await startTestServer();
  record(t);
  dev = (await deviceToken(t)).token;
  appid = (await makeChannel(t, dev)).id;
  await verifyLoopback(t, dev);
});
afterAll(async () => {
  await t.close();
  await proofSite.close();
  await ssh.close();
  await silent.close();
});

async function scan(body: Record<string, unknown>, token = dev) {
  return t.request('POST', '/port-scan', { token, json: { appid, host: '127.0.0.1', ...body } });
}

function messagesOf(channelId: number) {
  return t.server.ctx.db
    .all<{ title: string; message: string; priority: number; extras: string; sender_name: string }>(
      'SELECT title, message, priority, extras, sender_name FROM messages WHERE channel_id = ? ORDER BY id',
      [channelId],
    )
    .map((m) => ({ ...m, extras: JSON.parse(m.extras) }));
}

describe('POST /port-scan', () => {
  it('scans the listed ports: open ports with banner and service, the done message, progress 1', async () => {
    const ports = `${closed},${silent.port},${ssh.port}`;
    const created = t.clock.now();
    const res = await scan({ ports, concurrency: 2, timeoutMs: 500, notes: 'first' });
    expect(res.status).toBe(200);
    const id = res.body.id as number;
    const sorted = [closed, silent.port, ssh.port].sort((a, b) => a - b);
    expect(res.body).toEqual({
      id,
      appid,
      name: `127.0.0.1 ${sorted.join(',')}`,
      paused: false,
      status: 'running',
      lastCheckAt: null,
      createdAt: iso(created),
      host: '127.0.0.1',
      ports: sorted.join(','),
      concurrency: 2,
      timeoutMs: 500,
      notes: 'first',
      progress: 0,
      portCount: 3,
      scanned: 0,
      open: [],
      error: null,
      startedAt: iso(created),
      finishedAt: null,
    });
    await finished(id);
    const silentService = serviceNames().get(silent.port);
    const openPorts = [
      { port: ssh.port, service: 'ssh', banner: 'SSH-2.0-BelfryTest_1.0' },
      { port: silent.port, ...(silentService ? { service: silentService } : {}) },
    ].sort((a, b) => a.port - b.port);
    const done = await t.request('GET', `/port-scan/${id}`, { token: dev });
    expect(done.body).toEqual({
      ...res.body,
      status: 'done',
      progress: 1,
      scanned: 3,
      open: openPorts,
      lastCheckAt: iso(created),
      finishedAt: iso(created),
    });
    const [msg] = messagesOf(appid).filter((m) => m.extras['service::source']?.id === id);
    const listed = openPorts.map((o) => (o.service ? `${o.port} (${o.service})` : `${o.port}`)).join(', ');
    expect(msg).toEqual({
      title: 'Port scan of 127.0.0.1 finished',
      message: `2 open: ${listed}`,
      priority: 3,
      extras: { 'service::source': { kind: 'port-scan', id, event: 'done' } },
      sender_name: res.body.name,
    });
    // The channel's event sources list the scan.
    const sources = await t.request('GET', `/application/${appid}/event-sources`, { token: dev });
    expect(sources.body.sources).toContainEqual({
      kind: 'port-scan',
      id,
      name: res.body.name,
      appid,
      status: 'done',
      paused: false,
      lastCheckAt: iso(created),
    });
  });

  it('answers 403 for a host the caller has not verified (another user, another spelling)', async () => {
    for (const host of ['localhost', '127.0.0.2']) {
      const res = await scan({ host, ports: '1' });
      expect(res.status).toBe(403);
      expect(res.body.errorDescription).toBe(
        `host not verified: verify ${host} first (POST /verified-host/start)`,
      );
    }
    // 127.0.0.1 is verified by `dev`'s user only.
    const other = (await deviceToken(t, makeUser(t))).token;
    const otherChannel = await makeChannel(t, other);
    const res = await t.request('POST', '/port-scan', {
      token: other,
      json: { appid: otherChannel.id, host: '127.0.0.1', ports: '1' },
    });
    expect(res.body.errorDescription).toBe(
      'host not verified: verify 127.0.0.1 first (POST /verified-host/start)',
    );
  });

  it('answers 400 <field>: for bad ports, concurrency, timeoutMs, notes, name and appid', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ports: '0' }, /^ports: /],
      [{ ports: '10-5' }, /^ports: /],
      [{ ports: '65536' }, /^ports: /],
      [{ ports: 'top10' }, /^ports: /],
      [{ ports: 22 }, /^ports: /],
      [{ concurrency: 0 }, /^concurrency: /],
      [{ concurrency: 201 }, /^concurrency: /],
      [{ timeoutMs: 99 }, /^timeoutMs: /],
      [{ timeoutMs: 10_001 }, /^timeoutMs: /],
      [{ notes: 'x'.repeat(2_001) }, /^notes: /],
      [{ name: '  ' }, /^name: /],
      [{ appid: 999_999 }, /^appid: no such channel$/],
      [{ host: 'http://127.0.0.1' }, /^host: /],
    ];
    for (const [body, expected] of cases) {
      const res = await scan(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errorDescription).toMatch(expected);
    }
  });

  it('ports top100 and top1000 count 100 and 1000 ports; lists are merged', async () => {
    const u = makeUser(t);
    const token = (await deviceToken(t, u)).token;
    const ch = await makeChannel(t, token);
    await verifyLoopback(t, token);
    const body = (ports: string) => ({ appid: ch.id, host: '127.0.0.1', ports, timeoutMs: 100 });
    const a = await t.request('POST', '/port-scan', { token, json: body('TOP100') });
    expect(a.body).toMatchObject({ ports: 'top100', portCount: 100, name: '127.0.0.1 top100' });
    const b = await t.request('POST', '/port-scan', { token, json: body('top1000') });
    expect(b.body).toMatchObject({ ports: 'top1000', portCount: 1000 });
    const c = await t.request('POST', '/port-scan', { token, json: body('90-100, 22, 80-95,23') });
    expect(c.body).toMatchObject({ ports: '22-23,80-100', portCount: 23 });
    for (const r of [a, b, c]) await finished(r.body.id);
  });
});

describe('the queue, cancel, restart, PATCH, DELETE', () => {
  it('one scan runs per user; the next waits queued (at most 5), cancel keeps open ports, the next starts', async () => {
    const u = makeUser(t);
    const token = (await deviceToken(t, u)).token;
    const ch = await makeChannel(t, token);
    await verifyLoopback(t, token);
    const create = (ports: string, concurrency = 1) =>
      t.request('POST', '/port-scan', {
        token,
        json: { appid: ch.id, host: '127.0.0.1', ports, concurrency, timeoutMs: 100 },
      });
    // Every port of the machine one at a time: long enough to act on it while it runs.
    const first = await create('1-65535');
    expect(first.body.status).toBe('running');
    const queued = [];
    for (let i = 0; i < PORT_SCANS_QUEUED_PER_USER; i++) queued.push((await create(`${ssh.port}`)).body);
    expect(queued.map((q) => q.status)).toEqual(Array(PORT_SCANS_QUEUED_PER_USER).fill('queued'));
    const over = await create('22');
    expect(over.status).toBe(403);
    expect(over.body.errorDescription).toBe('limit reached: at most 5 queued port scans per user');
    expect((await t.request('POST', `/port-scan/${first.body.id}/restart`, { token })).body).toEqual({
      error: 'Conflict',
      errorCode: 409,
      errorDescription: 'scan is already running',
    });

    // Progress is visible while it runs (here: once it found an open port, ssh's at the latest).
    await untilEvent(
      (e) => e.kind === 'port-scan:progress' && e.data.id === first.body.id && e.data.open > 0,
    );
    const running = (await t.request('GET', `/port-scan/${first.body.id}`, { token })).body;
    expect(running.status).toBe('running');
    expect(running.scanned).toBeGreaterThan(0);
    expect(running.progress).toBeGreaterThanOrEqual(0);
    expect(running.progress).toBeLessThan(1);

    const cancelled = await t.request('POST', `/port-scan/${first.body.id}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(cancelled.body.finishedAt).toBe(iso(t.clock.now()));
    expect(cancelled.body.open.length).toBeGreaterThan(0);
    expect(cancelled.body.scanned).toBeLessThan(65_535);
    expect((await t.request('GET', `/port-scan/${first.body.id}`, { token })).body).toEqual(cancelled.body);
    // No message for a cancelled scan; cancelling again is 409.
    expect(messagesOf(ch.id).filter((m) => m.extras['service::source']?.id === first.body.id)).toEqual([]);
    expect((await t.request('POST', `/port-scan/${first.body.id}/cancel`, { token })).body).toEqual({
      error: 'Conflict',
      errorCode: 409,
      errorDescription: 'scan is not running',
    });

    // The queue moves on, oldest first; a queued scan can be cancelled and deleted.
    await finished(queued[0].id);
    const q1 = await t.request('POST', `/port-scan/${queued[1].id}/cancel`, { token });
    expect(q1.body).toMatchObject({ status: 'cancelled', scanned: 0, open: [] });
    expect((await t.request('DELETE', `/port-scan/${queued[2].id}`, { token })).body).toEqual({});
    expect((await t.request('GET', `/port-scan/${queued[2].id}`, { token })).status).toBe(404);
    for (const q of queued.slice(3)) await finished(q.id);
    const list = (await t.request('GET', '/port-scan', { token })).body;
    expect(list.map((s: { id: number; status: string }) => [s.id, s.status])).toEqual([
      [queued[4].id, 'done'],
      [queued[3].id, 'done'],
      [queued[1].id, 'cancelled'],
      [queued[0].id, 'done'],
      [first.body.id, 'cancelled'],
    ]);

    // Restart: back to the queue with nothing found, then done again.
    const restarted = await t.request('POST', `/port-scan/${first.body.id}/restart`, { token });
    expect(restarted.body).toMatchObject({
      status: 'running',
      open: [],
      progress: 0,
      scanned: 0,
      error: null,
    });
    const del = await t.request('DELETE', `/port-scan/${first.body.id}`, { token });
    expect(del.body).toEqual({});
    expect((await t.request('GET', '/port-scan', { token })).body).toHaveLength(4);
  }, 30_000);

  it('PATCH changes name and notes only; someone else gets 404 port scan not found', async () => {
    const res = await scan({ ports: `${closed}` });
    await finished(res.body.id);
    const patched = await t.request('PATCH', `/port-scan/${res.body.id}`, {
      token: dev,
      json: { name: ' Renamed ', notes: 'n', host: 'example.com', ports: '1-2', status: 'queued' },
    });
    expect(patched.body).toMatchObject({ name: 'Renamed', notes: 'n', host: '127.0.0.1', status: 'done' });
    const other = (await deviceToken(t, makeUser(t))).token;
    const notFound = { error: 'Not Found', errorCode: 404, errorDescription: 'port scan not found' };
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/cancel'],
      ['POST', '/restart'],
      ['POST', '/to-monitor'],
    ] as const)
      expect(
        (
          await t.request(method, `/port-scan/${res.body.id}${path}`, {
            token: other,
            ...(method === 'GET' ? {} : { json: { port: 1 } }),
          })
        ).body,
      ).toEqual(notFound);
  });

  it('a scoped API token sees and starts scans only on channels in its scope', async () => {
    const u = makeUser(t);
    const phone = await deviceToken(t, u);
    const inside = await makeChannel(t, phone.token);
    const outside = await makeChannel(t, phone.token);
    await verifyLoopback(t, phone.token);
    const scoped = await apiToken(t, phone, { access: 'write', appIds: [inside.id] });
    const body = (id: number) => ({ appid: id, host: '127.0.0.1', ports: `${closed}` });
    const out = await t.request('POST', '/port-scan', { token: phone.token, json: body(outside.id) });
    await finished(out.body.id);
    expect(
      (await t.request('POST', '/port-scan', { token: scoped.token, json: body(outside.id) })).body
        .errorDescription,
    ).toBe('appid: no such channel');
    const ins = await t.request('POST', '/port-scan', { token: scoped.token, json: body(inside.id) });
    expect(ins.status).toBe(200);
    await finished(ins.body.id);
    expect(
      (await t.request('GET', '/port-scan', { token: scoped.token })).body.map((s: any) => s.id),
    ).toEqual([ins.body.id]);
    expect((await t.request('GET', `/port-scan/${out.body.id}`, { token: scoped.token })).status).toBe(404);
  });
});

describe('shared channels', () => {
  it('a recipient with send scans on the shared channel; losing send cancels their running scan', async () => {
    const owner = makeUser(t);
    const ownerDev = (await deviceToken(t, owner)).token;
    const friend = makeUser(t);
    const friendDev = (await deviceToken(t, friend)).token;
    const c = await makeChannel(t, ownerDev);
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: ownerDev,
      json: { email: friend.email, permission: 'send' },
    });
    await t.request('POST', `/share/${share.body.id}/accept`, { token: friendDev });
    await verifyLoopback(t, friendDev);
    const res = await t.request('POST', '/port-scan', {
      token: friendDev,
      json: { appid: c.id, host: '127.0.0.1', ports: '1-65535', concurrency: 1, timeoutMs: 100 },
    });
    expect(res.body.status).toBe('running');
    // The owner sees it among the channel's event sources.
    const sources = await t.request('GET', `/application/${c.id}/event-sources`, { token: ownerDev });
    expect(sources.body.sources.map((s: { kind: string; id: number }) => [s.kind, s.id])).toContainEqual([
      'port-scan',
      res.body.id,
    ]);
    await t.request('PUT', `/share/${share.body.id}`, { token: ownerDev, json: { permission: 'view' } });
    const ended = await finished(res.body.id);
    expect(ended.data.to).toBe('cancelled');
    expect((await t.request('GET', `/port-scan/${res.body.id}`, { token: friendDev })).body.status).toBe(
      'cancelled',
    );
    expect(
      (await t.request('POST', '/port-scan', { token: friendDev, json: { appid: c.id, host: '127.0.0.1' } }))
        .body.errorDescription,
    ).toBe('appid: no such channel');
  });
});

describe('POST /port-scan/{id}/to-monitor', () => {
  it('creates a port-monitor on the scan channel for an open port; a port not open is 400', async () => {
    const res = await scan({ ports: `${ssh.port},${closed}` });
    await finished(res.body.id);
    const bad = await t.request('POST', `/port-scan/${res.body.id}/to-monitor`, {
      token: dev,
      json: { port: closed },
    });
    expect(bad.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: 'port: not open in this scan',
    });
    const m = await t.request('POST', `/port-scan/${res.body.id}/to-monitor`, {
      token: dev,
      json: { port: ssh.port, intervalSec: 120 },
    });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({
      kind: 'port-monitor',
      appid,
      name: `127.0.0.1:${ssh.port}`,
      host: '127.0.0.1',
      port: ssh.port,
      tls: false,
      intervalSec: 120,
      status: 'pending',
    });
    const got = await t.request('GET', `/port-monitor/${m.body.id}`, { token: dev });
    expect(got.body.id).toBe(m.body.id);
  });
});

describe('live progress', () => {
  it('/ws?events=1 carries port-scan:progress and port-scan:status_changed frames', async () => {
    const ws = await openWs(t, '/ws?events=1', dev);
    try {
      const res = await scan({ ports: `${ssh.port},1-3000`, concurrency: 50, timeoutMs: 200 });
      await finished(res.body.id);
      // The last frames are the end: progress 1 and the status change with the done message.
      const frames = () =>
        (ws.frames as { kind: string; data: Record<string, unknown> }[]).filter(
          (f) => f.kind?.startsWith('port-scan:') && f.data.id === res.body.id,
        );
      await expect
        .poll(() => frames().some((f) => f.kind === 'port-scan:status_changed' && f.data.to === 'done'))
        .toBe(true);
      const progress = frames().filter((f) => f.kind === 'port-scan:progress');
      expect(progress.at(-1)!.data).toEqual({
        id: res.body.id,
        appid,
        status: 'done',
        progress: 1,
        scanned: 3001,
        portCount: 3001,
        open: expect.any(Number),
      });
      const changes = frames()
        .filter((f) => f.kind === 'port-scan:status_changed')
        .map((f) => [f.data.from, f.data.to]);
      expect(changes).toEqual([
        ['queued', 'running'],
        ['running', 'done'],
      ]);
    } finally {
      ws.ws.close();
    }
  });
});

describe('resources', () => {
  it('a scan of 20,000 ports at concurrency 200 leaves the event loop and the HTTP server free', async () => {
    let last = performance.now();
    let stallMs = 0;
    const iv = setInterval(() => {
      const now = performance.now();
      stallMs = Math.max(stallMs, now - last);
      last = now;
    }, 5);
    const slowest: number[] = [];
    try {
      // The whole range is the bench's (`npm run bench -- scans`); 20,000 paced connects take ~4 s.
      const res = await scan({
        ports: `1-20000,${ssh.port},${silent.port}`,
        concurrency: 200,
        timeoutMs: 1_000,
      });
      const end = finished(res.body.id);
      let done = false;
      void end.then(() => {
        done = true;
      });
      while (!done) {
        const t0 = performance.now();
        expect((await t.request('GET', '/health')).status).toBe(200);
        slowest.push(performance.now() - t0);
      }
      const got = (await t.request('GET', `/port-scan/${res.body.id}`, { token: dev })).body;
      expect(got).toMatchObject({ status: 'done', scanned: got.portCount, progress: 1 });
      expect(got.portCount).toBeGreaterThanOrEqual(20_000);
      expect(got.open.map((o: { port: number }) => o.port)).toEqual(
        expect.arrayContaining([ssh.port, silent.port]),
      );
    } finally {
      clearInterval(iv);
    }
    expect(slowest.length).toBeGreaterThan(10);
    // Typically < 50 ms; the bound leaves room for a shared 2-core machine, not for a loop over the ports.
    expect(stallMs).toBeLessThan(1_000);
  }, 60_000);

  it('a scan whose connects keep failing with EMFILE ends failed; the server keeps answering', async () => {
    const real = net.connect;
    vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
      const o = args[0] as { port?: number };
      if (typeof o === 'object' && (o.port === 1 || o.port === 2)) {
        const s = real({ host: '127.0.0.1', port: closed });
        s.removeAllListeners('connect');
        s.destroy(Object.assign(new Error('connect EMFILE'), { code: 'EMFILE' }));
        return s;
      }
      return real(...args);
    }) as typeof net.connect);
    try {
      const res = await scan({ ports: '1-2', concurrency: 2, timeoutMs: 100 });
      await finished(res.body.id);
      expect((await t.request('GET', `/port-scan/${res.body.id}`, { token: dev })).body).toMatchObject({
        status: 'failed',
        error: 'EMFILE: out of sockets or file descriptors',
      });
      const [msg] = messagesOf(appid).filter((m) => m.extras['service::source']?.id === res.body.id);
      expect(msg).toMatchObject({
        title: 'Port scan of 127.0.0.1 failed',
        message: 'EMFILE: out of sockets or file descriptors',
        priority: 5,
        extras: { 'service::source': { kind: 'port-scan', id: res.body.id, event: 'failed' } },
      });
    } finally {
      vi.restoreAllMocks();
    }
    expect((await t.request('GET', '/health')).status).toBe(200);
  }, 20_000);
});

describe('server stop', () => {
  it('a scan running at stop is failed `interrupted by server stop` with its message; one left running by a crash too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-scan-stop-'));
    try {
      const a = await startTestServer({ dataDir });
      const token = (await deviceToken(a)).token;
      const ch = await makeChannel(a, token);
      await verifyLoopback(a, token);
      const running = await a.request('POST', '/port-scan', {
        token,
        json: { appid: ch.id, host: '127.0.0.1', ports: '1-65535', concurrency: 1, timeoutMs: 100 },
      });
      expect(running.body.status).toBe('running');
      // A row left `running` by a process that crashed (no scan of this process runs it).
      const crashed = a.server.ctx.db.transaction(
        () =>
          a.server.ctx.db.run(
            `INSERT INTO port_scans (user_id, channel_id, name, host, ports, port_count, concurrency, timeout_ms,
             status, status_since, queued_at, started_at, created_at)
             SELECT user_id, id, 'crashed', '127.0.0.1', '1', 1, 1, 100, 'running', 0, 0, 0, 0 FROM channels WHERE id = ?`,
            [ch.id],
          ).lastInsertRowid,
      );
      await a.close();

      const b = await startTestServer({ dataDir });
      try {
        await b.server.scheduler.tick();
        for (const id of [running.body.id, crashed]) {
          const got = await b.request('GET', `/port-scan/${id}`, { token });
          expect(got.body).toMatchObject({ status: 'failed', error: 'interrupted by server stop' });
        }
        const msgs = b.server.ctx.db
          .all<{ title: string; message: string; priority: number }>(
            'SELECT title, message, priority FROM messages WHERE channel_id = ? ORDER BY id',
            [ch.id],
          )
          .filter((m) => m.title.startsWith('Port scan'));
        expect(msgs).toEqual([
          { title: 'Port scan of 127.0.0.1 failed', message: 'interrupted by server stop', priority: 5 },
          { title: 'Port scan of 127.0.0.1 failed', message: 'interrupted by server stop', priority: 5 },
        ]);
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

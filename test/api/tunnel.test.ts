import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cloudflaredProvider, findInPath } from '../../server/features/tunnel/providers/cloudflared';
import { entry } from '../../server/features/tunnel/providers/index';
import { ngrokProvider } from '../../server/features/tunnel/providers/ngrok';
import {
  RETRY_FIRST_MS,
  type TunnelService,
  type TunnelStatus,
  tunnelService,
} from '../../server/features/tunnel/service';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { closedPort } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The tunnel family (docs/api.md "Public listener and tunnel"). cloudflared is a fake `cloudflared` shell
 * script found through the provider's PATH (the `path` option of cloudflaredProvider), so the real
 * lookup, spawn, output parsing and exit handling run; ngrok dials a closed loopback port (its
 * `serverAddr` option), failing as it does without internet. The reachability check asks the URL the
 * fake reports through TunnelService.deps.resolveCheckUrl, which maps it to this server's public listener.
 */

const QUICK_URL = 'https://belfry-test.trycloudflare.com';
const CF_TOKEN = 'cf-secret-token-0123456789';
const NGROK_TOKEN = 'ngrok-secret-authtoken-42';

let t: TestServer;
let s: TunnelService;
let dev: string;
let bin: string;
let dirs: Record<'ok' | 'fail' | 'silent' | 'none', string>;

/** A fake cloudflared: records its pid, arguments and TUNNEL_TOKEN, prints `out` on stderr, then `then`. */
function fakeCloudflared(dir: string, out: string, then: string): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'cloudflared');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'dir=$(dirname "$0")',
      'echo "$$" > "$dir/pid"',
      'echo "$@" > "$dir/args"',
      'echo "TUNNEL_TOKEN=$TUNNEL_TOKEN" > "$dir/env"',
      'echo "2026-01-15T12:00:00Z INF Thank you for trying Cloudflare Tunnel." >&2',
      out,
      then,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
}

/** cloudflared looked up in `dir` first, then the system's PATH (the fakes run sh, sleep, dirname). */
function useCloudflared(
  dir: string,
  startTimeoutMs = 10_000,
  path = `${dir}${delimiter}${process.env.PATH}`,
): void {
  s.deps.providers.set('cloudflared', entry(cloudflaredProvider({ path, startTimeoutMs })));
}

/** Resolves at the next tunnel:changed event with `status` (call it before the action that leads there). */
function statusBecomes(status: TunnelStatus): Promise<void> {
  return new Promise((resolve) => {
    const off = t.server.ctx.bus.on('tunnel:changed', (e) => {
      if (e.status !== status) return;
      off();
      resolve();
    });
  });
}

function pidOf(dir: string): number {
  return Number(readFileSync(join(dir, 'pid'), 'utf8').trim());
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Until the process is gone (a killed child is reaped by the server's 'close' handling). */
async function gone(pid: number): Promise<boolean> {
  await expect.poll(() => alive(pid)).toBe(false);
  return true;
}

async function put(body: unknown, token = dev) {
  return t.request('PUT', '/tunnel', { token, json: body });
}

const publicBase = () => {
  const a = t.server.publicListener.address()!;
  return `http://${a.host}:${a.port}`;
};

beforeAll(async () => {
  t = await startTestServer();
  s = tunnelService(t.server.ctx);
  dev = (await deviceToken(t)).token;
  bin = mkdtempSync(join(tmpdir(), 'belfry-fake-cloudflared-'));
  dirs = {
    ok: join(bin, 'ok'),
    fail: join(bin, 'fail'),
    silent: join(bin, 'silent'),
    none: join(bin, 'none'),
  };
  // Quick tunnel: the URL in a box like cloudflared's; named (TUNNEL_TOKEN set): a registered connection.
  fakeCloudflared(
    dirs.ok,
    [
      'if [ -n "$TUNNEL_TOKEN" ]; then',
      '  echo "2026-01-15T12:00:01Z INF Registered tunnel connection connIndex=0 location=ams01" >&2',
      'else',
      `  echo "2026-01-15T12:00:01Z INF |  ${QUICK_URL}                    |" >&2`,
      'fi',
    ].join('\n'),
    'exec sleep 3600',
  );
  // Names the API host it failed to reach (never taken for the tunnel's URL), then exits 1.
  fakeCloudflared(
    dirs.fail,
    `echo "2026-01-15T12:00:01Z ERR failed to request quick Tunnel: Post \\"https://api.trycloudflare.com/tunnel\\": dial tcp: lookup api.trycloudflare.com: no such host token=$TUNNEL_TOKEN" >&2`,
    'exit 1',
  );
  fakeCloudflared(dirs.silent, '', 'exec sleep 3600');
  mkdirSync(dirs.none);
  s.deps.resolveCheckUrl = (u) => (u === QUICK_URL || u === 'https://bell.example.com' ? publicBase() : u);
  s.deps.providers.set('ngrok', entry(ngrokProvider({ serverAddr: `127.0.0.1:${await closedPort()}` })));
});
afterEach(async () => {
  await put({ provider: 'none' });
  await s.idle();
});
afterAll(async () => {
  await t.close();
  rmSync(bin, { recursive: true, force: true });
});

describe('the record and who may see it', () => {
  it('defaults to provider none, off, no URL, no listener', async () => {
    const res = await t.request('GET', '/tunnel', { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      provider: 'none',
      status: 'off',
      publicUrl: null,
      target: expect.toBeOneOf([null, expect.stringMatching(/^127\.0\.0\.1:\d+$/)]),
      lastCheck: null,
      error: null,
    });
  });

  it('administrators only: device token or unscoped API token; scoped 403, non-admin 403, channel key 403', async () => {
    const adminDevice = { token: dev };
    const read = await apiToken(t, adminDevice, { access: 'read' });
    const write = await apiToken(t, adminDevice, { access: 'write' });
    const ch = await makeChannel(t, dev);
    const scoped = await apiToken(t, adminDevice, { access: 'write', appIds: [ch.id] });
    const user = makeUser(t);
    const userDevice = await deviceToken(t, user);
    const userToken = await apiToken(t, userDevice, { access: 'write' });
    const key = insertChannelKeyRow(t, ch.id, { canRead: true });
    const body = (method: string) => (method === 'GET' ? {} : { json: {} });

    expect((await t.request('GET', '/tunnel', { token: read.token })).status).toBe(200);
    expect((await t.request('GET', '/tunnel', { token: write.token })).status).toBe(200);
    expect((await put({ provider: 'none' }, write.token)).status).toBe(200);
    const readPut = await put({ provider: 'none' }, read.token);
    expect(readPut.status).toBe(403);
    expect(readPut.body.errorDescription).toBe('token lacks the write permission');
    for (const [path, method] of [
      ['/tunnel', 'GET'],
      ['/tunnel', 'PUT'],
      ['/tunnel/check', 'POST'],
    ] as const) {
      for (const token of [userDevice.token, userToken.token]) {
        const res = await t.request(method, path, { token, ...body(method) });
        expect([path, res.status, res.body.errorDescription]).toEqual([path, 403, 'administrator only']);
      }
      const sc = await t.request(method, path, { token: scoped.token, ...body(method) });
      expect([path, sc.status, sc.body.errorDescription]).toEqual([
        path,
        403,
        'an API token with a restricted scope cannot do this',
      ]);
      expect((await t.request(method, path, { token: key, ...body(method) })).status).toBe(403);
      expect((await t.request(method, path, body(method))).status).toBe(401);
    }
  });

  it('400 for bad bodies, naming the field; nothing is saved', async () => {
    s.deps.providers.delete('ssh'); // a build without the ssh provider
    const cases: [unknown, string][] = [
      [[], 'body: must be an object'],
      [{ provider: 'bogus' }, 'provider: must be one of none, ssh, ngrok, cloudflared'],
      [{ provider: 7 }, 'provider: must be one of none, ssh, ngrok, cloudflared'],
      [{ provider: 'ssh' }, 'provider: ssh is not available in this build'],
      [{ ssh: { host: 'x' } }, 'ssh: ssh is not available in this build'],
      [{ provider: 'ngrok' }, 'ngrok.authtoken: required'],
      [{ provider: 'ngrok', ngrok: { authtoken: '  ' } }, 'ngrok.authtoken: required'],
      [{ provider: 'ngrok', ngrok: { authtoken: 5 } }, 'ngrok.authtoken: must be a string'],
      [{ ngrok: 'tok' }, 'ngrok: must be an object'],
      [{ ngrok: [] }, 'ngrok: must be an object'],
      [
        { ngrok: { authtoken: 'a', domain: 'https://x.example' } },
        'ngrok.domain: must be a host name, e.g. belfry.example.com',
      ],
      [
        { provider: 'cloudflared', cloudflared: { token: 'abc' } },
        'cloudflared.hostname: required with a token',
      ],
      [
        { cloudflared: { hostname: 'not a host' } },
        'cloudflared.hostname: must be a host name, e.g. belfry.example.com',
      ],
      [{ ngrok: { authtoken: '********' } }, 'ngrok.authtoken: required'],
    ];
    for (const [body, text] of cases) {
      const res = await put(body);
      expect([JSON.stringify(body), res.status, res.body.errorDescription]).toEqual([
        JSON.stringify(body),
        400,
        text,
      ]);
    }
    expect(
      t.server.ctx.db.first('SELECT count(*) AS n FROM tunnel_settings WHERE provider != ?', ['none']),
    ).toEqual({ n: 0 });
  });

  it('secrets are masked on output, sealed at rest, and "********" keeps the stored value', async () => {
    const saved = await put({ ngrok: { authtoken: NGROK_TOKEN, domain: 'Bell.ngrok.app' } });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      provider: 'none',
      status: 'off',
      ngrok: { authtoken: '********', domain: 'bell.ngrok.app' },
    });
    expect(saved.text).not.toContain(NGROK_TOKEN);
    const row = t.server.ctx.db.first<{ settings: string }>('SELECT settings FROM tunnel_settings')!;
    expect(row.settings).not.toContain(NGROK_TOKEN);
    expect(row.settings).not.toContain('bell.ngrok.app');

    const kept = await put({ ngrok: { authtoken: '********', domain: 'other.ngrok.app' } });
    expect(kept.body.ngrok).toEqual({ authtoken: '********', domain: 'other.ngrok.app' });
    expect(s.stored().settings.ngrok).toEqual({ authtoken: NGROK_TOKEN, domain: 'other.ngrok.app' });
    // Absent: unchanged. null: cleared.
    await put({ provider: 'none' });
    expect(s.stored().settings.ngrok).toEqual({ authtoken: NGROK_TOKEN, domain: 'other.ngrok.app' });
    const cleared = await put({ ngrok: null });
    expect(cleared.body).not.toHaveProperty('ngrok');
  });
});

describe('cloudflared', () => {
  it('quick tunnel: starting → up with the trycloudflare URL; pingUrl follows; the check finds this server', async () => {
    useCloudflared(dirs.ok);
    const hb = await t.request('POST', '/heartbeat', {
      token: dev,
      json: { appid: (await makeChannel(t, dev)).id, name: 'job' },
    });
    expect(hb.body.pingUrl).toBe(`${t.url}/heartbeat/ping/${hb.body.token}`);

    const up = statusBecomes('up');
    const res = await put({ provider: 'cloudflared' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'cloudflared',
      cloudflared: {},
      status: 'starting',
      publicUrl: null,
      target: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      error: null,
    });
    const target = res.body.target as string;
    await up;
    expect(readFileSync(join(dirs.ok, 'args'), 'utf8').trim()).toBe(
      `tunnel --no-autoupdate --url http://${target}`,
    );
    expect(readFileSync(join(dirs.ok, 'env'), 'utf8').trim()).toBe('TUNNEL_TOKEN=');

    // The effective public URL is the tunnel's now.
    const hbUp = await t.request('GET', `/heartbeat/${hb.body.id}`, { token: dev });
    expect(hbUp.body.pingUrl).toMatch(new RegExp(`^${QUICK_URL}/heartbeat/ping/`));

    // Checked at once on up (a due item): ok, this server's instance answered through the public listener.
    await t.server.scheduler.tick();
    const after = await t.request('GET', '/tunnel', { token: dev });
    expect(after.body).toMatchObject({
      status: 'up',
      publicUrl: QUICK_URL,
      target,
      lastCheck: { at: new Date(t.clock.now()).toISOString(), ok: true, status: 200, latencyMs: 0 },
      error: null,
    });
    expect(after.body.lastCheck).not.toHaveProperty('error');

    // POST /tunnel/check answers the record; every 5 minutes by itself too.
    t.clock.advance(60_000);
    const checked = await t.request('POST', '/tunnel/check', { token: dev });
    expect(checked.status).toBe(200);
    expect(checked.body.lastCheck).toMatchObject({ at: new Date(t.clock.now()).toISOString(), ok: true });
    t.clock.advance(5 * 60_000);
    await t.server.scheduler.tick();
    expect(s.lastCheck?.at).toBe(new Date(t.clock.now()).toISOString());

    // Back to none: the process is stopped, the URL falls back.
    const pid = pidOf(dirs.ok);
    const off = await put({ provider: 'none' });
    expect(off.body).toMatchObject({ provider: 'none', status: 'off', publicUrl: null, lastCheck: null });
    expect(await gone(pid)).toBe(true);
    const hbOff = await t.request('GET', `/heartbeat/${hb.body.id}`, { token: dev });
    expect(hbOff.body.pingUrl).toMatch(new RegExp(`^${t.url}/heartbeat/ping/`));
  });

  it('a failed check sets lastCheck.ok false, not the status: another server, nothing listening', async () => {
    useCloudflared(dirs.ok);
    const up = statusBecomes('up');
    await put({ provider: 'cloudflared' });
    await up;
    await t.server.scheduler.tick(); // the check made on up
    const other = await startTestServer({ config: { publicListen: '127.0.0.1:0' } });
    const otherAddr = other.server.publicListener.address()!;
    const dead = await closedPort();
    try {
      s.deps.resolveCheckUrl = () => `http://${otherAddr.host}:${otherAddr.port}`;
      const res = await t.request('POST', '/tunnel/check', { token: dev });
      expect(res.body).toMatchObject({
        status: 'up',
        lastCheck: { ok: false, status: 200, error: expect.stringContaining('another server answered') },
      });
      s.deps.resolveCheckUrl = () => `http://127.0.0.1:${dead}`;
      const none = await t.request('POST', '/tunnel/check', { token: dev });
      expect(none.body).toMatchObject({
        status: 'up',
        publicUrl: QUICK_URL,
        lastCheck: {
          ok: false,
          status: null,
          latencyMs: null,
          error: expect.stringContaining('ECONNREFUSED'),
        },
      });
    } finally {
      s.deps.resolveCheckUrl = (u) =>
        u === QUICK_URL || u === 'https://bell.example.com' ? publicBase() : u;
      await other.close();
    }
  });

  it('the tunnel goes down: error, URL falls back, a notice for the admin, a restart with backoff', async () => {
    useCloudflared(dirs.ok);
    const up = statusBecomes('up');
    await put({ provider: 'cloudflared' });
    await up;
    await t.server.scheduler.tick(); // the check made on up
    const events: string[] = [];
    const off = t.server.ctx.bus.on('tunnel:changed', (e) => events.push(e.status));
    try {
      const down = statusBecomes('error');
      process.kill(pidOf(dirs.ok), 'SIGKILL');
      await down;
      const rec = await t.request('GET', '/tunnel', { token: dev });
      expect(rec.body).toMatchObject({
        status: 'error',
        publicUrl: null,
        error: 'cloudflared exited (signal SIGKILL)',
      });
      expect(t.server.ctx.publicUrl()).toBe(t.url);
      expect(events).toEqual(['error']);

      // The admin's internal channel has the notice (the desktop tray pops internal-channel messages up).
      const notice = await lastSystemMessage();
      expect(notice).toMatchObject({
        title: 'Public access is down',
        priority: 8,
        extras: { 'service::tunnel': { event: 'down', provider: 'cloudflared' } },
      });
      expect(notice.message).toContain('cloudflared exited (signal SIGKILL)');
      expect(notice.message).toContain(t.url);

      // The restart comes after the first backoff step, not before.
      t.clock.advance(RETRY_FIRST_MS - 1);
      await t.server.scheduler.tick();
      expect(s.status).toBe('error');
      const back = statusBecomes('up');
      t.clock.advance(1);
      await t.server.scheduler.tick();
      await back;
      expect(s.publicUrl).toBe(QUICK_URL);
      const again = await lastSystemMessage();
      expect(again).toMatchObject({
        title: 'Public access is back',
        extras: { 'service::tunnel': { event: 'up' } },
      });
    } finally {
      off();
    }
  });

  it('start failures: exit with an error, no URL in time, not installed; one notice per outage', async () => {
    const before = (await systemMessages()).length;
    useCloudflared(dirs.fail);
    let failed = statusBecomes('error');
    const res = await put({ provider: 'cloudflared' });
    expect(res.body.status).toBe('starting');
    await failed;
    expect(s.error).toMatch(/^cloudflared exited \(code 1\): .*ERR failed to request quick Tunnel/);
    expect(s.publicUrl).toBeNull();
    expect((await systemMessages()).length).toBe(before + 1);
    // The retry fails again: no second notice.
    failed = statusBecomes('error');
    t.clock.advance(RETRY_FIRST_MS);
    await t.server.scheduler.tick();
    await failed;
    expect((await systemMessages()).length).toBe(before + 1);

    useCloudflared(dirs.silent, 300);
    failed = statusBecomes('error');
    await put({ provider: 'cloudflared' });
    await failed;
    expect(s.error).toBe(
      'cloudflared did not report a tunnel within 0 s: 2026-01-15T12:00:00Z INF Thank you for trying Cloudflare Tunnel.',
    );
    expect(await gone(pidOf(dirs.silent))).toBe(true);

    useCloudflared(dirs.none, 10_000, dirs.none);
    failed = statusBecomes('error');
    await put({ provider: 'cloudflared' });
    await failed;
    expect((await t.request('GET', '/tunnel', { token: dev })).body).toMatchObject({
      status: 'error',
      error: 'cloudflared not found in PATH',
      publicUrl: null,
    });
  });

  it('after a clock gap (the host slept) a failed tunnel is retried at once, not after its backoff', async () => {
    useCloudflared(dirs.fail);
    const failed = statusBecomes('error');
    await put({ provider: 'cloudflared' });
    await failed;
    useCloudflared(dirs.ok);
    // Still inside the 5 s backoff: nothing happens on a tick.
    await t.server.scheduler.tick();
    expect(s.status).toBe('error');
    const up = statusBecomes('up');
    t.server.resumed(); // Electron's powerMonitor resume: a clock:gap
    await t.server.scheduler.tick();
    await up;
    expect(s.publicUrl).toBe(QUICK_URL);
  });

  it('named tunnel: the token goes in TUNNEL_TOKEN (never the arguments or the record), the URL is the hostname', async () => {
    useCloudflared(dirs.ok);
    const up = statusBecomes('up');
    const res = await put({
      provider: 'cloudflared',
      cloudflared: { token: CF_TOKEN, hostname: 'Bell.Example.com' },
    });
    expect(res.body.cloudflared).toEqual({ token: '********', hostname: 'bell.example.com' });
    await up;
    expect(s.publicUrl).toBe('https://bell.example.com');
    expect(readFileSync(join(dirs.ok, 'args'), 'utf8').trim()).toBe('tunnel --no-autoupdate run');
    expect(readFileSync(join(dirs.ok, 'env'), 'utf8').trim()).toBe(`TUNNEL_TOKEN=${CF_TOKEN}`);
    const rec = await t.request('GET', '/tunnel', { token: dev });
    expect(rec.text).not.toContain(CF_TOKEN);

    // A failing named tunnel that prints its token: the record's error never shows it.
    useCloudflared(dirs.fail);
    const failed = statusBecomes('error');
    await put({ provider: 'cloudflared', cloudflared: { token: '********', hostname: 'bell.example.com' } });
    await failed;
    expect(s.error).toContain('token=********');
    expect(s.error).not.toContain(CF_TOKEN);
    expect(JSON.stringify(await systemMessages())).not.toContain(CF_TOKEN);
  });

  it('the tunnel stops with the server', async () => {
    const other = await startTestServer();
    const os = tunnelService(other.server.ctx);
    os.deps.providers.set(
      'cloudflared',
      entry(cloudflaredProvider({ path: `${dirs.ok}${delimiter}${process.env.PATH}` })),
    );
    const device = await deviceToken(other);
    const up = new Promise<void>((resolve) =>
      other.server.ctx.bus.on('tunnel:changed', (e) => e.status === 'up' && resolve()),
    );
    await other.request('PUT', '/tunnel', { token: device.token, json: { provider: 'cloudflared' } });
    await up;
    const pid = pidOf(dirs.ok);
    expect(alive(pid)).toBe(true);
    await other.close();
    expect(alive(pid)).toBe(false);
  });
});

describe('restart', () => {
  // The restarted server's first attempt uses the real PATH: run only where no real cloudflared could start.
  it.skipIf(findInPath('cloudflared', process.env.PATH) !== null)(
    'a configured tunnel starts again with the server',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'belfry-tunnel-restart-'));
      const path = `${dirs.ok}${delimiter}${process.env.PATH}`;
      try {
        const a = await startTestServer({ dataDir });
        const as = tunnelService(a.server.ctx);
        as.deps.providers.set('cloudflared', entry(cloudflaredProvider({ path })));
        const device = await deviceToken(a);
        const up = new Promise<void>((resolve) =>
          a.server.ctx.bus.on('tunnel:changed', (e) => e.status === 'up' && resolve()),
        );
        await a.request('PUT', '/tunnel', { token: device.token, json: { provider: 'cloudflared' } });
        await up;
        await a.server.stop();

        const b = await startTestServer({ dataDir });
        try {
          const bs = tunnelService(b.server.ctx);
          expect(bs.stored().provider).toBe('cloudflared');
          await b.server.scheduler.tick();
          expect([bs.status, bs.error]).toEqual(['error', 'cloudflared not found in PATH']);
          bs.deps.providers.set('cloudflared', entry(cloudflaredProvider({ path })));
          const back = new Promise<void>((resolve) =>
            b.server.ctx.bus.on('tunnel:changed', (e) => e.status === 'up' && resolve()),
          );
          b.server.resumed();
          await b.server.scheduler.tick();
          await back;
          expect(b.server.ctx.publicUrl()).toBe(QUICK_URL);
        } finally {
          await b.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('ngrok', () => {
  it('without a reachable ngrok service the record shows the error, never the authtoken', async () => {
    const failed = statusBecomes('error');
    const res = await put({ provider: 'ngrok', ngrok: { authtoken: NGROK_TOKEN } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'ngrok',
      ngrok: { authtoken: '********' },
      status: 'starting',
    });
    await failed;
    const rec = await t.request('GET', '/tunnel', { token: dev });
    expect(rec.body).toMatchObject({
      status: 'error',
      publicUrl: null,
      error: expect.stringMatching(/^ngrok: /),
    });
    expect(rec.text).not.toContain(NGROK_TOKEN);
    expect(JSON.stringify(await systemMessages())).not.toContain(NGROK_TOKEN);
    // A check needs a tunnel that is up.
    const check = await t.request('POST', '/tunnel/check', { token: dev });
    expect(check.status).toBe(409);
    expect(check.body.errorDescription).toBe('the tunnel is not up');
  });
});

/** The admin's internal-channel messages, newest first. */
async function systemMessages(): Promise<any[]> {
  const channels = await t.request('GET', '/application', { token: dev });
  const internal = (channels.body as { id: number; internal: boolean }[]).find((c) => c.internal);
  if (!internal) return [];
  const res = await t.request('GET', `/application/${internal.id}/message`, { token: dev });
  return res.body.messages;
}

async function lastSystemMessage(): Promise<any> {
  return (await systemMessages())[0];
}

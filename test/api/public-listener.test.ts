import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Feature } from '../../server/features/index';
import { principalOf, TOK } from '../../server/http/auth';
import { connectionGuardOf } from '../../server/http/connections';
import { RouteTable } from '../../server/http/routes';
import { deviceToken, makeChannel } from '../helpers/factories';
import { type ApiResponse, request, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The public listener (BELFRY_PUBLIC_LISTEN, docs/public-access.md): the public routes only, no
 * credentials, X-Belfry-Instance on /health of both listeners.
 */

/**
 * Probe routes under public prefixes (the gate lets them through): one that takes a device token, as a
 * route a family might one day add there, and one that tells which credential headers reached it.
 */
const probe: Feature = {
  name: 'public-probe',
  routes: (ctx) =>
    new RouteTable(ctx, 'public-probe')
      .get('/image/probe-whoami', TOK, (req) => ({ userId: principalOf(req).userId }))
      .get('/status/probe-headers/echo', null, (req) => ({
        seen: Object.keys(req.headers).filter((h) =>
          ['authorization', 'cookie', 'x-service-key', 'x-legacy-key', 'x-gotify-key', 'x-api-key'].includes(
            h,
          ),
        ),
        raw: req.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()),
      })),
};

let t: TestServer;
let pub: string;
let dev: string;
let appid: number;

const pubRequest = <T = any>(method: string, path: string, opts = {}): Promise<ApiResponse<T>> =>
  request<T>(pub, method, path, opts);
const noRoute = (method: string, path: string) => ({
  error: 'Not Found',
  errorCode: 404,
  errorDescription: `no route for ${method} ${path}`,
});

beforeAll(async () => {
  t = await startTestServer({ config: { publicListen: '127.0.0.1:0' }, extraFeatures: [probe] });
  const a = t.server.publicListener.address();
  if (!a) throw new Error('the public listener does not listen');
  pub = `http://${a.host}:${a.port}`;
  dev = (await deviceToken(t)).token;
  appid = (await makeChannel(t, dev)).id;
});
afterAll(async () => {
  await t.close();
});

describe('public routes', () => {
  it('/health answers on both listeners with the same X-Belfry-Instance', async () => {
    const main = await t.request('GET', '/health');
    const there = await pubRequest('GET', '/health');
    expect(there.status).toBe(200);
    expect(there.body).toEqual({ health: 'green', database: 'green' });
    const id = main.headers.get('x-belfry-instance');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(there.headers.get('x-belfry-instance')).toBe(id);
    expect(id).toBe(t.server.ctx.instanceId);
  });

  it('ingest through the public listener: webhook, heartbeat ping, router, metric, script', async () => {
    const hook = await t.request('POST', `/application/${appid}/webhook`, {
      token: dev,
      json: { name: 'h' },
    });
    const hookToken = String(hook.body.url).split('/').pop();
    const fired = await pubRequest('POST', `/webhook/${hookToken}`, { json: { message: 'via public' } });
    expect(fired.status).toBe(200);

    const hb = await t.request('POST', '/heartbeat', { token: dev, json: { appid, name: 'job' } });
    const ping = await pubRequest('GET', `/heartbeat/ping/${hb.body.token}`);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ ok: true });

    const router = await t.request('GET', '/webhook-router', { token: dev });
    const routed = await pubRequest('POST', `/router/${router.body.token}/x`, { json: { a: 1 } });
    expect(routed.status).toBe(200);
    expect(routed.body).toHaveProperty('id');

    const ms = await t.request('POST', '/metric-source', { token: dev, json: { appid, name: 'm' } });
    const ingest = await pubRequest('POST', `/metric/${ms.body.token}`, { json: { name: 'load', value: 1 } });
    expect(ingest.status).toBe(200);
    expect(ingest.body).toEqual({ accepted: 1, rejected: [] });

    const ws = await t.request('POST', '/web-script', { token: dev, json: { appid, name: 'w' } });
    const snippet = await pubRequest('GET', `/script/${ws.body.token}`);
    expect(snippet.status).toBe(200);
    expect(snippet.headers.get('content-type')).toMatch(/^application\/javascript/);
  });

  it('status pages, signed links and images reach their families (their own errors, not "no route")', async () => {
    const json = { headers: { Accept: 'application/json' } };
    const cases: [string, number, string][] = [
      ['/status/no-such-page/summary', 404, 'status page not found'],
      ['/status-subscribe/verify?token=x', 400, ''],
      ['/a/answer?token=x', 400, 'This link is not valid'],
      ['/m/read?token=abc.def', 400, 'invalid or expired link'],
      ['/image/avatar/none.png', 404, ''],
    ];
    for (const [path, status, text] of cases) {
      const res = await pubRequest('GET', path, json);
      expect(res.status, path).toBe(status);
      expect(res.text, path).not.toContain('no route for');
      if (text) expect(res.text, path).toContain(text);
      // The same answer as on the main listener.
      const main = await t.request('GET', path, json);
      expect([main.status, main.text], path).toEqual([res.status, res.text]);
    }
  });
});

describe('everything else is 404 there', () => {
  it('the API, the UI, live streams and lookalike paths answer 404 `no route for METHOD /path`', async () => {
    const cases: [string, string][] = [
      ['GET', '/'],
      ['GET', '/index.html'],
      ['GET', '/assets/app.js'],
      ['GET', '/version'],
      ['GET', '/serverinfo'],
      ['GET', '/client'],
      ['POST', '/client'],
      ['GET', '/current/user'],
      ['GET', '/application'],
      ['POST', '/message'],
      ['GET', '/message'],
      ['GET', '/stream'],
      ['GET', '/ws'],
      ['GET', '/tunnel'],
      ['PUT', '/tunnel'],
      ['GET', '/heartbeat'],
      ['GET', '/metric-source'],
      ['GET', '/status-page'],
      ['GET', '/webhook-router'],
      ['POST', '/auth/local/login'],
      ['GET', '/webhook'],
      ['GET', '/webhook/'],
      ['GET', '/Webhook/x'],
      ['GET', '/webhook%2F..%2Fclient'],
      ['GET', '/health/'],
      ['GET', '/a/answer/x'],
      ['DELETE', '/message'],
    ];
    for (const [method, path] of cases) {
      const res = await pubRequest(method, path, { token: dev });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body, `${method} ${path}`).toEqual(noRoute(method, path));
    }
    // The same requests on the main listener are served (a few of them).
    expect((await t.request('GET', '/client', { token: dev })).status).toBe(200);
    expect((await t.request('GET', '/version')).status).toBe(200);
  });

  it('a WebSocket upgrade (/ws, /stream) is refused with 404 and the error body', async () => {
    for (const path of ['/ws', '/stream', '/webhook/x']) {
      const text = await rawExchange(
        pub,
        `GET ${path}?token=${dev} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
      expect(text, path).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
      expect(text, path).toContain(`"errorDescription":"no route for GET ${path}"`);
    }
  });

  it('dot segments and an absolute-form request target are refused (sent raw: fetch would normalise them)', async () => {
    for (const target of [
      '/webhook/../client',
      '/webhook/%2e%2e/client',
      '/heartbeat/ping/./x',
      `${t.url}/client`,
    ]) {
      const text = await rawExchange(pub, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(text, target).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    }
  });
});

describe('credentials are never read there', () => {
  it('a valid device token authenticates nothing, in any transport', async () => {
    // The probe takes a device token: fine on the main listener.
    const main = await t.request('GET', '/image/probe-whoami', { token: dev });
    expect(main.status).toBe(200);
    for (const via of ['bearer', 'service-key', 'legacy-key', 'gotify-key', 'query', 'cookie'] as const) {
      const res = await pubRequest('GET', '/image/probe-whoami', { token: dev, via });
      expect(res.status, via).toBe(401);
      expect(res.body.errorCode, via).toBe(401);
    }
  });

  it('credential headers are removed before dispatch', async () => {
    const headers = {
      Authorization: `Bearer ${dev}`,
      Cookie: `service-client-token=${dev}`,
      'X-Service-Key': dev,
      'X-Legacy-Key': dev,
      'X-Gotify-Key': dev,
      'X-Api-Key': dev,
    };
    const there = await pubRequest('GET', '/status/probe-headers/echo', { headers });
    expect(there.status).toBe(200);
    expect(there.body.seen).toEqual([]);
    expect(there.body.raw).not.toContain('authorization');
    expect(there.body.raw).not.toContain('x-gotify-key');
    const main = await t.request('GET', '/status/probe-headers/echo', { headers });
    expect(main.body.seen.length).toBe(6);
  });

  it('a public route with a credential still works as a public route (the credential is ignored)', async () => {
    const hook = await t.request('POST', `/application/${appid}/webhook`, {
      token: dev,
      json: { name: 'h2' },
    });
    const hookToken = String(hook.body.url).split('/').pop();
    const res = await pubRequest('POST', `/webhook/${hookToken}`, {
      token: 'Cgarbage-but-ignored',
      json: { message: 'x' },
    });
    expect(res.status).toBe(200);
  });
});

describe('lifecycle', () => {
  it('has connection guards like the main listener', async () => {
    const guard = connectionGuardOf(t.server.publicListener.server);
    const before = guard.counters.accepted;
    await rawExchange(pub, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(guard.counters.accepted).toBeGreaterThan(before);
    expect(t.server.publicListener.server.headersTimeout).toBe(t.server.httpServer.headersTimeout);
  });

  it('without BELFRY_PUBLIC_LISTEN it does not listen until a tunnel asks (127.0.0.1:0), and stops with the server', async () => {
    const s = await startTestServer();
    try {
      expect(s.server.publicListener.address()).toBeNull();
      const a = await s.server.ctx.publicSurface.ensure();
      expect(a.host).toBe('127.0.0.1');
      expect(a.port).toBeGreaterThan(0);
      expect(await s.server.ctx.publicSurface.ensure()).toEqual(a);
      const res = await request(`http://127.0.0.1:${a.port}`, 'GET', '/health');
      expect(res.headers.get('x-belfry-instance')).toBe(s.server.ctx.instanceId);
      expect((await request(`http://127.0.0.1:${a.port}`, 'GET', '/client', { token: dev })).status).toBe(
        404,
      );
      await s.close();
      await expect(fetch(`http://127.0.0.1:${a.port}/health`)).rejects.toThrow();
    } finally {
      await s.close();
    }
  });

  it('the instance id is kept in the data dir across restarts, and differs between data dirs', async () => {
    const first = await startTestServer();
    const dataDir = first.dataDir;
    const id = first.server.ctx.instanceId;
    const other = await startTestServer();
    try {
      expect(other.server.ctx.instanceId).not.toBe(id);
    } finally {
      await other.close();
    }
    await first.server.stop();
    const again = await startTestServer({ dataDir });
    try {
      expect(again.server.ctx.instanceId).toBe(id);
      expect((await again.request('GET', '/health')).headers.get('x-belfry-instance')).toBe(id);
    } finally {
      await again.close();
      await first.close();
    }
  });

  it('ctx.publicUrl(): the tunnel URL while set, never with BELFRY_PUBLIC_URL, never for the mail domain', async () => {
    const surface = t.server.ctx.publicSurface;
    expect(t.server.ctx.publicUrl()).toBe(t.url);
    surface.tunnelUrl = 'https://tunnel.example';
    try {
      expect(t.server.ctx.publicUrl()).toBe('https://tunnel.example');
      expect(t.server.ctx.publicUrl({ tunnel: false })).toBe(t.url);
    } finally {
      surface.tunnelUrl = null;
    }
    const fixed = await startTestServer({ config: { publicUrl: 'https://bell.example/' } });
    try {
      fixed.server.ctx.publicSurface.tunnelUrl = 'https://tunnel.example';
      expect(fixed.server.ctx.publicUrl()).toBe('https://bell.example');
    } finally {
      await fixed.close();
    }
  });
});

/** Sends raw bytes and returns everything the server answers until it closes (or 2 s of silence). */
function rawExchange(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let out = '';
    socket.setEncoding('utf8');
    socket.setTimeout(2_000, () => socket.end());
    socket.on('data', (d: string) => {
      out += d;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

import { createServer as createHttpServer, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Socket, connect as tcpConnect } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionGuardOf } from '../../server/http/connections';
import { leanListener } from '../../server/http/lean';
import { JSON_MAX_DEPTH } from '../../server/lib/limits';
import { deviceToken, makeChannel as makeChannelViaApi, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  hub,
  makeChannel,
  makeChannelKey,
  openWs,
  refusedUpgrade,
  until,
  type WsClient,
} from './realtime-helpers';

/** Issue 21, items 1, 7 and 11 (the network-facing part): crashes, connection exhaustion, 500s. */

const errorBody = (status: number, error: string, description: string) => ({
  error,
  errorCode: status,
  errorDescription: description,
});

function portOf(t: TestServer): number {
  return Number(new URL(t.url).port);
}

/** Sends raw bytes on a fresh TCP connection and resolves with everything the server sent until it closed. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

function parseRaw(raw: string): { status: number; type: string; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const type = /^content-type:\s*(.*)$/im.exec(head)?.[1] ?? '';
  return { status, type, body: type.startsWith('application/json') ? JSON.parse(body) : body };
}

const upgradeRequest = (target: string) =>
  `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';

const plainRequest = (method: string, target: string) =>
  `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

/** Request-targets a browser page or a script can send that are not a plain `/path`. */
const ODD_TARGETS = [
  '//[',
  '*',
  'http://x/ws',
  '//',
  '/%',
  '/%zz?token=%',
  `/${'a'.repeat(8_000)}`,
  '//x/ws',
];

async function healthy(t: TestServer): Promise<number> {
  const res = await fetch(`${t.url}/health`, { signal: AbortSignal.timeout(2_000) });
  await res.text();
  return res.status;
}

describe('odd request-targets (issue 21, item 1)', () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });

  it('GET //[ upgrade answers 400 with the error body when the path is malformed, and the server keeps serving', async () => {
    const r = parseRaw(await rawExchange(portOf(t), upgradeRequest('//[')));
    expect(r).toEqual({
      status: 400,
      type: 'application/json; charset=utf-8',
      body: errorBody(400, 'Bad Request', 'malformed request target'),
    });
    expect(await healthy(t)).toBe(200);
  });

  it('WebSocket upgrades answer a 4xx error body, never a crash, when the request-target is odd', async () => {
    for (const target of ODD_TARGETS) {
      const r = parseRaw(await rawExchange(portOf(t), upgradeRequest(target)));
      expect(r.status, target.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(r.status, target.slice(0, 40)).toBeLessThan(500);
      expect(r.body).toMatchObject({ errorCode: r.status });
    }
    // `*` and authority-form are not a path at all; an absolute-form /ws is /ws (no token: 401).
    expect(parseRaw(await rawExchange(portOf(t), upgradeRequest('*'))).status).toBe(400);
    expect(parseRaw(await rawExchange(portOf(t), upgradeRequest('http://x/ws'))).status).toBe(401);
    expect(await healthy(t)).toBe(200);
  });

  it('ordinary requests answer a 4xx error body, never a 5xx, when the request-target is odd', async () => {
    for (const method of ['GET', 'POST', 'OPTIONS'])
      for (const target of ODD_TARGETS) {
        const r = parseRaw(await rawExchange(portOf(t), plainRequest(method, target)));
        const what = `${method} ${target.slice(0, 40)}`;
        expect(r.status, what).toBeGreaterThanOrEqual(200);
        expect(r.status, what).toBeLessThan(500);
        if (r.status >= 400) expect(r.body, what).toMatchObject({ errorCode: r.status });
      }
    expect(await healthy(t)).toBe(200);
  });

  it('requests the HTTP parser refuses answer 400 or 431 with the error body, not plain text', async () => {
    const cases: [string, number, string][] = [
      ['NOT A REQUEST\r\n\r\n', 400, 'malformed HTTP request'],
      ['GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n', 400, 'malformed HTTP request'],
      [
        `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'request headers too large',
      ],
    ];
    for (const [raw, status, description] of cases) {
      const r = parseRaw(await rawExchange(portOf(t), raw));
      expect(r, raw.slice(0, 30)).toEqual({
        status,
        type: 'application/json; charset=utf-8',
        body: errorBody(status, STATUS_CODES[status]!, description),
      });
    }
    expect(await healthy(t)).toBe(200);
  });

  it('the request listener answers 500 with the error body when dispatching throws, instead of ending the process', async () => {
    const failing = createHttpServer(
      leanListener(t.server.ctx, [], () => {
        throw new TypeError('a bug in a request listener');
      }),
    );
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = failing.address() as AddressInfo;
      const r = parseRaw(await rawExchange(port, plainRequest('GET', '/anything')));
      expect(r).toEqual({
        status: 500,
        type: 'application/json; charset=utf-8',
        body: errorBody(500, 'Internal Server Error', 'internal server error'),
      });
      expect(
        t.log.lines.some(
          (l) => l.includes('ERROR unhandled error') && l.includes('a bug in a request listener'),
        ),
      ).toBe(true);
    } finally {
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
  });

  it('a WebSocket upgrade answers 500 with the error body when the upgrade handling throws', async () => {
    const live = hub(t);
    const original = live.admit;
    live.admit = () => {
      throw new TypeError('a bug in the upgrade path');
    };
    try {
      const user = makeUser(t);
      const dev = await deviceToken(t, user);
      expect(await refusedUpgrade(t, '/ws', dev.token)).toEqual({
        status: 500,
        body: errorBody(500, 'Internal Server Error', 'internal server error'),
      });
    } finally {
      live.admit = original;
    }
    expect(await healthy(t)).toBe(200);
  });
});

/** Opens `n` sockets that send an incomplete request head and then nothing (slowloris). */
async function slowHeaderSockets(
  port: number,
  n: number,
): Promise<{ sockets: Socket[]; closed: () => number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve, reject) => {
          const s = tcpConnect(port, '127.0.0.1', () => {
            s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
            resolve();
          });
          s.on('close', () => closed++);
          s.on('error', () => {}); // reset by the server when evicted
          s.once('error', reject);
          sockets.push(s);
        }),
    ),
  );
  return { sockets, closed: () => closed };
}

describe('connection limits (issue 21, item 7)', () => {
  let t: TestServer;
  const clients: WsClient[] = [];
  const raw: Socket[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    for (const s of raw.splice(0)) s.destroy();
    await t.close();
  });

  it('slow-header sockets beyond the pending cap close the oldest ones, and /health still answers quickly', async () => {
    const guard = connectionGuardOf(t.server.httpServer);
    guard.configure({ maxPending: 50 });
    const before = guard.counters.accepted;
    const slow = await slowHeaderSockets(portOf(t), 300);
    raw.push(...slow.sockets);
    await until(() => guard.counters.accepted - before >= 300 && slow.closed() >= 250, 5_000);
    expect(guard.size().pending).toBeLessThanOrEqual(50);
    const started = performance.now();
    expect(await healthy(t)).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000);
    // The newest slow sockets are the ones still open; destroying them leaves nothing behind.
    for (const s of slow.sockets) s.destroy();
    await until(() => guard.size().pending <= 1 && guard.size().open <= 1);
  });

  it('sockets beyond the connection cap close the oldest pending one, so /health still answers', async () => {
    const guard = connectionGuardOf(t.server.httpServer);
    guard.configure({ maxConnections: 20, maxPending: 1_000 });
    const slow = await slowHeaderSockets(portOf(t), 40);
    raw.push(...slow.sockets);
    await until(() => slow.closed() >= 20);
    expect(guard.size().open).toBeLessThanOrEqual(20);
    expect(await healthy(t)).toBe(200);
    expect(guard.counters.evicted).toBeGreaterThanOrEqual(21);
  });

  it('the server limits the time to send request headers', () => {
    expect(t.server.httpServer.headersTimeout).toBe(10_000);
    expect(t.server.httpServer.requestTimeout).toBe(60_000);
  });

  it('GET /ws upgrade answers 429 with the error body when the channel key holds its cap of live sockets', async () => {
    hub(t).configure({ maxPerToken: 3 });
    const user = makeUser(t);
    const key = makeChannelKey(t, makeChannel(t, user.id), { canRead: true, canWrite: false });
    for (let i = 0; i < 3; i++) clients.push(await openWs(t, '/ws', key.token));
    expect(await refusedUpgrade(t, '/ws', key.token)).toEqual({
      status: 429,
      body: errorBody(429, 'Too Many Requests', 'too many live connections with this token (at most 3)'),
    });
    expect(hub(t).admitted()).toBe(3);
    // Closing one gives its slot back.
    clients.shift()!.ws.close();
    await until(() => hub(t).admitted() === 2);
    clients.push(await openWs(t, '/ws', key.token));
    expect(hub(t).admitted()).toBe(3);
  });

  it('GET /ws upgrade answers 429 when the user holds the per-user cap across several keys', async () => {
    hub(t).configure({ maxPerUser: 2 });
    const user = makeUser(t);
    const channel = makeChannel(t, user.id);
    const keys = [1, 2, 3].map(() => makeChannelKey(t, channel, { canRead: true, canWrite: false }));
    clients.push(await openWs(t, '/ws', keys[0]!.token), await openWs(t, '/stream', keys[1]!.token));
    expect(await refusedUpgrade(t, '/ws', keys[2]!.token)).toEqual({
      status: 429,
      body: errorBody(429, 'Too Many Requests', 'too many live connections for this account (at most 2)'),
    });
    // Another user is not affected.
    const other = makeUser(t);
    clients.push(await openWs(t, '/ws', (await deviceToken(t, other)).token));
  });

  it('GET /stream answers 429 with the error body and Retry-After when the device token holds its cap of streams', async () => {
    hub(t).configure({ maxPerToken: 2 });
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const streams = [new AbortController(), new AbortController()];
    for (const ac of streams) {
      const res = await fetch(`${t.url}/stream?token=${dev.token}`, { signal: ac.signal });
      expect(res.status).toBe(200);
    }
    const refused = await t.request('GET', `/stream?token=${dev.token}`);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(
      errorBody(429, 'Too Many Requests', 'too many live connections with this token (at most 2)'),
    );
    expect(refused.headers.get('retry-after')).toBe('10');
    for (const ac of streams) ac.abort();
    await until(() => hub(t).admitted() === 0);
  });
});

describe('unauthenticated 500s (issue 21, item 11)', () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });

  const post = async (path: string, body: Uint8Array | string, headers: Record<string, string>) => {
    const res = await fetch(t.url + path, { method: 'POST', headers, body: body as BodyInit });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const json = '{"message":"hello"}';

  it('POST answers 400 with the error body when the body does not decode as its Content-Encoding', async () => {
    const cases: [string, Uint8Array | string][] = [
      ['gzip', json],
      ['deflate', json],
      ['br', json],
      ['gzip', gzipSync(json).subarray(0, 12)],
    ];
    for (const path of ['/message', '/auth/login', '/health'])
      for (const [encoding, body] of cases)
        expect(
          await post(path, body, { 'Content-Type': 'application/json', 'Content-Encoding': encoding }),
          `${path} ${encoding}`,
        ).toEqual({
          status: 400,
          body: errorBody(400, 'Bad Request', 'request body does not match its Content-Encoding'),
        });
    expect(t.log.lines.filter((l) => l.includes(' ERROR '))).toEqual([]);
  });

  it('POST answers 415 with the error body when the Content-Encoding is unknown', async () => {
    for (const path of ['/message', '/auth/login'])
      expect(
        await post(path, json, { 'Content-Type': 'application/json', 'Content-Encoding': 'bogus' }),
      ).toEqual({
        status: 415,
        body: errorBody(415, 'Unsupported Media Type', 'unsupported body encoding'),
      });
  });

  it('POST /message answers 400 with the error body when extras are nested thousands of levels deep, on both lanes', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const channel = await makeChannelViaApi(t, dev.token);
    const deep = (depth: number, open: string, inner: string, close: string) =>
      `{"message":"x","extras":{"a":${open.repeat(depth)}${inner}${close.repeat(depth)}}}`;
    const tooDeep = errorBody(400, 'Bad Request', `JSON body nested deeper than ${JSON_MAX_DEPTH} levels`);
    for (const body of [
      deep(4_000, '{"a":', '1', '}'),
      deep(4_000, '[', '', ']'),
      deep(20_000, '[', '', ']'),
    ]) {
      const headers = { 'Content-Type': 'application/json', 'X-Service-Key': channel.token };
      // The lean lane (plain JSON) and express (a compressed body is not the lane's shape).
      expect(await post('/message', body, headers)).toEqual({ status: 400, body: tooDeep });
      expect(await post('/message', gzipSync(body), { ...headers, 'Content-Encoding': 'gzip' })).toEqual({
        status: 400,
        body: tooDeep,
      });
      expect(
        await post('/message', brotliCompressSync(body), { ...headers, 'Content-Encoding': 'br' }),
      ).toEqual({ status: 400, body: tooDeep });
    }
    // Without credentials too: the body is refused before anything else looks at it.
    expect(
      await post('/application', deep(4_000, '[', '', ']'), { 'Content-Type': 'application/json' }),
    ).toEqual({ status: 400, body: tooDeep });
    // Nesting within the limit is stored and given back as sent.
    const ok = { level: { level: { level: { list: [[[{ deep: true }]]] } } } };
    const sent = await post('/message', JSON.stringify({ message: 'x', extras: ok }), {
      'Content-Type': 'application/json',
      'X-Service-Key': channel.token,
    });
    expect(sent.status).toBe(200);
    expect((sent.body as { extras: unknown }).extras).toEqual(ok);
    expect(t.log.lines.filter((l) => l.includes(' ERROR '))).toEqual([]);
  });
});

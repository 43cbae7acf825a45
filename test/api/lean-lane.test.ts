import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageRoutes } from '../../server/features/messages/routes';
import { APP } from '../../server/http/auth';
import { leanListener } from '../../server/http/lean';
import { RouteTable } from '../../server/http/routes';
import { deviceToken, makeChannel } from '../helpers/factories';
import { type ApiResponse, request, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The lean lane (server/http/lean.ts) serves POST /message without express. These tests send the same
 * requests down both transports and expect the same answers: `/message` in the common shape takes the
 * lane, `/message/` (express matches it, the lane does not) goes through express to the same handler.
 * A second listener built around a spy shows which requests the lane takes.
 */
let t: TestServer;
let dev: string;
let channel: { id: number; token: string };
let spied: Server;
let spiedUrl: string;
const fellBack: string[] = [];
const LIMIT = 4_096;

beforeAll(async () => {
  t = await startTestServer({ config: { bodyLimitBytes: LIMIT, allowedOrigins: 'https://ui.example' } });
  dev = (await deviceToken(t)).token;
  channel = await makeChannel(t, dev, { name: 'Lean' });
  const app = t.server.app as unknown as RequestListener;
  // Routes of this test only: a handler that fails, one whose answer cannot be serialised.
  const probe = new RouteTable(t.server.ctx, 'probe')
    .postLean('/_lean/boom', APP, () => {
      throw new Error('secret internal detail');
    })
    .postLean('/_lean/bigint', APP, () => ({ n: 1n }));
  spied = createServer(
    leanListener(t.server.ctx, [messageRoutes(t.server.ctx), probe], (req, res) => {
      fellBack.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'}`);
      app(req, res);
    }),
  );
  await new Promise<void>((resolve) => spied.listen(0, '127.0.0.1', resolve));
  spiedUrl = `http://127.0.0.1:${(spied.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (spied) await new Promise<void>((resolve) => spied.close(() => resolve()));
  await t.close();
});

type Send = (path: string) => Promise<ApiResponse>;

/** The same request through the lane and through express; both answers, without ids and dates. */
async function both(send: Send): Promise<[ApiResponse, ApiResponse]> {
  const lane = await send('/message');
  const express = await send('/message/');
  return [lane, express];
}

function comparable(r: ApiResponse) {
  const body = r.body && typeof r.body === 'object' ? { ...(r.body as Record<string, unknown>) } : r.body;
  if (body && typeof body === 'object') delete (body as Record<string, unknown>).id;
  return {
    status: r.status,
    body,
    contentType: r.headers.get('content-type'),
    retryAfter: r.headers.get('retry-after'),
  };
}

function raw(path: string, init: { body?: string | Uint8Array; headers?: Record<string, string> }) {
  return request(t.url, 'POST', path, {
    token: channel.token,
    ...(init.body !== undefined ? { body: init.body } : {}),
    headers: { 'Content-Type': 'application/json', ...init.headers },
  });
}

describe('POST /message on the lean lane answers like express', () => {
  const cases: [string, Send][] = [
    [
      'a message',
      (p) => t.request('POST', p, { token: channel.token, json: { message: 'hi', priority: 7 } }),
    ],
    [
      'extras and a sender name',
      (p) =>
        t.request('POST', p, {
          token: channel.token,
          json: { message: 'x', title: 'T', extras: { 'client::display': { contentType: 'text/markdown' } } },
        }),
    ],
    ['malformed JSON', (p) => raw(p, { body: '{"message": ' })],
    ['a JSON number (strict mode)', (p) => raw(p, { body: '5' })],
    ['whitespace only', (p) => raw(p, { body: '  \n' })],
    ['an empty body', (p) => raw(p, { body: '' })],
    ['a JSON array', (p) => raw(p, { body: '[1]' })],
    ['a byte order mark', (p) => raw(p, { body: '\ufeff{"message":"bom"}' })],
    [
      'a vendor JSON type',
      (p) => raw(p, { body: '{"message":"v"}', headers: { 'Content-Type': 'application/vnd.x+json' } }),
    ],
    ['a priority out of range', (p) => raw(p, { body: '{"message":"m","priority":11}' })],
    ['a body over the limit', (p) => raw(p, { body: JSON.stringify({ message: 'x'.repeat(LIMIT) }) })],
    ['no token', (p) => t.request('POST', p, { json: { message: 'm' } })],
    [
      'an unknown token',
      (p) => t.request('POST', p, { token: 'AAAAAAAAAAAAAAAAAAAAAAA', json: { message: 'm' } }),
    ],
    ['a device token (wrong kind: 401)', (p) => t.request('POST', p, { token: dev, json: { message: 'm' } })],
    [
      'the key in the query',
      (p) => t.request('POST', p, { token: channel.token, via: 'query', json: { message: 'q' } }),
    ],
    [
      'the key as X-Gotify-Key',
      (p) => t.request('POST', p, { token: channel.token, via: 'gotify-key', json: { message: 'g' } }),
    ],
    [
      'a malformed Authorization header',
      (p) => raw(p, { body: '{"message":"m"}', headers: { Authorization: 'Bearer' } }),
    ],
  ];
  for (const [name, send] of cases)
    it(`${name}`, async () => {
      const [lane, express] = await both(send);
      expect(comparable(lane)).toEqual(comparable(express));
    });

  it('a read-only key gets the same 403 on both', async () => {
    const readOnly = (await t.request('POST', `/application/${channel.id}/token`, {
      token: dev,
      json: { name: 'ro', canRead: true, canWrite: false },
    })) as ApiResponse<{ token: string }>;
    expect(readOnly.status).toBe(200);
    const [lane, express] = await both((p) =>
      t.request('POST', p, { token: readOnly.body.token, json: { message: 'm' } }),
    );
    expect(lane.status).toBe(403);
    expect(comparable(lane)).toEqual(comparable(express));
  });

  it('the size limit holds for a chunked body without Content-Length', async () => {
    const big = JSON.stringify({ message: 'y'.repeat(LIMIT * 2) });
    const stream = () =>
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      });
    const send = async (p: string) => {
      const res = await fetch(t.url + p, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${channel.token}` },
        body: stream(),
        duplex: 'half',
      } as RequestInit);
      return { status: res.status, body: await res.json() };
    };
    const lane = await send('/message');
    expect(lane.status).toBe(413);
    expect(lane).toEqual(await send('/message/'));
  });

  it('sends CORS headers for an allowed origin, and none for another', async () => {
    const allowed = await raw('/message', {
      body: '{"message":"c"}',
      headers: { Origin: 'https://ui.example' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://ui.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await raw('/message', {
      body: '{"message":"c"}',
      headers: { Origin: 'https://evil.example' },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a message sent on the lane is stored and listed', async () => {
    const sent = await raw('/message', { body: '{"message":"stored on the lane"}' });
    const list = await t.request('GET', `/application/${channel.id}/message?limit=1`, { token: dev });
    expect(list.body.messages[0]).toMatchObject({ id: sent.body.id, message: 'stored on the lane' });
  });

  it('answers 503 on both when the journal cannot be synced, and not before trying', async () => {
    const store = t.server.store as unknown as { sync: () => Promise<void> };
    const sync = store.sync;
    store.sync = () => Promise.reject(new Error('disk on fire'));
    try {
      const [lane, express] = await both((p) => raw(p, { body: '{"message":"unsaved"}' }));
      expect(lane.status).toBe(503);
      expect(lane.body).toMatchObject({
        errorCode: 503,
        errorDescription: 'the database could not save this change',
      });
      expect(comparable(lane)).toEqual(comparable(express));
    } finally {
      store.sync = sync;
    }
  });
});

describe('which requests the lane takes', () => {
  async function post(path: string, body: string | Uint8Array, headers: Record<string, string>) {
    fellBack.length = 0;
    const res = await request(spiedUrl, 'POST', path, { token: channel.token, body, headers });
    return { res, fellBack: [...fellBack] };
  }

  it('takes a JSON body in UTF-8', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
    ]) {
      const r = await post('/message', '{"message":"lane"}', { 'Content-Type': type });
      expect(r.res.status).toBe(200);
      expect(r.fellBack).toEqual([]);
    }
  });

  it('leaves other shapes to express, which answers them', async () => {
    const form = await post('/message', 'message=hi', {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    expect(form.fellBack).toHaveLength(1);
    expect(form.res.status).toBe(400);
    expect(form.res.body.errorDescription).toMatch(/JSON body/);

    const gz = await post('/message', gzipSync('{"message":"zipped"}'), {
      'Content-Type': 'application/json',
      'Content-Encoding': 'gzip',
    });
    expect(gz.fellBack).toHaveLength(1);
    expect(gz.res.status).toBe(200);
    expect(gz.res.body.message).toBe('zipped');

    const other = await post('/message/read', '{"ids":[1]}', { 'Content-Type': 'application/json' });
    expect(other.fellBack).toEqual(['POST /message/read application/json']);
  });
});

describe('GET /message on the lean lane answers like express', () => {
  const cases: [string, (p: string) => Promise<ApiResponse>][] = [
    ['a page with a next link', (p) => t.request('GET', `${p}?limit=1`, { token: dev })],
    ['a deep page', (p) => t.request('GET', `${p}?limit=2&since=3`, { token: dev })],
    [
      'a legacy key (paging.since on the last page)',
      (p) => t.request('GET', `${p}?limit=100`, { token: dev, via: 'legacy-key' }),
    ],
    ['a bad limit', (p) => t.request('GET', `${p}?limit=0`, { token: dev })],
    ['a bad since', (p) => t.request('GET', `${p}?since=-1`, { token: dev })],
    ['the token in the query', (p) => t.request('GET', `${p}?limit=1`, { token: dev, via: 'query' })],
    ['a channel key with read', (p) => t.request('GET', `${p}?limit=1`, { token: channel.token })],
    ['no token', (p) => t.request('GET', p)],
  ];
  for (const [name, send] of cases)
    it(name, async () => {
      const lane = await send('/message');
      const express = await send('/message/');
      // The next link names the path it was asked for; otherwise the answers are the same.
      const unslash = (r: ApiResponse) => JSON.parse(r.text.replaceAll('/message/?', '/message?'));
      expect(lane.status).toBe(express.status);
      expect(unslash(lane)).toEqual(unslash(express));
    });

  it('a page of multi-byte text says its length in bytes, and reads back as sent', async () => {
    const text = 'Привет, мир ✓ 🔔 naïve';
    const sent = await t.request('POST', '/message', {
      token: channel.token,
      json: { message: text, title: 'Заголовок 🔔' },
    });
    expect(sent.status).toBe(200);
    const res = await fetch(`${spiedUrl}/message?limit=1`, { headers: { Authorization: `Bearer ${dev}` } });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(bytes.length).toBeGreaterThan(bytes.toString('utf8').length);
    const page = JSON.parse(bytes.toString('utf8')) as { messages: { message: string; title: string }[] };
    expect(page.messages[0]).toMatchObject({ message: text, title: 'Заголовок 🔔' });
  });

  it('takes GET /message, and leaves HEAD to express', async () => {
    fellBack.length = 0;
    const get = await request(spiedUrl, 'GET', '/message?limit=1', { token: dev });
    expect(get.status).toBe(200);
    expect(get.body.paging.next).toMatch(new RegExp(`^${spiedUrl}/message\\?`));
    expect(fellBack).toEqual([]);
    const head = await fetch(`${spiedUrl}/message`, {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${dev}` },
    });
    expect(head.status).toBe(200);
    expect(fellBack).toHaveLength(1);
  });
});

describe('lean handlers that fail', () => {
  it('an unexpected error is a generic 500 with the error body, logged, without its text', async () => {
    const r = await request(spiedUrl, 'POST', '/_lean/boom', { token: channel.token, json: {} });
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ error: 'Internal Server Error', errorCode: 500 });
    expect(r.text).not.toContain('secret internal detail');
    expect(t.log.lines.some((l) => l.includes('ERROR unhandled error') && l.includes('/_lean/boom'))).toBe(
      true,
    );
  });

  it('an answer that cannot be serialised closes the connection and the server goes on', async () => {
    await expect(
      request(spiedUrl, 'POST', '/_lean/bigint', { token: channel.token, json: {} }),
    ).rejects.toThrow();
    expect(t.log.lines.some((l) => l.includes('ERROR could not answer a request'))).toBe(true);
    const after = await request(spiedUrl, 'POST', '/message', {
      token: channel.token,
      json: { message: 'still up' },
    });
    expect(after.status).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_MAX_BYTES, REQUESTS_PER_MINUTE } from '../../server/features/web-scripts/ingest';
import { WEB_SCRIPTS_PER_USER } from '../../server/features/web-scripts/service';
import { issueToken } from '../../server/lib/tokens';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;
let otherUserId: number;

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  const other = makeUser(t);
  otherUserId = other.id;
  otherDev = (await deviceToken(t, other)).token;
});
afterAll(async () => {
  await t.close();
});

type Script = Record<string, any> & { id: number; token: string; appid: number };

async function script(body: Record<string, unknown> = {}, token = dev): Promise<Script> {
  const appid = body.appid ?? (await makeChannel(t, token)).id;
  const res = await t.request('POST', '/web-script', { token, json: { name: 'shop', appid, ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Script;
}

function postBatch(token: string, json: unknown, headers: Record<string, string> = {}) {
  return t.request('POST', `/script/${token}`, {
    body: JSON.stringify(json),
    headers: { 'Content-Type': 'text/plain;charset=UTF-8', ...headers },
  });
}

const errorEvent = (over: Record<string, unknown> = {}) => ({
  type: 'error',
  message: 'Uncaught TypeError: x is not a function',
  stack:
    'TypeError: x is not a function\n    at onClick (https://shop.example/static/js/main.3f9a2b1c.js:1:2345)',
  url: 'https://shop.example/cart?step=2',
  ...over,
});

describe('web script records', () => {
  it('POST /web-script creates a pending script whose full token, url and snippet are shown once', async () => {
    const c = await makeChannel(t, dev);
    const now = t.clock.now();
    const res = await t.request('POST', '/web-script', {
      token: dev,
      json: { appid: c.id, name: '  shop  ' },
    });
    expect(res.status).toBe(200);
    const body = res.body as Script;
    expect(body.token).toMatch(/^T[A-Za-z0-9]{22}$/);
    const url = `${t.server.ctx.publicUrl()}/script/${body.token}`;
    expect(body).toEqual({
      id: body.id,
      appid: c.id,
      name: 'shop',
      paused: false,
      status: 'pending',
      statusSince: iso(now),
      lastCheckAt: null,
      createdAt: iso(now),
      allowedOrigins: ['*'],
      priority: 6,
      token: body.token,
      url,
      snippet: `<script src="${url}" async></script>`,
      unresolvedCount: 0,
    });
    const again = await t.request('GET', `/web-script/${body.id}`, { token: dev });
    const hint = `${body.token.slice(0, 3)}${'*'.repeat(16)}${body.token.slice(-4)}`;
    expect(again.body.token).toBe(hint);
    expect(again.body.url).toBe(`${t.server.ctx.publicUrl()}/script/${hint}`);
    expect(again.body.snippet).toContain(hint);
    const list = await t.request('GET', `/web-script?appid=${c.id}`, { token: dev });
    expect(list.body).toEqual([again.body]);
  });

  it('POST /web-script answers 400 naming the field when input is invalid', async () => {
    const c = await makeChannel(t, dev);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x' }, 'appid:'],
      [{ appid: c.id }, 'name:'],
      [{ appid: c.id, name: 'x', allowedOrigins: ['https://a.example/path'] }, 'allowedOrigins.0:'],
      [{ appid: c.id, name: 'x', allowedOrigins: 'https://a.example' }, 'allowedOrigins:'],
      [{ appid: c.id, name: 'x', priority: 11 }, 'priority:'],
      [{ appid: 999999, name: 'x' }, 'appid: no such channel'],
    ];
    for (const [json, prefix] of cases) {
      const res = await t.request('POST', '/web-script', { token: dev, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription.replace(/^allowedOrigins\[0\]/, 'allowedOrigins.0')).toMatch(
        new RegExp(`^${prefix.replace(/[.[\]]/g, '\\$&')}`),
      );
    }
  });

  it('PUT /web-script/{id} changes fields partially, normalises origins and pauses', async () => {
    const s = await script();
    const res = await t.request('PUT', `/web-script/${s.id}`, {
      token: dev,
      json: { allowedOrigins: ['https://Shop.Example', 'http://localhost:5173'], priority: 9, paused: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'shop',
      allowedOrigins: ['https://shop.example', 'http://localhost:5173'],
      priority: 9,
      paused: true,
      status: 'paused',
    });
    const resumed = await t.request('PUT', `/web-script/${s.id}`, { token: dev, json: { paused: false } });
    expect(resumed.body).toMatchObject({ paused: false, status: 'pending' });
  });

  it('POST /web-script/{id}/rotate issues a new token and the old one stops working', async () => {
    const s = await script();
    const res = await t.request('POST', `/web-script/${s.id}/rotate`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body.token).not.toBe(s.token);
    expect((await t.request('GET', `/script/${s.token}`)).status).toBe(404);
    expect((await t.request('GET', `/script/${res.body.token}`)).status).toBe(200);
  });

  it('DELETE /web-script/{id} answers {} and the script is gone', async () => {
    const s = await script();
    expect((await t.request('DELETE', `/web-script/${s.id}`, { token: dev })).body).toEqual({});
    expect((await t.request('GET', `/web-script/${s.id}`, { token: dev })).status).toBe(404);
    expect((await t.request('GET', `/script/${s.token}`)).status).toBe(404);
  });

  it("someone else's web script is 404 on every management route", async () => {
    const s = await script({}, otherDev);
    for (const [method, path] of [
      ['GET', `/web-script/${s.id}`],
      ['PUT', `/web-script/${s.id}`],
      ['DELETE', `/web-script/${s.id}`],
      ['POST', `/web-script/${s.id}/rotate`],
      ['GET', `/web-script/${s.id}/issues`],
      ['GET', `/web-script/${s.id}/issue-count`],
      ['GET', `/web-script/${s.id}/series`],
      ['GET', `/web-script/${s.id}/sourcemaps`],
    ] as const) {
      const res = await t.request(method, path, {
        token: dev,
        json: method === 'PUT' ? { name: 'x' } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.errorDescription).toBe('web script not found');
    }
    const mine = await t.request('GET', '/web-script', { token: dev });
    expect((mine.body as Script[]).some((r) => r.id === s.id)).toBe(false);
    expect(otherUserId).toBeGreaterThan(0);
  });

  it('a channel key gets 403, a T token used as an API token gets 401, a scoped API token sees its channels only', async () => {
    const s = await script();
    const key = insertChannelKeyRow(t, s.appid, { canRead: true });
    expect((await t.request('GET', '/web-script', { token: key })).status).toBe(403);
    expect((await t.request('GET', '/web-script', { token: s.token })).status).toBe(401);
    const other = await makeChannel(t, dev);
    const scoped = await apiToken(t, { token: dev }, { access: 'read', appIds: [other.id] });
    expect((await t.request('GET', `/web-script/${s.id}`, { token: scoped.token })).status).toBe(404);
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('GET', `/web-script/${s.id}`, { token: read.token })).status).toBe(200);
    expect(
      (await t.request('PUT', `/web-script/${s.id}`, { token: read.token, json: { name: 'y' } })).status,
    ).toBe(403);
  });

  it(`POST /web-script answers 403 beyond ${WEB_SCRIPTS_PER_USER} web scripts per user`, async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await makeChannel(t, d);
    const now = t.clock.now();
    t.server.ctx.db.transaction(() => {
      for (let i = 0; i < WEB_SCRIPTS_PER_USER; i++)
        t.server.ctx.db.run(
          `INSERT INTO web_scripts (user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
           VALUES (?, ?, 'x', 'pending', ?, ?, 'x', ?)`,
          [u.id, c.id, now, issueToken('T').digest, now],
        );
    });
    const res = await t.request('POST', '/web-script', { token: d, json: { appid: c.id, name: 'one more' } });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe(
      `limit reached: at most ${WEB_SCRIPTS_PER_USER} web scripts per user`,
    );
  });
});

describe('GET /script/{token}', () => {
  it('GET /script/{token} serves the snippet with its endpoint baked in and counts a load', async () => {
    const s = await script();
    const res = await t.request('GET', `/script/${s.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.text).toContain(`var ENDPOINT = '${t.server.ctx.publicUrl()}/script/${s.token}';`);
    expect(res.text).not.toContain('__BELFRY_ENDPOINT__');
    const series = await t.request('GET', `/web-script/${s.id}/series?bucket=1m&from=${iso(t.clock.now())}`, {
      token: dev,
    });
    expect(series.body.points).toEqual([
      { at: series.body.points[0].at, loads: 1, pings: 0, batches: 0, events: 0 },
    ]);
  });

  it('GET /script/{token} answers 404 web script not found for unknown tokens and other kinds of token', async () => {
    const api = await apiToken(t, { token: dev });
    for (const token of [issueToken('T').token, api.token, dev, 'nothing']) {
      const res = await t.request('GET', `/script/${token}`);
      expect(res.status).toBe(404);
      expect(res.body.errorDescription).toBe('web script not found');
    }
  });
});

describe('POST /script/{token}', () => {
  it('POST /script/{token} accepts a text/plain JSON batch and answers {accepted}', async () => {
    const s = await script();
    const res = await postBatch(s.token, { events: [errorEvent()], flushReason: 'error', release: '1.2.0' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 1 });
    const again = await t.request('GET', `/web-script/${s.id}`, { token: dev });
    expect(again.body).toMatchObject({
      status: 'issues',
      unresolvedCount: 1,
      lastCheckAt: iso(t.clock.now()),
    });
  });

  it('POST /script/{token} reads JSON with application/json and with no content type', async () => {
    const s = await script();
    const a = await t.request('POST', `/script/${s.token}`, {
      json: { events: [errorEvent()], flushReason: 'interval' },
    });
    expect(a.body).toEqual({ accepted: 1 });
    const b = await t.request('POST', `/script/${s.token}`, {
      body: new TextEncoder().encode(JSON.stringify({ events: [errorEvent()], flushReason: 'size' })),
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    expect(b.body).toEqual({ accepted: 1 });
  });

  it('POST /script/{token} without a body is a ping and moves a pending script to ok', async () => {
    const s = await script();
    const res = await t.request('POST', `/script/${s.token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 0 });
    expect((await t.request('GET', `/web-script/${s.id}`, { token: dev })).body.status).toBe('ok');
    const stats = await t.request('GET', `/web-script/${s.id}/flush-stats`, { token: dev });
    expect(stats.body.reasons).toEqual({ interval: 0, size: 0, unload: 0, error: 0, ping: 1 });
    expect(stats.body.total).toBe(1);
  });

  it('POST /script/{token} drops invalid events without counting them', async () => {
    const s = await script();
    const res = await postBatch(s.token, {
      flushReason: 'interval',
      events: [
        errorEvent(),
        { type: 'warning', message: 'x' },
        { type: 'error' },
        { type: 'error', message: 'x'.repeat(2001) },
        { type: 'error', message: 'x', stack: 'y'.repeat(16 * 1024 + 1) },
        { type: 'error', message: 'x', at: 'yesterday' },
        { type: 'error', message: 'x', breadcrumbs: [{ at: iso(0), type: 'scroll', message: 'x' }] },
        {
          type: 'error',
          message: 'x',
          breadcrumbs: new Array(51).fill({ at: iso(0), type: 'click', message: 'b' }),
        },
        'not an object',
        { type: 'message', message: 'checkout opened', at: t.clock.now() - 1000 },
      ],
    });
    expect(res.body).toEqual({ accepted: 2 });
  });

  it('POST /script/{token} answers 400 naming the field for a malformed batch', async () => {
    const s = await script();
    const cases: [unknown, string][] = [
      [{ events: [] }, 'flushReason:'],
      [{ events: [], flushReason: 'manual' }, 'flushReason:'],
      [{ events: {}, flushReason: 'interval' }, 'events:'],
      [{ events: new Array(101).fill(errorEvent()), flushReason: 'size' }, 'events: at most 100'],
      [[1, 2], 'body:'],
    ];
    for (const [json, prefix] of cases) {
      const res = await postBatch(s.token, json);
      expect(res.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(res.body.errorDescription.startsWith(prefix)).toBe(true);
    }
    const bad = await t.request('POST', `/script/${s.token}`, {
      body: '{"events": [',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('malformed JSON body');
  });

  it('POST /script/{token} answers 413 for a body larger than 256 KiB', async () => {
    const s = await script();
    const res = await t.request('POST', `/script/${s.token}`, {
      body: JSON.stringify({ events: [], flushReason: 'interval', pad: 'x'.repeat(BATCH_MAX_BYTES) }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(413);
    const json = await t.request('POST', `/script/${s.token}`, {
      json: { events: [], flushReason: 'interval', pad: 'x'.repeat(BATCH_MAX_BYTES) },
    });
    expect(json.status).toBe(413);
  });

  it('POST /script/{token} on a paused script answers {accepted: 0, paused: true} and stores nothing', async () => {
    const s = await script({ paused: true });
    expect((await postBatch(s.token, { events: [errorEvent()], flushReason: 'error' })).body).toEqual({
      accepted: 0,
      paused: true,
    });
    expect((await t.request('POST', `/script/${s.token}`)).body).toEqual({ accepted: 0, paused: true });
    expect((await t.request('GET', `/web-script/${s.id}/issue-count`, { token: dev })).body).toEqual({
      unresolved: 0,
    });
  });

  it(`POST /script/{token} answers 429 beyond ${REQUESTS_PER_MINUTE} requests a minute per token`, async () => {
    const s = await script();
    const other = await script();
    for (let i = 0; i < REQUESTS_PER_MINUTE; i++) {
      const r = await t.request('POST', `/script/${s.token}`);
      if (r.status !== 200) throw new Error(`request ${i}: ${r.status}`);
    }
    const res = await t.request('POST', `/script/${s.token}`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).not.toBeNull();
    expect((await t.request('POST', `/script/${other.token}`)).status).toBe(200);
    t.clock.advance(60_000);
    expect((await t.request('POST', `/script/${s.token}`)).status).toBe(200);
  });
});

describe('CORS of /script/{token}', () => {
  it('an allowed origin is echoed; any origin passes with *', async () => {
    const s = await script({ allowedOrigins: ['https://shop.example'] });
    const res = await postBatch(
      s.token,
      { events: [], flushReason: 'interval' },
      { Origin: 'https://shop.example' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    const any = await script();
    const r2 = await postBatch(
      any.token,
      { events: [], flushReason: 'interval' },
      { Origin: 'https://x.example' },
    );
    expect(r2.headers.get('access-control-allow-origin')).toBe('https://x.example');
  });

  it('an origin not in allowedOrigins gets 403 origin not allowed without CORS headers; no Origin is accepted', async () => {
    const s = await script({ allowedOrigins: ['https://shop.example'] });
    for (const req of [
      () =>
        postBatch(
          s.token,
          { events: [errorEvent()], flushReason: 'error' },
          { Origin: 'https://evil.example' },
        ),
      () => t.request('GET', `/script/${s.token}`, { headers: { Origin: 'https://evil.example' } }),
      () => t.request('OPTIONS', `/script/${s.token}`, { headers: { Origin: 'https://evil.example' } }),
    ]) {
      const res = await req();
      expect(res.status).toBe(403);
      expect(res.body.errorDescription).toBe('origin not allowed');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect((await t.request('GET', `/web-script/${s.id}/issue-count`, { token: dev })).body).toEqual({
      unresolved: 0,
    });
    const noOrigin = await postBatch(s.token, { events: [errorEvent()], flushReason: 'error' });
    expect(noOrigin.body).toEqual({ accepted: 1 });
  });

  it('OPTIONS /script/{token} answers the preflight of an allowed origin', async () => {
    const s = await script({ allowedOrigins: ['http://localhost:5173'] });
    const res = await t.request('OPTIONS', `/script/${s.token}`, {
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type');
    expect(res.headers.get('access-control-max-age')).toBe('86400');
  });
});

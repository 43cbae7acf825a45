import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitorNet } from '../../server/features/monitors/kind';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The HTTP, simple, port and workflow kinds through the API: real loopback targets (one of them HTTPS with
 * the self-signed test certificate, one reached by a non-loopback name), the engine's ManualClock schedule.
 */
let t: TestServer;
let dev: string;
let site: FakeTarget;
let secure: FakeTarget;
let healthy = true;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  // A name that is not loopback (so the connectivity witness is asked), pointing at the fakes.
  monitorNet(t.server.ctx).hosts = new Map([['monitored.test', '127.0.0.1']]);
  monitorNet(t.server.ctx).online = async () => true;
  site = await startTarget((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/health') {
      res.writeHead(healthy ? 200 : 500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: healthy ? 'ok' : 'broken' }));
    } else if (url.pathname === '/login') {
      const ok = (JSON.parse(body || '{}') as { user?: string }).user === 'ann';
      res.writeHead(ok ? 200 : 403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ token: 'tok-1' }));
    } else if (url.pathname === '/me') {
      const ok = req.headers.authorization === 'Bearer tok-1';
      res.writeHead(ok ? 200 : 401);
      res.end(ok ? 'hello ann' : 'who?');
    } else if (url.pathname === '/moved') {
      res.writeHead(302, { Location: '/health' });
      res.end();
    } else res.end('ok');
  });
  secure = await startTarget((_req, res) => res.end('tls ok'), { tls: true });
});
afterAll(async () => {
  await t.close();
  await site.close();
  await secure.close();
});

/** Lets the one timer run what is due; tick() returns once the checks it started were applied. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

const titles = (appid: number) =>
  t.server.ctx.db
    .all<{ title: string; message: string }>(
      'SELECT title, message FROM messages WHERE channel_id = ? ORDER BY id',
      [appid],
    )
    .map((m) => `${m.title} | ${m.message}`);

describe('http-monitor', () => {
  it('POST /http-monitor creates it with the kind defaults, secrets masked; the first check makes it up', async () => {
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/http-monitor', {
      token: dev,
      json: {
        appid: c.id,
        name: 'API',
        url: `http://monitored.test:${site.port}/health`,
        headers: { Authorization: 'Bearer s3cret', Accept: 'application/json' },
        json: [{ path: '$.status', op: 'eq', value: 'ok' }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'http-monitor',
      status: 'pending',
      method: 'GET',
      url: `http://monitored.test:${site.port}/health`,
      headers: { Authorization: '********', Accept: 'application/json' },
      body: '',
      basicAuth: null,
      expectedStatus: ['200-299'],
      followRedirects: true,
      ignoreTlsErrors: false,
      maxResponseMs: null,
      bodyContains: null,
      bodyNotContains: null,
      json: [{ path: '$.status', op: 'eq', value: 'ok' }],
      tlsExpiryDays: 0,
    });
    await advance(0);
    const got = await t.request('GET', `/http-monitor/${res.body.id}`, { token: dev });
    expect(got.body).toMatchObject({ status: 'up', lastError: null, consecutiveFailures: 0 });
    expect(got.body.lastResponseMs).toEqual(expect.any(Number));
    expect(site.seen.at(-1)?.headers.authorization).toBe('Bearer s3cret');
  });

  it('goes down with the §2.3 text in lastError and the down message, and recovers', async () => {
    const c = await makeChannel(t, dev);
    const url = `${site.url}/health`;
    const m = (
      await t.request('POST', '/http-monitor', {
        token: dev,
        json: { appid: c.id, name: 'Shop', url, json: [{ path: '$.status', op: 'eq', value: 'ok' }] },
      })
    ).body;
    await advance(0);
    healthy = false;
    try {
      await advance(60_000);
      const down = await t.request('GET', `/http-monitor/${m.id}`, { token: dev });
      expect(down.body).toMatchObject({ status: 'down', lastError: 'status 500 not in 200-299' });
    } finally {
      healthy = true;
    }
    await advance(60_000);
    expect((await t.request('GET', `/http-monitor/${m.id}`, { token: dev })).body.status).toBe('up');
    expect(titles(c.id)).toEqual([
      `Shop is down | ${url}: status 500 not in 200-299`,
      `Shop is up again | ${url}: recovered after 1m down.`,
    ]);
  });

  it('PUT keeps a secret sent back as "********" and the check still sends it', async () => {
    const c = await makeChannel(t, dev);
    const m = (
      await t.request('POST', '/http-monitor', {
        token: dev,
        json: {
          appid: c.id,
          name: 'Auth',
          url: `${site.url}/me`,
          headers: { Authorization: 'Bearer tok-1' },
          basicAuth: null,
        },
      })
    ).body;
    await advance(0);
    const put = await t.request('PUT', `/http-monitor/${m.id}`, {
      token: dev,
      json: { headers: { ...m.headers, 'X-Extra': '1' }, bodyContains: 'hello' },
    });
    expect(put.status).toBe(200);
    expect(put.body.headers).toEqual({ Authorization: '********', 'X-Extra': '1' });
    await advance(0);
    expect((await t.request('GET', `/http-monitor/${m.id}`, { token: dev })).body).toMatchObject({
      status: 'up',
      lastError: null,
    });
    expect(site.seen.at(-1)?.headers).toMatchObject({ authorization: 'Bearer tok-1', 'x-extra': '1' });
  });

  it('POST /http-monitor answers 400 <field>: for bad kind fields', async () => {
    const c = await makeChannel(t, dev);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'url: required'],
      [{ url: 'file:///etc/passwd' }, 'url: must be an http or https URL'],
      [{ url: site.url, expectedStatus: ['99'] }, 'expectedStatus[0]: '],
      [{ url: site.url, json: [{ path: '$.a', op: 'near' }] }, 'json[0].op: must be one of'],
      [{ url: site.url, headers: { 'X-Token': '********' } }, 'headers.X-Token: '],
    ];
    for (const [json, prefix] of cases) {
      const res = await t.request('POST', '/http-monitor', {
        token: dev,
        json: { appid: c.id, name: 'x', ...json },
      });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription.startsWith(prefix), res.body.errorDescription).toBe(true);
    }
  });

  it('POST /http-monitor/test answers the check with the details of §2.6 and saves nothing', async () => {
    const before = (await t.request('GET', '/http-monitor', { token: dev })).body.length;
    const res = await t.request('POST', '/http-monitor/test', {
      token: dev,
      json: { url: `${site.url}/moved`, bodyContains: 'nope' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: false,
      status: 'down',
      error: 'body does not contain "nope"',
      details: {
        statusCode: 200,
        finalUrl: `${site.url}/health`,
        headers: { 'content-type': 'application/json' },
        bodyExcerpt: '{"status":"ok"}',
        assertions: [
          { name: 'status', ok: true, detail: 'status 200 in 200-299' },
          { name: 'bodyContains', ok: false, detail: 'body does not contain "nope"' },
        ],
      },
    });
    expect(res.body.responseTimeMs).toEqual(expect.any(Number));
    expect((await t.request('GET', '/http-monitor', { token: dev })).body.length).toBe(before);
  });

  it('POST /http-monitor/test reports TLS errors and, with ignoreTlsErrors, the days left', async () => {
    const strict = await t.request('POST', '/http-monitor/test', { token: dev, json: { url: secure.url } });
    expect(strict.body).toMatchObject({ ok: false, error: 'TLS error: self-signed certificate' });
    const lax = await t.request('POST', '/http-monitor/test', {
      token: dev,
      json: { url: `https://monitored.test:${secure.port}/`, ignoreTlsErrors: true, tlsExpiryDays: 30 },
    });
    expect(lax.body).toMatchObject({
      ok: true,
      status: 'up',
      details: { statusCode: 200, bodyExcerpt: 'tls ok' },
    });
    expect(lax.body.details.tlsDaysLeft).toBeGreaterThan(30);
  });
});

describe('monitor, port-monitor', () => {
  it('POST /monitor/test: up on a 3xx it does not follow; down with the http-monitor text', async () => {
    const up = await t.request('POST', '/monitor/test', { token: dev, json: { url: `${site.url}/moved` } });
    expect(up.body).toMatchObject({
      ok: true,
      status: 'up',
      details: { statusCode: 302, headers: { location: '/health' } },
    });
    expect(up.body).not.toHaveProperty('error');
    const port = await closedPort();
    const down = await t.request('POST', '/monitor/test', {
      token: dev,
      json: { url: `http://127.0.0.1:${port}/` },
    });
    expect(down.body).toMatchObject({ ok: false, status: 'down', error: 'connection refused' });
  });

  it('POST /port-monitor creates and checks it; /test reports the address and TLS handshake failures', async () => {
    const c = await makeChannel(t, dev);
    const m = await t.request('POST', '/port-monitor', {
      token: dev,
      json: { appid: c.id, name: 'DB', host: 'monitored.test', port: site.port },
    });
    expect(m.body).toMatchObject({
      kind: 'port-monitor',
      host: 'monitored.test',
      port: site.port,
      tls: false,
      ignoreTlsErrors: false,
    });
    await advance(0);
    expect((await t.request('GET', `/port-monitor/${m.body.id}`, { token: dev })).body.status).toBe('up');
    const test = await t.request('POST', '/port-monitor/test', {
      token: dev,
      json: { host: '127.0.0.1', port: secure.port, tls: true },
    });
    expect(test.body).toMatchObject({ ok: false, error: 'TLS handshake failed: self-signed certificate' });
    const ok = await t.request('POST', '/port-monitor/test', {
      token: dev,
      json: { host: '127.0.0.1', port: secure.port, tls: true, ignoreTlsErrors: true },
    });
    expect(ok.body).toMatchObject({ ok: true, details: { address: '127.0.0.1' } });
    const bad = await t.request('POST', '/port-monitor', {
      token: dev,
      json: { appid: c.id, name: 'x', host: 'h.test', port: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('port: must be between 1 and 65535');
  });
});

describe('workflow-monitor', () => {
  const steps = () => [
    {
      name: 'Login',
      method: 'POST',
      url: '{{base}}/login',
      headers: { 'Content-Type': 'application/json' },
      body: '{"user":"{{user}}"}',
      extract: [{ var: 'authToken', from: 'json', path: '$.token' }],
    },
    {
      name: 'Me',
      url: '{{base}}/me',
      headers: { Authorization: 'Bearer {{authToken}}' },
      assert: { bodyContains: 'ann' },
    },
  ];

  it('POST /workflow-monitor/test runs the steps with variables and extracts', async () => {
    const res = await t.request('POST', '/workflow-monitor/test', {
      token: dev,
      json: { variables: { base: site.url, user: 'ann' }, steps: steps() },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      status: 'up',
      details: {
        steps: [
          { name: 'Login', ok: true, statusCode: 200, extracted: { authToken: '********' } },
          { name: 'Me', ok: true, statusCode: 200, extracted: {} },
        ],
      },
    });
    const [a, b] = res.body.details.steps;
    expect(res.body.responseTimeMs).toBe(a.responseTimeMs + b.responseTimeMs);
  });

  it('a stored workflow goes down with `step {n} "{name}": …`; check-now answers with the details', async () => {
    const c = await makeChannel(t, dev);
    const m = await t.request('POST', '/workflow-monitor', {
      token: dev,
      json: {
        appid: c.id,
        name: 'Flow',
        variables: { base: site.url, user: 'bob', apiSecret: 'x1' },
        steps: steps(),
      },
    });
    expect(m.status).toBe(200);
    expect(m.body.variables).toEqual({ base: site.url, user: 'bob', apiSecret: '********' });
    expect(m.body.steps[1]).toMatchObject({ name: 'Me', method: 'GET', expectedStatus: ['200-299'] });
    await advance(0);
    expect((await t.request('GET', `/workflow-monitor/${m.body.id}`, { token: dev })).body).toMatchObject({
      status: 'down',
      lastError: 'step 1 "Login": status 403 not in 200-299',
    });
    expect(titles(c.id)).toEqual([
      `Flow is down | {{base}}/login: step 1 "Login": status 403 not in 200-299`,
    ]);
    // Fixed by a partial update that keeps the masked secret variable.
    const put = await t.request('PUT', `/workflow-monitor/${m.body.id}`, {
      token: dev,
      json: { variables: { ...m.body.variables, user: 'ann' } },
    });
    expect(put.body.variables).toEqual({ base: site.url, user: 'ann', apiSecret: '********' });
    const now = await t.request('POST', `/workflow-monitor/${m.body.id}/check-now`, { token: dev, json: {} });
    expect(now.body).toMatchObject({
      ok: true,
      status: 'up',
      details: { steps: [{ ok: true }, { ok: true }] },
    });
  });

  it('POST /workflow-monitor answers nested field paths', async () => {
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/workflow-monitor', {
      token: dev,
      json: { appid: c.id, name: 'x', steps: [{ url: site.url }, { url: site.url }, { method: 'GET' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('steps[2].url: required');
  });
});

describe('POST /workflow-monitor/build-step', () => {
  it('turns a curl command line into a step', async () => {
    const res = await t.request('POST', '/workflow-monitor/build-step', {
      token: dev,
      json: {
        curl: `curl -L -X POST 'https://api.test/v1/login' -H 'Content-Type: application/json' -d '{"u":"ann"}'`,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      step: {
        name: 'POST api.test/v1/login',
        method: 'POST',
        url: 'https://api.test/v1/login',
        headers: { 'Content-Type': 'application/json' },
        body: '{"u":"ann"}',
        basicAuth: null,
        expectedStatus: ['200-299'],
        followRedirects: true,
        ignoreTlsErrors: false,
        assert: { maxResponseMs: null, bodyContains: null, bodyNotContains: null, json: [] },
        extract: [],
      },
    });
  });

  it('takes the first URL of a description; 400 `curl: no URL found` when nothing is usable', async () => {
    const desc = await t.request('POST', '/workflow-monitor/build-step', {
      token: dev,
      json: { description: 'open https://shop.test/cart and check it' },
    });
    expect(desc.body.step).toMatchObject({ method: 'GET', url: 'https://shop.test/cart' });
    for (const json of [{ curl: 'curl -s' }, { description: 'no link' }, {}]) {
      const res = await t.request('POST', '/workflow-monitor/build-step', { token: dev, json });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toBe('curl: no URL found');
    }
    const wrong = await t.request('POST', '/workflow-monitor/build-step', { token: dev, json: { curl: 7 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errorDescription).toMatch(/^curl: /);
  });

  it('takes a device or write API token; a read-only API token is 403 and no token 401', async () => {
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    const body = { json: { curl: 'curl https://a.test' } };
    expect(
      (await t.request('POST', '/workflow-monitor/build-step', { token: read.token, ...body })).status,
    ).toBe(403);
    expect((await t.request('POST', '/workflow-monitor/build-step', body)).status).toBe(401);
    const write = await apiToken(t, { token: dev });
    expect(
      (await t.request('POST', '/workflow-monitor/build-step', { token: write.token, ...body })).status,
    ).toBe(200);
  });
});

describe('BELFRY_BLOCK_PRIVATE_TARGETS', () => {
  it('refuses loopback targets for a non-admin, not for an administrator', async () => {
    const blocked = await startTestServer({ config: { blockPrivateTargets: true } });
    try {
      const admin = (await deviceToken(blocked)).token;
      const user = (await deviceToken(blocked, makeUser(blocked))).token;
      const json = { url: `${site.url}/health` };
      const asUser = await blocked.request('POST', '/http-monitor/test', { token: user, json });
      expect(asUser.body).toMatchObject({ ok: false, error: 'private address refused' });
      const port = await blocked.request('POST', '/port-monitor/test', {
        token: user,
        json: { host: '127.0.0.1', port: site.port },
      });
      expect(port.body).toMatchObject({ ok: false, error: 'private address refused' });
      const asAdmin = await blocked.request('POST', '/http-monitor/test', { token: admin, json });
      expect(asAdmin.body).toMatchObject({ ok: true, status: 'up' });
    } finally {
      await blocked.close();
    }
  });
});

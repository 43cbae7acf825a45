import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CHROMIUM } from '../../server/lib/chromium';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

const SHOP = `<!doctype html><html><body><div id="__next">
  <h1 class="title css-9f8e7d">Desk Lamp</h1>
  <section class="Price_box__a1B2c"><span data-testid="price" class="font-bold">€ 1,299.00</span></section>
  <ul class="stock"><li>Berlin: 3</li><li>Hamburg: sold out</li></ul>
</div></body></html>`;

let t: TestServer;
let dev: string;
let site: FakeTarget;
/** What `/watched` serves: the test changes it between checks. */
let watched = '<p class="version">Version 1.4.1</p>';

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  site = await startTarget((req, res) => {
    if (req.url === '/scripted') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(
        '<div id="out">loading</div><script>document.getElementById("out").textContent = "ready: " + 6 * 7</script>',
      );
    } else if (req.url === '/watched') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<html><body><main>${watched}</main></body></html>`);
    } else if (req.url === '/shop') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(SHOP);
    } else {
      res.writeHead(500, { 'Content-Type': 'text/html' });
      res.end('<p>oops</p>');
    }
  });
});
afterAll(async () => {
  await site.close();
  await t.close();
});

function post(path: string, json: unknown, token = dev) {
  return t.request('POST', path, { token, json });
}

describe('POST /content-monitor/suggest-selector', () => {
  it('suggest-selector answers verified selectors, stable ones first, when the page contains the text', async () => {
    const res = await post('/content-monitor/suggest-selector', { url: `${site.url}/shop`, text: '1,299' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      candidates: [
        { selector: '[data-testid="price"]', text: '€ 1,299.00', count: 1 },
        { selector: '#__next > section > span', text: '€ 1,299.00', count: 1 },
      ],
    });
    const li = await post('/content-monitor/suggest-selector', { url: `${site.url}/shop`, text: 'HAMBURG' });
    expect(li.body.candidates[0]).toEqual({
      selector: 'ul.stock > li:nth-of-type(2)',
      text: 'Hamburg: sold out',
      count: 1,
    });
  });

  it('suggest-selector answers no candidates with the fetch error when the page cannot be fetched', async () => {
    const port = await closedPort();
    const refused = await post('/content-monitor/suggest-selector', {
      url: `http://127.0.0.1:${port}/`,
      text: 'x',
    });
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ candidates: [], error: 'connection refused' });
    const failing = await post('/content-monitor/suggest-selector', {
      url: `${site.url}/broken`,
      text: 'oops',
    });
    expect(failing.body).toEqual({ candidates: [], error: 'status 500 not in 200-299' });
    const absent = await post('/content-monitor/suggest-selector', {
      url: `${site.url}/shop`,
      text: 'not there',
    });
    expect(absent.body).toEqual({ candidates: [] });
  });

  it('suggest-selector answers 400 naming the field when the body is bad', async () => {
    const cases: [unknown, string][] = [
      [{ url: `${site.url}/shop` }, 'text: Invalid input: expected string, received undefined'],
      [{ url: `${site.url}/shop`, text: '   ' }, 'text: required'],
      [{ text: 'x' }, 'url: required'],
      [{ url: 'file:///etc/passwd', text: 'x' }, 'url: must be an http or https URL'],
      [{ url: `${site.url}/shop`, text: 'x', render: 'pdf' }, 'render: must be html or browser'],
    ];
    for (const [json, error] of cases) {
      const res = await post('/content-monitor/suggest-selector', json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription).toBe(error);
    }
  });

  it('suggest-selector answers 403 to a read-only API token and 401 without credentials', async () => {
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    expect(
      (await post('/content-monitor/suggest-selector', { url: `${site.url}/shop`, text: 'x' }, read.token))
        .status,
    ).toBe(403);
    const write = await apiToken(t, { token: dev }, { access: 'write' });
    expect(
      (
        await post(
          '/content-monitor/suggest-selector',
          { url: `${site.url}/shop`, text: 'lamp' },
          write.token,
        )
      ).status,
    ).toBe(200);
    const anon = await t.request('POST', '/content-monitor/suggest-selector', {
      json: { url: `${site.url}/shop`, text: 'x' },
    });
    expect(anon.status).toBe(401);
  });
});

describe('POST /content-monitor/test-rule', () => {
  it('test-rule runs a rule on a fetched page or on html sent, saving nothing', async () => {
    const url = `${site.url}/shop`;
    expect(
      (
        await post('/content-monitor/test-rule', {
          url,
          selector: '[data-testid=price]',
          rule: 'numberBelow',
          value: 1500,
        })
      ).body,
    ).toEqual({
      ok: true,
      text: '€ 1,299.00',
      number: 1299,
      matched: 1,
    });
    expect(
      (
        await post('/content-monitor/test-rule', {
          url,
          selector: '.stock li',
          rule: 'notContains',
          value: 'sold out',
        })
      ).body,
    ).toEqual({
      ok: false,
      text: 'Berlin: 3\nHamburg: sold out',
      number: 3,
      matched: 2,
      error: 'text contains "sold out"',
    });
    expect(
      (
        await post('/content-monitor/test-rule', {
          html: '<b>v2.1</b>',
          selector: 'b',
          rule: 'matches',
          value: '/^V\\d/i',
        })
      ).body,
    ).toEqual({
      ok: true,
      text: 'v2.1',
      number: 2.1,
      matched: 1,
    });
    expect(
      (
        await post('/content-monitor/test-rule', {
          html: '<b>x</b>',
          selector: 'i',
          rule: 'contains',
          value: 'x',
        })
      ).body,
    ).toEqual({
      ok: false,
      text: '',
      matched: 0,
      error: 'selector matched nothing',
    });
  });

  it('test-rule changed is ok when the text differs from previous, or without previous', async () => {
    const html = '<p class="v">1.4.2</p>';
    const run = (previous?: string) =>
      post('/content-monitor/test-rule', { html, selector: 'p.v', rule: 'changed', previous });
    expect((await run()).body).toEqual({ ok: true, text: '1.4.2', number: 1.4, matched: 1 });
    expect((await run('1.4.1')).body).toEqual({ ok: true, text: '1.4.2', number: 1.4, matched: 1 });
    expect((await run('1.4.2')).body).toEqual({
      ok: false,
      text: '1.4.2',
      number: 1.4,
      matched: 1,
      error: 'text has not changed',
    });
  });

  it.skipIf(!existsSync(SYSTEM_CHROMIUM))(
    'test-rule with render browser reads the text a script wrote',
    async () => {
      const body = { url: `${site.url}/scripted`, selector: '#out', rule: 'numberAbove', value: 40 };
      expect((await post('/content-monitor/test-rule', body)).body).toEqual({
        ok: false,
        text: 'loading',
        matched: 1,
        error: 'no number in "loading"',
      });
      expect((await post('/content-monitor/test-rule', { ...body, render: 'browser' })).body).toEqual({
        ok: true,
        text: 'ready: 42',
        number: 42,
        matched: 1,
      });
      const suggested = await post('/content-monitor/suggest-selector', {
        url: body.url,
        text: 'ready',
        render: 'browser',
      });
      expect(suggested.body).toEqual({
        candidates: [
          { selector: '#out', text: 'ready: 42', count: 1 },
          { selector: 'body > div', text: 'ready: 42', count: 1 },
        ],
      });
    },
    60_000,
  );

  it('test-rule answers the fetch error in the body when the page cannot be fetched', async () => {
    const res = await post('/content-monitor/test-rule', {
      url: `http://127.0.0.1:${await closedPort()}/`,
      selector: 'p',
      rule: 'changed',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: false, text: '', matched: 0, error: 'connection refused' });
  });

  it('test-rule answers 400 naming the field when the body is bad', async () => {
    const cases: [unknown, RegExp][] = [
      [{ html: '<p></p>', rule: 'changed' }, /^selector: required$/],
      [{ html: '<p></p>', selector: 'p[', rule: 'changed' }, /^selector: invalid CSS selector/],
      [{ html: '<p></p>', selector: 'p', rule: 'equals' }, /^rule: must be one of changed, contains/],
      [{ html: '<p></p>', selector: 'p', rule: 'contains' }, /^value: required for rule contains$/],
      [
        { html: '<p></p>', selector: 'p', rule: 'matches', value: '/(/' },
        /^value: invalid regular expression/,
      ],
      [{ html: '<p></p>', selector: 'p', rule: 'numberAbove', value: 'ten' }, /^value: must be a number$/],
      [{ selector: 'p', rule: 'changed' }, /^url: required \(or html\)$/],
      [{ url: 'javascript:alert(1)', selector: 'p', rule: 'changed' }, /^url: must be an http or https URL$/],
      [{ html: 42, selector: 'p', rule: 'changed' }, /^html: /],
    ];
    for (const [json, error] of cases) {
      const res = await post('/content-monitor/test-rule', json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription, JSON.stringify(json)).toMatch(error);
    }
  });
});

describe('assisted endpoints with BELFRY_BLOCK_PRIVATE_TARGETS', () => {
  it('suggest-selector refuses a loopback page to a non-admin and fetches it for an administrator', async () => {
    const blocked = await startTestServer({ config: { blockPrivateTargets: true } });
    try {
      const admin = (await deviceToken(blocked)).token;
      const user = (await deviceToken(blocked, makeUser(blocked))).token;
      const body = { url: `${site.url}/shop`, text: 'desk lamp' };
      const asUser = await blocked.request('POST', '/content-monitor/suggest-selector', {
        token: user,
        json: body,
      });
      expect(asUser.body).toEqual({ candidates: [], error: 'private address refused' });
      const asAdmin = await blocked.request('POST', '/content-monitor/suggest-selector', {
        token: admin,
        json: body,
      });
      expect(asAdmin.body.candidates[0]).toEqual({ selector: 'h1.title', text: 'Desk Lamp', count: 1 });
    } finally {
      await blocked.close();
    }
  });
});

const SEC = 1000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Moves the ManualClock and lets the one timer run what became due, checks included. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

function messagesOf(appid: number) {
  return t.server.ctx.db
    .all<{ title: string; message: string; priority: number; extras: string; sender_name: string }>(
      'SELECT title, message, priority, extras, sender_name FROM messages WHERE channel_id = ? ORDER BY id',
      [appid],
    )
    .map((m) => ({ ...m, extras: JSON.parse(m.extras) }));
}

describe('content monitors on the engine', () => {
  it('POST /content-monitor stores a baseline at the first check and sends a changed message when the text changes', async () => {
    watched = '<p class="version">Version 1.4.1</p>';
    const c = await makeChannel(t, dev);
    const url = `${site.url}/watched`;
    const res = await post('/content-monitor', { appid: c.id, name: 'Release', url, selector: 'p.version' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'content-monitor',
      status: 'pending',
      url,
      selector: 'p.version',
      rule: 'changed',
      value: null,
      render: 'html',
      lastValue: null,
      lastChangedAt: null,
    });
    const id = res.body.id as number;
    await t.server.scheduler.tick();
    const first = (await t.request('GET', `/content-monitor/${id}`, { token: dev })).body;
    expect(first).toMatchObject({
      status: 'up',
      lastValue: 'Version 1.4.1',
      lastChangedAt: null,
      lastError: null,
    });
    expect(messagesOf(c.id)).toEqual([]); // the baseline sends nothing

    await advance(60 * SEC);
    expect(messagesOf(c.id)).toEqual([]); // same text

    watched = '<p class="version">Version 1.5.0</p>';
    await advance(60 * SEC);
    const changedAt = t.clock.now();
    expect(messagesOf(c.id)).toEqual([
      {
        title: 'Release changed',
        message: 'Version 1.4.1\n→\nVersion 1.5.0',
        priority: 8,
        sender_name: 'Release',
        extras: { 'service::source': { kind: 'content-monitor', id, event: 'changed' } },
      },
    ]);
    expect((await t.request('GET', `/content-monitor/${id}`, { token: dev })).body).toMatchObject({
      status: 'up',
      lastValue: 'Version 1.5.0',
      lastChangedAt: iso(changedAt),
    });
    await advance(60 * SEC);
    expect(messagesOf(c.id)).toHaveLength(1);
  });

  it("a content rule that fails takes the monitor down with the rule's error text, and check-now answers the details", async () => {
    watched = '<p class="version">Version 1.4.1</p><p class="stock">Sold out</p>';
    const c = await makeChannel(t, dev);
    const url = `${site.url}/watched`;
    const res = await post('/content-monitor', {
      appid: c.id,
      name: 'Lamp',
      url,
      selector: '.stock',
      rule: 'contains',
      value: 'In stock',
    });
    await t.server.scheduler.tick();
    expect((await t.request('GET', `/content-monitor/${res.body.id}`, { token: dev })).body).toMatchObject({
      status: 'down',
      lastError: 'text does not contain "In stock"',
      lastValue: 'Sold out',
    });
    expect(messagesOf(c.id).map((m) => [m.title, m.message])).toEqual([
      ['Lamp is down', `${url}: text does not contain "In stock"`],
    ]);
    watched = '<p class="stock">In stock: 4</p>';
    const now = await post(`/content-monitor/${res.body.id}/check-now`, {});
    expect(now.body).toEqual({
      ok: true,
      status: 'up',
      responseTimeMs: expect.any(Number),
      details: { text: 'In stock: 4', number: 4, matched: 1 },
    });
    expect(messagesOf(c.id).map((m) => m.title)).toEqual(['Lamp is down', 'Lamp is up again']);
  });

  it('POST /content-monitor answers 400 for a bad selector, rule or value and saves nothing', async () => {
    const c = await makeChannel(t, dev);
    const base = { appid: c.id, name: 'x', url: `${site.url}/watched`, selector: 'p' };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ selector: 'p:frob' }, /^selector: invalid CSS selector/],
      [{ selector: undefined }, /^selector: required$/],
      [{ url: 'ftp://example.com/' }, /^url: must be an http or https URL$/],
      [{ rule: 'numberAbove', value: 'many' }, /^value: must be a number$/],
      [{ rule: 'matches', value: '/[/' }, /^value: invalid regular expression/],
      [{ render: 'pdf' }, /^render: must be html or browser$/],
    ];
    for (const [over, error] of cases) {
      const r = await post('/content-monitor', { ...base, ...over });
      expect(r.status, JSON.stringify(over)).toBe(400);
      expect(r.body.errorDescription).toMatch(error);
    }
    expect((await t.request('GET', `/content-monitor?appid=${c.id}`, { token: dev })).body).toEqual([]);
  });

  it('PUT /content-monitor/{id} with a new selector starts a new baseline instead of reporting a change', async () => {
    watched = '<p class="version">Version 2</p><p class="date">May 1</p>';
    const c = await makeChannel(t, dev);
    const res = await post('/content-monitor', {
      appid: c.id,
      name: 'Docs',
      url: `${site.url}/watched`,
      selector: '.version',
    });
    await t.server.scheduler.tick();
    const put = await t.request('PUT', `/content-monitor/${res.body.id}`, {
      token: dev,
      json: { selector: '.date' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ selector: '.date', rule: 'changed', url: `${site.url}/watched` });
    await t.server.scheduler.tick();
    expect((await t.request('GET', `/content-monitor/${res.body.id}`, { token: dev })).body).toMatchObject({
      status: 'up',
      lastValue: 'May 1',
    });
    expect(messagesOf(c.id)).toEqual([]);
  });

  it('a browser-rendered content monitor is unknown, with no message, when there is no Chromium', async () => {
    const bare = await startTestServer({ config: { chromiumPath: '/nonexistent/chromium' } });
    try {
      const token = (await deviceToken(bare)).token;
      const c = await makeChannel(bare, token);
      const res = await bare.request('POST', '/content-monitor', {
        token,
        json: { appid: c.id, name: 'Rendered', url: `${site.url}/watched`, selector: 'p', render: 'browser' },
      });
      expect(res.status).toBe(200);
      await bare.server.scheduler.tick();
      expect((await bare.request('GET', `/content-monitor/${res.body.id}`, { token })).body).toMatchObject({
        status: 'unknown',
        lastError: 'no Chromium available (set BELFRY_CHROMIUM_PATH)',
        consecutiveFailures: 0,
      });
      expect(
        bare.server.ctx.db.first('SELECT COUNT(*) AS n FROM messages WHERE channel_id = ?', [c.id]),
      ).toEqual({ n: 0 });
    } finally {
      await bare.close();
    }
  });
});

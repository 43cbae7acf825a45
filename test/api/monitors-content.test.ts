import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Feature } from '../../server/features/index';
import { monitorKind } from '../../server/features/monitors/kind';
import { contentMonitor } from '../../server/features/monitors/kinds/content';
import { RouteTable } from '../../server/http/routes';
import { SYSTEM_CHROMIUM } from '../../server/lib/chromium';
import { apiToken, deviceToken, makeUser } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The content kind's assisted routes, mounted as the monitors engine mounts a kind's routes() — only
 * when the engine has not registered the kind itself (then its own mount serves them).
 */
const assistedRoutes: Feature = {
  name: 'content-monitor-assisted (test)',
  routes: (ctx) => {
    const t = new RouteTable(ctx, 'content-monitor');
    if (!monitorKind(ctx, 'content-monitor')) contentMonitor.routes!(t, ctx);
    return t;
  },
};

const SHOP = `<!doctype html><html><body><div id="__next">
  <h1 class="title css-9f8e7d">Desk Lamp</h1>
  <section class="Price_box__a1B2c"><span data-testid="price" class="font-bold">€ 1,299.00</span></section>
  <ul class="stock"><li>Berlin: 3</li><li>Hamburg: sold out</li></ul>
</div></body></html>`;

let t: TestServer;
let dev: string;
let site: FakeTarget;

beforeAll(async () => {
  t = await startTestServer({ extraFeatures: [assistedRoutes] });
  dev = (await deviceToken(t)).token;
  site = await startTarget((req, res) => {
    if (req.url === '/scripted') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(
        '<div id="out">loading</div><script>document.getElementById("out").textContent = "ready: " + 6 * 7</script>',
      );
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
    const blocked = await startTestServer({
      config: { blockPrivateTargets: true },
      extraFeatures: [assistedRoutes],
    });
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

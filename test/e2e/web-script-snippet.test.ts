import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Request as PwRequest } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { type BrowserHandle, hasChromium, launchBrowser } from './browser';

/**
 * The web-script snippet in real Chromium (issue 18, §9.1): a shop page on its own 127.0.0.1 origin embeds
 * the snippet from the real server; a click that throws, an unhandled rejection, a navigation, a failing
 * fetch and console output arrive as issues with their breadcrumbs and flush reasons. Time moves with
 * Playwright's page.clock; the test waits only for the snippet's requests.
 */

const APP_JS = `
function checkoutTotal(cart) {
  return cart.total.amount;
}
document.getElementById('pay').addEventListener('click', function onPay() {
  checkoutTotal({});
});
document.getElementById('reject').addEventListener('click', function () {
  Promise.reject(new Error('payment provider timed out after 3000 ms'));
});
document.getElementById('go').addEventListener('click', function () {
  history.pushState({}, '', '/checkout?step=2');
});
document.getElementById('xhr').addEventListener('click', function () {
  var x = new XMLHttpRequest();
  x.open('POST', '/api/items?draft=1');
  x.onloadend = function () { document.title = 'xhr ' + x.status; };
  x.send('{}');
});
document.getElementById('load').addEventListener('click', function () {
  fetch('/api/items?page=3&secret=x').then(function (r) { document.title = 'loaded ' + r.status; });
});
`;

function page(snippetUrl: string): string {
  return `<!doctype html><html><head><title>shop</title>
<script src="${snippetUrl}" data-release="shop@3.1.0"></script></head>
<body><button id="go">Checkout</button><button id="load">Load items</button>
<button id="xhr">Save draft</button><button id="pay" class="btn primary">Pay now</button><button id="reject">Reject</button>
<script src="/app.js"></script></body></html>`;
}

describe.skipIf(!hasChromium)('web-script snippet in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let shop: Server;
  let shopOrigin: string;
  let dev: string;
  let script: { id: number; token: string; url: string };
  let tab: Page;

  beforeAll(async () => {
    t = await startTestServer();
    dev = (await deviceToken(t)).token;
    shop = createServer((req, res) => {
      if (req.url === '/app.js') {
        res.writeHead(200, { 'Content-Type': 'application/javascript' });
        res.end(APP_JS);
      } else if (req.url?.startsWith('/api/items')) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end('{"error":"boom"}');
      } else {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end(page(script.url));
      }
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/web-script', {
      token: dev,
      json: { appid: c.id, name: 'shop', allowedOrigins: [shopOrigin] },
    });
    script = res.body;
    b = await launchBrowser();
    tab = (await b.newPage()).page;
    await tab.clock.install();
  }, 60_000);

  afterAll(async () => {
    await b?.close();
    await new Promise((resolve) => shop?.close(resolve));
    await t?.close();
  });

  const isBatch = (r: PwRequest) => r.url() === script.url && r.method() === 'POST';

  /** Runs `act`, then waits for the snippet's next POST and its answer; returns the batch it sent. */
  async function batchAfter(act: () => Promise<unknown>) {
    const req = tab.waitForRequest(isBatch);
    await act();
    const r = await req;
    const res = await r.response();
    expect(res?.status()).toBe(200);
    expect(res?.headers()['access-control-allow-origin']).toBe(shopOrigin);
    return { body: JSON.parse(r.postData() ?? '{}'), answer: await res!.json() };
  }

  it('loads from the server and exposes window.Belfry', async () => {
    const loaded = tab.waitForResponse((r) => r.url() === script.url && r.request().method() === 'GET');
    await tab.goto(shopOrigin);
    expect((await loaded).status()).toBe(200);
    expect(await tab.evaluate(() => Object.keys((window as any).Belfry).sort())).toEqual([
      'capture',
      'flush',
      'setRelease',
    ]);
  });

  it('a click that throws is sent 1 s later with the clicks, navigation, fetch and console before it', async () => {
    await tab.click('#go');
    const fetched = tab.waitForResponse((r) => r.url().includes('/api/items'));
    await tab.click('#load');
    await fetched;
    await tab.waitForFunction(() => document.title === 'loaded 500');
    await tab.click('#xhr');
    await tab.waitForFunction(() => document.title === 'xhr 500');
    await tab.evaluate(() => console.warn('stock low', { sku: 'A-1' }));
    await tab.click('#pay');
    const { body, answer } = await batchAfter(() => tab.clock.runFor(1000));
    expect(answer).toEqual({ accepted: 1 });
    expect(body.flushReason).toBe('error');
    expect(body.release).toBe('shop@3.1.0');
    const ev = body.events[0];
    expect(ev).toMatchObject({
      type: 'error',
      message: "TypeError: Cannot read properties of undefined (reading 'amount')",
      url: `${shopOrigin}/checkout?step=2`,
      release: 'shop@3.1.0',
    });
    expect(ev.stack).toContain(`at checkoutTotal (${shopOrigin}/app.js:3:21)`);

    const issues = (await t.request('GET', `/web-script/${script.id}/issues`, { token: dev })).body;
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      title: "TypeError: Cannot read properties of undefined (reading 'amount')",
      culprit: `checkoutTotal (${shopOrigin}/app.js:3:21)`,
      type: 'error',
      count: 1,
      lastRelease: 'shop@3.1.0',
    });
    const crumbs = (
      await t.request('GET', `/web-script/${script.id}/issues/${issues[0].id}/breadcrumbs`, { token: dev })
    ).body.breadcrumbs.map((c: { type: string; message: string }) => [c.type, c.message]);
    expect(crumbs).toEqual([
      ['click', 'button#go "Checkout"'],
      ['navigation', `${shopOrigin}/ -> ${shopOrigin}/checkout`],
      ['click', 'button#load "Load items"'],
      ['fetch', 'GET /api/items 500'],
      ['click', 'button#xhr "Save draft"'],
      ['xhr', 'POST /api/items 500'],
      ['console', 'warn: stock low {"sku":"A-1"}'],
      ['click', 'button#pay "Pay now"'],
    ]);
  });

  it('an unhandled rejection arrives as its own issue', async () => {
    await tab.click('#reject');
    const { body } = await batchAfter(() => tab.clock.runFor(1000));
    expect(body.flushReason).toBe('error');
    expect(body.events[0]).toMatchObject({
      type: 'rejection',
      message: 'Error: payment provider timed out after 3000 ms',
    });
    const issues = (await t.request('GET', `/web-script/${script.id}/issues`, { token: dev })).body;
    expect(issues.map((i: { type: string }) => i.type).sort()).toEqual(['error', 'rejection']);
  });

  it('Belfry.capture waits for the 5 s interval; 20 queued events flush at once', async () => {
    await tab.evaluate(() => {
      (window as any).Belfry.setRelease('shop@3.2.0');
      (window as any).Belfry.capture('checkout opened');
    });
    const { body } = await batchAfter(() => tab.clock.runFor(5000));
    expect(body.flushReason).toBe('interval');
    expect([body.release, body.events[0].release]).toEqual(['shop@3.2.0', 'shop@3.2.0']);
    expect(body.events.map((e: { message: string }) => e.message)).toEqual(['checkout opened']);
    const size = await batchAfter(() =>
      tab.evaluate(() => {
        for (let i = 0; i < 20; i++) (window as any).Belfry.capture(`step ${i}`);
      }),
    );
    expect(size.body.flushReason).toBe('size');
    expect(size.body.events).toHaveLength(20);
  });

  it('a hidden page sends what is queued with sendBeacon (unload)', async () => {
    await tab.evaluate(() => (window as any).Belfry.capture('leaving'));
    const req = tab.waitForRequest(isBatch);
    await tab.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const r = await req;
    // A beacon's answer is not the page's to read: the server's counters show it arrived.
    expect(r.resourceType()).toBe('ping');
    await expect
      .poll(
        async () =>
          (await t.request('GET', `/web-script/${script.id}/flush-stats`, { token: dev })).body.reasons,
      )
      .toEqual({ interval: 1, size: 1, unload: 1, error: 2, ping: 0 });
    const series = (await t.request('GET', `/web-script/${script.id}/series`, { token: dev })).body;
    const sum = (k: string) => series.points.reduce((a: number, p: Record<string, number>) => a + p[k]!, 0);
    expect([sum('loads'), sum('batches'), sum('events')]).toEqual([1, 5, 24]);
    const all = (await t.request('GET', `/web-script/${script.id}/issues`, { token: dev })).body;
    expect(all.some((i: { title: string }) => i.title === 'leaving')).toBe(true);
  });

  it('sends at most 100 events a page a minute and never throws into the page', async () => {
    await tab.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
    });
    // 24 events were sent this minute already: 76 more pass, the rest are dropped.
    const sent: number[] = [];
    const onReq = (r: PwRequest) => {
      if (isBatch(r)) sent.push(JSON.parse(r.postData() ?? '{}').events.length);
    };
    tab.on('request', onReq);
    const last = tab.waitForRequest(
      (r) => isBatch(r) && JSON.parse(r.postData() ?? '{}').flushReason === 'interval',
    );
    const threw = await tab.evaluate(() => {
      try {
        for (let i = 0; i < 150; i++) (window as any).Belfry.capture(`burst ${i}`);
        (window as any).Belfry.capture({ toString: null });
        return false;
      } catch {
        return true;
      }
    });
    await tab.clock.runFor(5000);
    await last;
    tab.off('request', onReq);
    expect(threw).toBe(false);
    expect(sent.reduce((a, n) => a + n, 0)).toBe(76);
  });
});

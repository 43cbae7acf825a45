import type { BrowserContext, Page } from 'playwright-core';
import { SourceMapGenerator } from 'source-map';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  axeFindings,
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  signInToInbox,
} from './browser';

const MIN = 60_000;
const HOUR = 60 * MIN;

// What the snippet sends: a Chrome TypeError from a hashed bundle, Firefox's wording of another, a rejection.
const PAGE = 'https://shop.example.com/cart?step=2';
const chromeError = (at: number) => ({
  type: 'error',
  message: "Uncaught TypeError: Cannot read properties of undefined (reading 'map')",
  stack: [
    "TypeError: Cannot read properties of undefined (reading 'map')",
    '    at renderItems (https://shop.example.com/assets/app.3f9a8b7c1d.js:12:3456)',
    '    at HTMLButtonElement.onClick (https://shop.example.com/assets/app.3f9a8b7c1d.js:40:12)',
    '    at Ki (https://cdn.example.net/react-dom.production.min.js:2:64231)',
    '    at Ms (https://cdn.example.net/react-dom.production.min.js:2:112901)',
  ].join('\n'),
  url: PAGE,
  at: new Date(at).toISOString(),
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0',
  breadcrumbs: [
    { at: new Date(at - 4_000).toISOString(), type: 'navigation', message: '/ -> /cart' },
    {
      at: new Date(at - 2_000).toISOString(),
      type: 'fetch',
      message: 'GET https://shop.example.com/api/cart 500',
    },
    { at: new Date(at - 1_000).toISOString(), type: 'click', message: 'button#checkout "Checkout"' },
  ],
});
const firefoxError = (at: number) => ({
  type: 'error',
  message: 'TypeError: cart.total is not a function',
  stack:
    'checkout@https://shop.example.com/assets/cart.js:7:15\n@https://shop.example.com/assets/cart.js:20:3\n',
  url: PAGE,
  at: new Date(at).toISOString(),
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
});
const rejection = (at: number) => ({
  type: 'rejection',
  message: 'TypeError: Failed to fetch',
  url: PAGE,
  at: new Date(at).toISOString(),
});

/**
 * Web scripts end to end (wire-families §9): a script made in the page, its snippet copied, batches
 * POSTed to the snippet's URL over HTTP as the snippet would, the issues with counts and a sparkline,
 * one issue with its culprit, breadcrumbs and the local analysis, resolve → regression → ignore, axe and
 * a phone's width. The server's clock is set near this device's so the charts' windows hold the events.
 */
describe.skipIf(!hasChromium)('web scripts in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  let channel: { id: number };
  const ws: { id?: number; url?: string } = {};
  const token = () => deviceTokenOf(page);
  const send = async (events: unknown[], flushReason = 'error') => {
    const res = await fetch(ws.url!, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ events, flushReason, release: 'shop@1.4.2' }),
    });
    return { status: res.status, body: await res.json() };
  };
  const issueRow = (title: string) =>
    page.getByRole('list', { name: 'Issues' }).getByRole('listitem', { name: title, exact: true });
  const issueTitles = () =>
    page
      .getByRole('list', { name: 'Issues' })
      .getByRole('listitem')
      .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
  const refresh = () => page.getByRole('button', { name: 'Refresh', exact: true }).click();
  const CHROME_TITLE = "Uncaught TypeError: Cannot read properties of undefined (reading 'map')";

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    // The middle of an hour (no event straddles an hour bucket) that is always 10-70 minutes in this device's
    // past: the charts' windows end at the device's now, so a server clock ahead of it (the current hour's
    // :30 before half past) left every event outside them and the test failed before :30 of each hour.
    t.clock.set(Math.floor((Date.now() - 40 * MIN) / HOUR) * HOUR + 30 * MIN);
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Shop' });
    b = await launchBrowser();
    ({ context, page } = await b.newPage());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('creates a script with allowed origins and shows its snippet once, copyable', async () => {
    await page.getByRole('link', { name: 'Web scripts', exact: true }).click();
    await page.getByRole('heading', { name: 'Web scripts', level: 1 }).waitFor();
    await expect.poll(() => page.getByText('No web scripts yet.', { exact: false }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New web script' }).click();
    const form = page.getByRole('form', { name: 'New web script' });
    await form.getByLabel('Name', { exact: true }).fill('Shop front');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Shop' });
    await form
      .getByLabel('Allowed origins', { exact: true })
      .fill('https://shop.example.com\nhttps://www.example.com');
    await form.getByRole('button', { name: 'Create web script' }).click();
    await page.getByRole('heading', { name: 'Shop front', level: 1 }).waitFor();

    const list = (await t.request('GET', '/web-script', { token: await token() })).body as {
      id: number;
      token: string;
    }[];
    expect(list).toMatchObject([
      {
        name: 'Shop front',
        appid: channel.id,
        status: 'pending',
        paused: false,
        priority: 6,
        allowedOrigins: ['https://shop.example.com', 'https://www.example.com'],
        unresolvedCount: 0,
      },
    ]);
    ws.id = list[0]!.id;
    expect(await page.locator('.hb-title .hb-chip').textContent()).toBe('pending');

    const snippet = page.getByLabel('Snippet (shown once)', { exact: true });
    await expect
      .poll(() => snippet.inputValue())
      .toMatch(new RegExp(`^<script src="${t.url}/script/T[A-Za-z0-9]+" async></script>$`));
    await page.getByRole('button', { name: 'Copy Snippet (shown once)' }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await snippet.inputValue());
    ws.url = /src="([^"]+)"/.exec(copied)![1]!;
    // The list answers the masked token; the page had the full one from the create answer.
    expect(ws.url).not.toContain(list[0]!.token);
    expect(await page.getByLabel('Snippet with a release', { exact: true }).inputValue()).toBe(
      `<script src="${ws.url}" data-release="1.4.2" async></script>`,
    );
    expect(
      await page.getByLabel('Capture a message or a caught error', { exact: true }).inputValue(),
    ).toContain('window.Belfry.capture(');
    // The snippet itself is served at that URL.
    const js = await fetch(ws.url);
    expect([js.status, js.headers.get('content-type')]).toEqual([
      200,
      'application/javascript; charset=utf-8',
    ]);
    await screenshot(page, 'web-scripts-new');
  });

  it('groups posted Chrome, Firefox and rejection events into issues with counts', async () => {
    const now = t.clock.now();
    expect(await send([chromeError(now - 3_000), firefoxError(now - 2_000), rejection(now - 1_000)])).toEqual(
      {
        status: 200,
        body: { accepted: 3 },
      },
    );
    // The same Chrome error from another build of the bundle: one issue, two events.
    const again = chromeError(now);
    again.stack = again.stack.replaceAll('app.3f9a8b7c1d.js', 'app.0b1c2d3e4f.js');
    expect(await send([again], 'interval')).toEqual({ status: 200, body: { accepted: 1 } });

    await refresh();
    await expect
      .poll(issueTitles)
      .toEqual([CHROME_TITLE, 'TypeError: Failed to fetch', 'TypeError: cart.total is not a function']);
    const chrome = issueRow(CHROME_TITLE);
    expect(await chrome.locator('.ws-count strong').textContent()).toBe('2');
    expect(await chrome.locator('.ws-culprit').textContent()).toBe(
      'renderItems https://shop.example.com/assets/app.3f9a8b7c1d.js:12:3456',
    );
    expect(
      await issueRow('TypeError: cart.total is not a function').locator('.ws-culprit').textContent(),
    ).toBe('checkout https://shop.example.com/assets/cart.js:7:15');
    expect(await issueRow('TypeError: Failed to fetch').locator('.ws-type').textContent()).toBe('rejection');
    // Each row's sparkline: 24 hourly bars, this hour's the only one drawn (the server's clock is mid-hour).
    const bars = chrome.getByRole('img', { name: /events an hour, last 24 hours/ });
    expect(await bars.getAttribute('aria-label')).toBe(
      `${CHROME_TITLE}: events an hour, last 24 hours: 2 in all`,
    );
    expect(await bars.locator('rect').count()).toBe(24);
    expect(await bars.locator('rect.on').count()).toBe(1);
    expect(await bars.locator('rect').nth(23).getAttribute('class')).toBe('on');
    await expect.poll(() => page.locator('.hb-title .hb-chip').textContent()).toBe('issues');
    // The sparkline counts the 4 errors and rejections of this hour.
    await expect
      .poll(() =>
        page.getByRole('img', { name: /^Errors and rejections, last 24 hours/ }).getAttribute('aria-label'),
      )
      .toContain('4 in all, 4 in the last hour');
    // The charts: a batch per POST, the flush reasons.
    const flush = page.getByRole('table', { name: 'Flush reasons' });
    await expect
      .poll(() => flush.getByRole('row').allTextContents())
      .toEqual([
        'ReasonRequestsShare',
        'Every 5 s interval150%',
        '20 events queued size00%',
        'After an error error150%',
        'Page hidden or left unload00%',
        'Pings (no events) ping00%',
      ]);
    await page.getByText('m: last 2 hours', { exact: false }).click();
    await expect
      .poll(() =>
        page
          .getByRole('img', { name: /^Errors, rejections and new issues, last 2 hours/ })
          .getAttribute('aria-label'),
      )
      .toBe('Errors, rejections and new issues, last 2 hours by 1m: 3 errors, 1 rejection, 3 new issues');
    await page.getByRole('link', { name: '← All web scripts' }).click();
    const row = page.getByRole('list', { name: 'Web scripts' }).getByRole('listitem', { name: 'Shop front' });
    await expect.poll(() => row.locator('dd').first().textContent()).toBe('3');
    expect(await row.locator('.hb-chip').textContent()).toBe('issues');
    await screenshot(page, 'web-scripts');
    await row.getByRole('link', { name: 'Shop front' }).click();
    await page.getByRole('heading', { name: 'Shop front', level: 1 }).waitFor();
    await screenshot(page, 'web-scripts-detail');
  });

  it('opens an issue with its source-mapped stack, breadcrumbs and the local analysis', async () => {
    // A source map of the build the latest event came from: line 12, column 3456 is Items.tsx 31:5.
    const g = new SourceMapGenerator({ file: 'app.js' });
    g.addMapping({
      generated: { line: 12, column: 3455 },
      original: { line: 31, column: 4 },
      source: 'webpack://shop/src/cart/Items.tsx',
      name: 'renderItems',
    });
    const form = new FormData();
    form.set('file', new Blob([g.toString()], { type: 'application/json' }), 'app.js.map');
    form.set('url', 'https://shop.example.com/assets/app.0b1c2d3e4f.js');
    expect(
      (await t.request('POST', `/web-script/${ws.id}/sourcemaps`, { token: await token(), body: form }))
        .status,
    ).toBe(200);

    await issueRow(CHROME_TITLE).getByRole('link', { name: CHROME_TITLE }).click();
    await page.getByRole('heading', { name: CHROME_TITLE, level: 1 }).waitFor();
    const stack = page.getByRole('list', { name: 'Stack' });
    const top = stack.locator('> li').first();
    await expect
      .poll(() => top.locator('.mono').first().textContent())
      .toBe('at renderItems webpack://shop/src/cart/Items.tsx:31:5');
    expect(await top.getAttribute('class')).toBe('ws-frame in-app');
    expect(await top.locator('.ws-frame-min').textContent()).toBe(
      'minified: renderItems https://shop.example.com/assets/app.0b1c2d3e4f.js:12:3456',
    );
    expect(await top.getAttribute('title')).toBe(
      'minified: https://shop.example.com/assets/app.0b1c2d3e4f.js:12:3456',
    );
    // No map covers the second frame: shown as printed, still the page's own code.
    expect(await stack.locator('> li').nth(1).textContent()).toBe(
      'at HTMLButtonElement.onClick https://shop.example.com/assets/app.0b1c2d3e4f.js:40:12',
    );
    // React from a CDN: two library frames, folded until asked for.
    const libs = stack.locator('details.ws-libs');
    expect(await libs.locator('summary').textContent()).toBe('2 library frames');
    expect(await libs.locator('.ws-frame').first().isVisible()).toBe(false);
    await libs.locator('summary').click();
    expect(await libs.locator('.ws-frame').allTextContents()).toEqual([
      'at Ki https://cdn.example.net/react-dom.production.min.js:2:64231',
      'at Ms https://cdn.example.net/react-dom.production.min.js:2:112901',
    ]);
    expect(await page.locator('.ws-url').textContent()).toBe(PAGE);
    await expect
      .poll(() => page.getByRole('list', { name: 'Breadcrumbs' }).getByRole('listitem').allTextContents())
      .toEqual([
        expect.stringMatching(/navigation\/ -> \/cart$/),
        expect.stringMatching(/fetchGET https:\/\/shop.example.com\/api\/cart 500$/),
        expect.stringMatching(/click button#checkout "Checkout"$|clickbutton#checkout "Checkout"$/),
        expect.stringMatching(/error.*reading 'map'\)$/),
      ]);
    await page.getByRole('button', { name: 'Analyze', exact: true }).click();
    const analysis = page.locator('.ws-analysis');
    await expect
      .poll(() => analysis.textContent())
      .toContain('read the property "map" of a value that was undefined');
    expect(await analysis.textContent()).toContain('By local');
    expect(
      await analysis.getByRole('list', { name: 'Suggestions' }).getByRole('listitem').count(),
    ).toBeGreaterThan(0);
    // Russian, asked again.
    await page.getByLabel('Language', { exact: true }).selectOption('ru');
    await page.getByRole('button', { name: 'Analyze again' }).click();
    await expect.poll(() => analysis.getAttribute('lang')).toBe('ru');
    expect(await analysis.textContent()).toContain('Код обратился к свойству «map»');
    await screenshot(page, 'web-scripts-issue');
  });

  it('resolves an issue, shows its regression as unresolved, and ignores it', async () => {
    await page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await expect.poll(() => page.locator('.hb-title .ws-status').textContent()).toBe('resolved');
    await page.getByRole('link', { name: '← Shop front' }).click();
    await expect
      .poll(issueTitles)
      .toEqual(['TypeError: Failed to fetch', 'TypeError: cart.total is not a function']);
    await page.getByRole('radio', { name: 'Resolved', exact: true }).check();
    await expect.poll(issueTitles).toEqual([CHROME_TITLE]);

    t.clock.advance(MIN);
    expect(await send([chromeError(t.clock.now())])).toEqual({ status: 200, body: { accepted: 1 } });
    await refresh();
    await expect.poll(issueTitles).toEqual([]);
    await page.getByRole('radio', { name: 'Unresolved', exact: true }).check();
    await expect
      .poll(issueTitles)
      .toEqual([CHROME_TITLE, 'TypeError: Failed to fetch', 'TypeError: cart.total is not a function']);
    expect(await issueRow(CHROME_TITLE).locator('.ws-count strong').textContent()).toBe('3');

    await issueRow(CHROME_TITLE)
      .getByRole('button', { name: `Ignore ${CHROME_TITLE}` })
      .click();
    await expect
      .poll(issueTitles)
      .toEqual(['TypeError: Failed to fetch', 'TypeError: cart.total is not a function']);
    await page.getByRole('radio', { name: 'Ignored', exact: true }).check();
    await expect.poll(issueTitles).toEqual([CHROME_TITLE]);
    // An ignored issue counts silently.
    expect(await send([chromeError(t.clock.now())])).toEqual({ status: 200, body: { accepted: 1 } });
    await refresh();
    await expect.poll(() => issueRow(CHROME_TITLE).locator('.ws-count strong').textContent()).toBe('4');
    const left = (await t.request('GET', `/web-script/${ws.id}/issue-count`, { token: await token() })).body;
    expect(left).toEqual({ unresolved: 2 });
  });

  it('has no axe findings on the list, the script and an issue, and fits a phone', async () => {
    const found: string[] = [];
    for (const phone of [false, true]) {
      const { context: c, page: p } = await b.newPage({ phone });
      if (phone) await p.emulateMedia({ colorScheme: 'dark' });
      await p.goto(t.url);
      await p.evaluate((tok) => localStorage.setItem('belfry.token', tok), await token());
      const where = phone ? 'phone' : 'desktop';
      const check = async (name: string) => {
        await p.waitForLoadState('networkidle');
        for (const f of await axeFindings(p)) found.push(`${where} ${name}: ${f}`);
        const overflow = await p.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(overflow, `${where} ${name}`).toBeLessThanOrEqual(0);
      };
      await p.goto(`${t.url}/web-scripts`);
      await p.getByRole('list', { name: 'Web scripts' }).getByRole('listitem').first().waitFor();
      await check('list');
      await p.getByRole('link', { name: 'Shop front' }).click();
      await p.getByRole('table', { name: 'Flush reasons' }).waitFor();
      await p.getByText('With a release, and capturing your own messages').click();
      await p.getByRole('button', { name: 'Edit', exact: true }).click();
      await p.getByRole('form', { name: 'Edit “Shop front”' }).waitFor();
      await check('script');
      if (phone) await screenshot(p, 'web-scripts-phone');
      await p.getByRole('link', { name: 'TypeError: Failed to fetch' }).click();
      await p.locator('.ws-crumbs').waitFor();
      await check('issue');
      await c.close();
    }
    expect(found).toEqual([]);
  });

  it('uploads, lists and deletes a source map, and rotates the token', async () => {
    await page.goto(`${t.url}/web-scripts?id=${ws.id}`);
    await page.getByRole('heading', { name: 'Shop front', level: 1 }).waitFor();
    const map = JSON.stringify({
      version: 3,
      file: 'cart.js',
      sources: ['src/cart.ts'],
      names: ['checkout'],
      mappings: 'AAAA',
    });
    const form = page.getByRole('form', { name: 'Upload a source map' });
    await form
      .getByLabel('Source map file', { exact: true })
      .setInputFiles({ name: 'cart.js.map', mimeType: 'application/json', buffer: Buffer.from(map) });
    await form
      .getByLabel('Minified file URL', { exact: true })
      .fill('https://shop.example.com/assets/cart.js');
    await form.getByLabel('Release', { exact: true }).fill('shop@1.4.2');
    await form.getByRole('button', { name: 'Upload source map' }).click();
    const maps = page.getByRole('list', { name: 'Source maps' }).getByRole('listitem');
    await expect
      .poll(() => maps.allTextContents())
      .toEqual([
        // The map the issue view's test uploaded, then this one.
        expect.stringMatching(/^https:\/\/shop.example.com\/assets\/app.0b1c2d3e4f.jsany release · /),
        expect.stringMatching(
          /^https:\/\/shop.example.com\/assets\/cart.jsrelease shop@1.4.2 · .* · 1 source · /,
        ),
      ]);
    await maps
      .nth(1)
      .getByRole('button', { name: /^Delete the map of/ })
      .click();
    await expect.poll(() => maps.count()).toBe(1);

    const old = ws.url!;
    await page.getByRole('button', { name: 'New token' }).click();
    const snippet = page.getByLabel('Snippet (shown once)', { exact: true });
    await expect.poll(() => snippet.inputValue()).not.toContain(old);
    expect((await fetch(old)).status).toBe(404);
  });
});

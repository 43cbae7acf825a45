import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOnBattery } from '../../server/lib/power';
import { deviceToken, makeChannel } from '../helpers/factories';
import { type FakeTarget, startTarget } from '../helpers/fake-targets';
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

const SHOP = `<!doctype html><html><head><title>Kettle shop</title></head><body>
<main><h1>Kettle shop</h1>
<label>Search <input id="q" name="q"></label>
<button id="go" onclick="document.getElementById('out').textContent = 'Results for ' + q.value">Search</button>
<p id="out"></p></main></body></html>`;

/** Browser runs take real time in the server's Chromium (launched on first use) on a shared machine. */
const RUN_MS = 60_000;
/** A test that waits for runs or checks in the browser. */
const TEST_MS = 150_000;

/**
 * Browser workflows end to end (docs/api.md "Browser workflows", "Power"): the page builds a workflow in
 * the Monitors form, runs its unsaved steps in the server's real Chromium against a page this test serves
 * on loopback, sees a failing step's error and screenshot, saves it, and finds the down message with its
 * screenshot in the inbox; then the server goes on battery and the Monitors page says so. Steps build on
 * each other.
 */
describe.skipIf(!hasChromium)('browser workflows in Chromium', () => {
  let t: TestServer;
  let site: FakeTarget;
  let b: BrowserHandle;
  let page: Page;
  const wf: { id?: number } = {};
  const token = () => deviceTokenOf(page);
  const form = () => page.getByRole('form', { name: /browser workflow/ });
  /** The run's step table, a row a line: `n | action | result | time`. */
  const stepResults = () =>
    page
      .getByRole('table', { name: 'Step results' })
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent).join(' | ')),
      );
  const pass = async (ms: number) => {
    t.clock.advance(ms);
    await t.server.scheduler.tick();
  };

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    site = await startTarget((req, res) => {
      if ((req.url ?? '/').startsWith('/shop')) {
        res.writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Set-Cookie': 'sid=s-123; Path=/; HttpOnly',
        });
        res.end(SHOP);
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found');
      }
    });
    await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Ops' });
    b = await launchBrowser();
    ({ page } = await b.newPage());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await site?.close();
  });

  it(
    'builds three steps in the form and runs them unsaved: every step ok',
    async () => {
      await page.getByRole('link', { name: 'Monitors', exact: true }).click();
      await page.getByRole('button', { name: 'New monitor' }).click();
      await page.getByRole('link', { name: 'Browser workflow' }).click();
      const f = form();
      await f.getByLabel('Name', { exact: true }).fill('Shop search');
      await f.getByLabel('Channel', { exact: true }).selectOption({ label: 'Ops' });
      // Step 1: the default first step opens a page.
      await f.getByLabel('Step 1 URL').fill(`${site.url}/shop`);
      // Step 2: a secret fill, added with its action.
      await f.getByLabel('Action of the new step').selectOption('fill');
      await f.getByRole('button', { name: 'Add step', exact: true }).click();
      await f.getByLabel('Step 2 selector').fill('#q');
      await f.getByLabel('Step 2 text to type').fill('kettle');
      await f.getByLabel('Secret (a password: stored hidden, never shown again)').check();
      expect(await f.getByLabel('Step 2 text to type').getAttribute('type')).toBe('password');
      // Step 3: from a description (POST /browser-workflow/build-step).
      await f.getByLabel('Describe a step').fill('expect "Kettle shop"');
      await f.getByRole('button', { name: 'Build step from the description' }).click();
      await expect.poll(() => f.getByLabel('Step 3 action').inputValue()).toBe('expectText');
      expect(await f.getByLabel('Step 3 text', { exact: true }).inputValue()).toBe('Kettle shop');

      await f.getByRole('button', { name: 'Run steps now' }).click();
      await expect
        .poll(() => stepResults(), { timeout: RUN_MS })
        .toEqual([
          expect.stringMatching(/^1 \| goto \| ok \| \d+ ms$/),
          expect.stringMatching(/^2 \| fill \| ok \| \d+ ms$/),
          expect.stringMatching(/^3 \| expectText \| ok \| \d+ ms$/),
        ]);
      const result = f.getByRole('region', { name: 'Run result' });
      expect(await result.locator('.hb-chip').textContent()).toBe('up');
      expect(await result.textContent()).toContain('Kettle shop');
      // Nothing was saved.
      expect((await t.request('GET', '/browser-workflow', { token: await token() })).body).toEqual([]);

      // The steps after the first page as a sign-in: the cookies the browser then holds go into the form.
      await f.getByText('Start signed in (log in and capture cookies)').click();
      await f.getByRole('button', { name: 'Log in and capture cookies' }).click();
      await expect
        .poll(() => f.getByText(/cookies? captured/).textContent(), { timeout: RUN_MS })
        .toBe(`Signed in (${site.url}/shop): 1 cookie captured. Save to keep them.`);
      expect(await f.getByLabel('Cookie 1 name').inputValue()).toBe('sid');
      expect(await f.getByLabel('Cookie 1 value').inputValue()).toBe('s-123');
      await f.getByRole('list', { name: 'Steps' }).scrollIntoViewIfNeeded();
      await screenshot(page, 'browser-workflow-steps');
    },
    TEST_MS,
  );

  it(
    'shows a failing step’s error and its screenshot',
    async () => {
      const f = form();
      await f.getByLabel('Step 3 text', { exact: true }).fill('Teapot');
      await f.getByLabel('Step 3 timeout (ms)').fill('500');
      await f.getByRole('button', { name: 'Run steps now' }).click();
      await expect
        .poll(() => stepResults(), { timeout: RUN_MS })
        .toEqual([
          expect.stringMatching(/^1 \| goto \| ok \|/),
          expect.stringMatching(/^2 \| fill \| ok \|/),
          expect.stringMatching(/^3 \| expectText \| text does not contain "Teapot" \| \d+ ms$/),
        ]);
      const result = f.getByRole('region', { name: 'Run result' });
      expect(await result.locator('.hb-chip').textContent()).toBe('down');
      expect(await result.textContent()).toContain('step 3 expectText: text does not contain "Teapot"');
      const shot = result.getByRole('img', { name: 'Screenshot of the failed step' });
      await expect.poll(() => shot.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1280);
      await f.scrollIntoViewIfNeeded();
      await result.scrollIntoViewIfNeeded();
      await screenshot(page, 'browser-workflow');
      // The thumbnail opens the full image.
      await result.getByRole('button', { name: 'Screenshot of the failed step: open larger' }).click();
      const dialog = page.getByRole('dialog', { name: 'Screenshot of the failed step' });
      await expect
        .poll(() => dialog.getByRole('img').evaluate((img: HTMLImageElement) => img.naturalWidth))
        .toBe(1280);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
    },
    TEST_MS,
  );

  it('has no axe-core findings on the form with a failed run', async () => {
    await page.waitForLoadState('networkidle');
    expect(await axeFindings(page)).toEqual([]);
  });

  it(
    'saves it with the secret hidden; its first check fails and the inbox shows the screenshot',
    async () => {
      await form().getByRole('button', { name: 'Create monitor' }).click();
      await page.getByRole('heading', { name: 'Shop search', level: 1 }).waitFor();
      const list = (await t.request('GET', '/browser-workflow', { token: await token() })).body as Record<
        string,
        unknown
      >[];
      expect(list).toMatchObject([
        {
          kind: 'browser-workflow',
          name: 'Shop search',
          intervalSec: 300,
          timeoutSec: 60,
          cookies: [{ name: 'sid', value: '********', domain: '127.0.0.1', path: '/', httpOnly: true }],
          steps: [
            { action: 'goto', url: `${site.url}/shop`, timeoutMs: 10_000 },
            { action: 'fill', selector: '#q', value: '********', secret: true, timeoutMs: 10_000 },
            { action: 'expectText', value: 'Teapot', timeoutMs: 500 },
          ],
        },
      ]);
      wf.id = list[0]!.id as number;
      // The first check runs at once on create; retries 0, so it is down and sends the down message.
      await pass(0);
      await expect
        .poll(() => page.locator('.hb-title .hb-chip').textContent(), { timeout: RUN_MS })
        .toBe('down');
      const messages = (await t.request('GET', '/message', { token: await token() })).body as {
        messages: { title: string; extras?: Record<string, unknown> }[];
      };
      const down = messages.messages.find((m) => typeof m.extras?.['service::screenshot'] === 'string');
      expect(down?.extras?.['service::screenshot']).toMatch(/^[A-Za-z0-9]{22}$/);

      // Its form shows the secret masked; a run cannot use it, a save keeps it.
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const edit = page.getByRole('form', { name: 'Edit “Shop search”' });
      expect(await edit.getByLabel('Step 2 text to type').inputValue()).toBe('********');
      expect(await edit.getByRole('button', { name: 'Run steps now' }).isDisabled()).toBe(true);
      await edit.getByRole('button', { name: 'Save monitor' }).click();
      await expect.poll(() => edit.isVisible()).toBe(false);

      await page.getByRole('link', { name: 'Inbox', exact: true }).click();
      await page.getByRole('heading', { name: 'All messages' }).waitFor();
      const item = page.locator('li.message', { hasText: down!.title });
      const thumb = item.getByRole('img', { name: 'Screenshot of the failed step' });
      await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1280);
      await item.scrollIntoViewIfNeeded();
      await screenshot(page, 'browser-workflow-inbox');
      expect(await axeFindings(page)).toEqual([]);
    },
    TEST_MS,
  );

  it('says on the Monitors page when the server runs on battery', async () => {
    await page.getByRole('link', { name: 'Monitors', exact: true }).click();
    const row = page.getByRole('list', { name: 'Monitors' }).getByRole('listitem', { name: 'Shop search' });
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('down');
    const notice = page.getByRole('status', { name: 'Battery power' });
    expect(await notice.count()).toBe(0);
    // The desktop app's powerMonitor would say this; the workflow turns unknown and its frame reloads /power.
    setOnBattery(t.server.ctx, true);
    await expect
      .poll(() => notice.textContent())
      .toContain('On battery: browser workflows paused, other checks every 2× longer.');
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('unknown');
    expect(await row.textContent()).toContain('paused on battery power');
    await screenshot(page, 'browser-workflow-battery');
    expect(await axeFindings(page)).toEqual([]);
    setOnBattery(t.server.ctx, false);
    await expect.poll(() => notice.count()).toBe(0);
    // With the workflow paused no monitor changes status: only the power:changed frame can update the
    // notice, well within the page's one-minute refresh and without a reload.
    const dev = await token();
    // the pause's own monitor:status_changed frame makes the notice read /power once: wait for that read
    const pauseRead = page.waitForResponse((r) => new URL(r.url()).pathname === '/power');
    const paused = await t.request('POST', `/browser-workflow/${wf.id}/pause`, { token: dev });
    expect(paused.status).toBe(200);
    await pauseRead;
    expect(await notice.count()).toBe(0);
    const loads = await page.evaluate(() => performance.getEntriesByType('navigation').length);
    const url = page.url();
    setOnBattery(t.server.ctx, true);
    await expect
      .poll(() => notice.textContent(), { timeout: 10_000 })
      .toContain('On battery: browser workflows paused');
    setOnBattery(t.server.ctx, false);
    await expect.poll(() => notice.count(), { timeout: 10_000 }).toBe(0);
    expect(page.url()).toBe(url);
    expect(await page.evaluate(() => performance.getEntriesByType('navigation').length)).toBe(loads);
  });
});

describe.skipIf(!hasChromium)('browser workflows on a server without a browser', () => {
  let t: TestServer;
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer({ config: { chromiumPath: '/nonexistent/chromium' } });
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it(
    'Run steps now says how to get one',
    async () => {
      const { page } = await b.newPage();
      await signInToInbox(page, t.url, t.admin);
      await page.goto(`${t.url}/monitors?new=browser-workflow`);
      await page.getByLabel('Step 1 URL').fill('http://127.0.0.1:9/');
      await page.getByRole('button', { name: 'Run steps now' }).click();
      const help = page.getByRole('note', { name: 'No browser found' });
      await expect.poll(() => help.textContent()).toContain('BELFRY_CHROMIUM_PATH');
      expect(await help.textContent()).toContain('Install Google Chrome, Microsoft Edge or Chromium');
      expect(await page.getByRole('region', { name: 'Run result' }).textContent()).toContain(
        'no Chromium available (set BELFRY_CHROMIUM_PATH)',
      );
    },
    TEST_MS,
  );
});

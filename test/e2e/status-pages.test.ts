import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  axeFindings,
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  mailedLink,
  screenshot,
  signInToInbox,
} from './browser';

/**
 * Status pages end to end: the Status pages screen drives the real API (docs/api.md "Status pages") in
 * Chromium; the public page is opened in a second browser context with JavaScript disabled, as a visitor
 * without scripts sees it, and its subscribe form posts natively. The shop's channel has two heartbeats,
 * one of them in a sub-channel; on the server's ManualClock the payments heartbeat misses its deadline,
 * which is an incident. Steps build on each other.
 */
describe.skipIf(!hasChromium)('status pages in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  let setup: string;
  let owner: { email: string; password: string };
  let publicUrl = '';
  const token = () => deviceTokenOf(page);
  const EMAIL = 'visitor@example.com';

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    // A user on the free plan: one status page, no hidden branding.
    owner = makeUser(t, { plan: 'free' });
    setup = (await deviceToken(t, owner, 'setup')).token;
    const shop = await makeChannel(t, setup, { name: 'Shop' });
    const payments = await makeChannel(t, setup, { name: 'Shop payments', parentId: shop.id });
    const made: Record<string, { id: number; token: string }> = {};
    for (const [appid, name, intervalSec] of [
      [shop.id, 'Checkout', 86_400],
      [payments.id, 'Payments', 300],
    ] as const) {
      const res = await t.request('POST', '/heartbeat', {
        token: setup,
        json: { appid, name, intervalSec, graceSec: 60 },
      });
      expect(res.status).toBe(200);
      made[name] = res.body;
      expect((await t.request('GET', `/heartbeat/ping/${res.body.token}`)).status).toBe(200);
    }
    // Payments misses its deadline (300 s + 60 s grace): down, an incident; Checkout stays up.
    t.clock.advance(400_000);
    await t.server.scheduler.tick();
    const status = (await t.request('GET', `/heartbeat/${made.Payments?.id}`, { token: setup })).body.status;
    expect(status).toBe('down');
    // Planned work on the payments channel on Saturday: listed on the page, not active yet.
    const window = await t.request('POST', '/maintenance-window', {
      token: setup,
      json: {
        name: 'Payment provider upgrade',
        channelIds: [payments.id],
        schedule: { type: 'once', startsAt: '2026-01-17T08:00:00.000Z', endsAt: '2026-01-17T10:00:00.000Z' },
      },
    });
    expect(window.status).toBe(200);
    b = await launchBrowser();
    ({ page } = await b.newPage());
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, owner);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('creates a page for the shop channel and previews its summary with uptime bars', async () => {
    await page.getByRole('link', { name: 'Status pages', exact: true }).click();
    await page.getByRole('heading', { name: 'Status pages', level: 1 }).waitFor();
    await expect.poll(() => page.getByText('No status pages yet.', { exact: false }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New status page' }).click();
    const form = page.getByRole('form', { name: 'New status page' });
    await form.getByLabel('Title', { exact: true }).fill('Shop status');
    // The slug follows the title until it is edited.
    expect(await form.getByLabel('Slug', { exact: true }).inputValue()).toBe('shop-status');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Shop' });
    await form.getByLabel('Description', { exact: true }).fill('Checkout and payments of the shop.');
    // On the free plan hiding the footer is not offered.
    const brand = form.getByLabel('Hide “Powered by Belfry”', { exact: true });
    expect(await brand.isDisabled()).toBe(true);
    expect(await form.textContent()).toContain('Needs the pro or business plan.');
    await form.getByRole('button', { name: 'Create page' }).click();

    await page.getByRole('heading', { name: 'Shop status', level: 1 }).waitFor();
    publicUrl = await page.getByLabel('Public address', { exact: true }).inputValue();
    expect(publicUrl).toBe(`${t.url}/status/shop-status`);
    expect(await page.getByRole('link', { name: 'Open the public page' }).getAttribute('href')).toBe(
      publicUrl,
    );

    const preview = page.getByRole('region', { name: 'Preview' });
    await expect.poll(() => preview.locator('[data-overall]').getAttribute('data-overall')).toBe('degraded');
    expect(await preview.textContent()).toContain('Partial outage');
    const services = preview.getByRole('list', { name: 'Services' }).getByRole('listitem');
    expect(await services.count()).toBe(2);
    expect(await services.nth(0).getAttribute('aria-label')).toBe('Checkout');
    expect(await services.nth(0).locator('.hb-chip').textContent()).toBe('up');
    expect(await services.nth(1).locator('.hb-chip').textContent()).toBe('down');
    // The shared 90-day bar, one day per bar, today's with its tooltip.
    const bar = services.nth(1).getByRole('img');
    expect(await bar.getAttribute('aria-label')).toMatch(/^90-day uptime /);
    expect(await bar.locator('.uptime-day').count()).toBe(90);
    expect(await bar.locator('.uptime-day').last().getAttribute('title')).toMatch(/^2026-01-15: /);
    expect(await preview.textContent()).toContain('Payments is down');
    const planned = preview.getByRole('list', { name: 'Planned maintenance' }).getByRole('listitem');
    expect(await planned.allTextContents()).toEqual([expect.stringMatching(/^Payment provider upgrade: /)]);
    await screenshot(page, 'status-page-admin');

    const list = (await t.request('GET', '/status-page', { token: await token() })).body;
    expect(list).toEqual([
      expect.objectContaining({
        slug: 'shop-status',
        title: 'Shop status',
        description: 'Checkout and payments of the shop.',
        enabled: true,
        lang: 'en',
        brandingHidden: false,
        url: publicUrl,
      }),
    ]);
  });

  it('shows the plan limit when a second page is asked for', async () => {
    await page.getByRole('link', { name: '← All status pages' }).click();
    const row = page
      .getByRole('list', { name: 'Status pages' })
      .getByRole('listitem', { name: 'Shop status' });
    expect(await row.getByRole('link', { name: '/status/shop-status' }).getAttribute('href')).toBe(publicUrl);
    await page.getByRole('button', { name: 'New status page' }).click();
    const form = page.getByRole('form', { name: 'New status page' });
    await form.getByLabel('Title', { exact: true }).fill('Second');
    await form.getByRole('button', { name: 'Create page' }).click();
    await expect
      .poll(() => form.getByRole('alert').textContent())
      .toBe('plan limit reached: at most 1 status pages on the free plan');
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('serves the public page without JavaScript: banner, services, bars, incident, subscribe form', async () => {
    const visitor = await b.browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1024, height: 900 },
    });
    visitor.setDefaultTimeout(15_000);
    const pub = await visitor.newPage();
    const res = await pub.goto(publicUrl);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-type']).toMatch(/^text\/html/);
    expect(await pub.locator('body').getAttribute('data-overall')).toBe('degraded');
    expect(await pub.locator('html').getAttribute('lang')).toBe('en');
    const body = (await pub.locator('body').textContent()) ?? '';
    expect(body).toContain('Shop status');
    expect(body).toContain('Partial outage');
    expect(body).toContain('Payments is down');
    expect(body).toContain('Powered by Belfry');
    expect(await pub.locator('[data-maintenance="planned"]').textContent()).toContain(
      'Payment provider upgrade',
    );
    const sections = pub.locator('section[data-status]');
    expect(await sections.count()).toBe(2);
    const checkout = pub.locator('section[data-status="up"]', { hasText: 'Checkout' });
    const payments = pub.locator('section[data-status="down"]', { hasText: 'Payments' });
    expect(await checkout.count()).toBe(1);
    expect(await payments.count()).toBe(1);
    // 90 bars per service, each titled with its date and uptime.
    const bars = payments.locator('[title^="20"]');
    expect(await bars.count()).toBe(90);
    expect(await bars.last().getAttribute('title')).toMatch(/^2026-01-15\b.*%/);
    await screenshot(pub, 'status-page');

    // The public page passes axe in both colour schemes (with script on only for axe itself; meta refresh
    // is the spec's, so that one rule is skipped).
    const auditor = await b.browser.newPage({ viewport: { width: 1024, height: 900 } });
    for (const colorScheme of ['light', 'dark'] as const) {
      await auditor.emulateMedia({ colorScheme });
      await auditor.goto(publicUrl);
      expect(await axeFindings(auditor, ['meta-refresh']), colorScheme).toEqual([]);
    }
    await auditor.close();

    // The form posts natively (no script): the answer is a "check your mail" page, and the mail goes out.
    await pub.locator('form input[type="email"], form input[name="email"]').first().fill(EMAIL);
    await Promise.all([pub.waitForNavigation(), pub.locator('form [type="submit"]').first().click()]);
    expect(await pub.locator('body').textContent()).toMatch(/check your (e-?)?mail/i);
    const verify = await mailedLink(t, t.admin, EMAIL, '/status-subscribe/verify');
    await pub.goto(verify);
    expect(await pub.locator('body').textContent()).toContain('Subscription confirmed');
    await visitor.close();
  });

  it('lists the subscriber for the owner and removes it', async () => {
    await page.getByRole('link', { name: 'Shop status' }).click();
    const subs = page.getByRole('list', { name: 'Subscribers' }).getByRole('listitem');
    await expect.poll(() => subs.count()).toBe(1);
    expect(await subs.first().textContent()).toContain(EMAIL);
    expect(await subs.first().locator('.tag').textContent()).toBe('confirmed');
    await subs
      .first()
      .getByRole('button', { name: `Remove ${EMAIL}` })
      .click();
    await expect.poll(() => page.getByText('No subscribers yet.').isVisible()).toBe(true);
    const id = (
      (await t.request('GET', '/status-page', { token: await token() })).body as { id: number }[]
    )[0]?.id;
    expect((await t.request('GET', `/status-page/${id}/subscribers`, { token: await token() })).body).toEqual(
      [],
    );
  });
});

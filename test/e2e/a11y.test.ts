import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  signInToInbox,
} from './browser';

/**
 * Every screen through axe-core (WCAG 2.x A and AA rules plus axe's best practices), at desktop size
 * in the light theme and phone size in the dark one: no violations at all. axe is evaluated through the
 * DevTools protocol, so the page's CSP, which forbids inline scripts, stays as it is.
 */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function violations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    type Result = { id: string; impact: string; help: string; nodes: { target: string[] }[] };
    const axe = (window as unknown as { axe: { run(d: Document): Promise<{ violations: Result[] }> } }).axe;
    const { violations } = await axe.run(document);
    return violations.map(
      (v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  });
}

describe.skipIf(!hasChromium)('accessibility (axe-core) in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    // Registration on, so the sign-in screen offers it and the registration screen has its form.
    t = await startTestServer({ config: { registration: true } });
    const device = (await deviceToken(t, t.admin, 'laptop')).token;
    const channel = await makeChannel(t, device, { name: 'Ops' });
    // A heartbeat with a success and a failed ping, so its list row, uptime and ping log have content.
    const hb = await t.request('POST', '/heartbeat', {
      token: device,
      json: { appid: channel.id, name: 'Nightly backup', schedule: '0 3 * * *', timezone: 'Europe/Berlin' },
    });
    if (hb.status !== 200) throw new Error(`POST /heartbeat answered ${hb.status} ${hb.text}`);
    await fetch(hb.body.pingUrl);
    await fetch(`${hb.body.pingUrl}/2`, { method: 'POST', body: 'tar: /backup: No space left on device' });
    await sendMessage(t, channel.token, { title: 'Disk full', message: 'on /var', priority: 9 });
    await sendMessage(t, channel.token, {
      title: 'Report',
      message: '**bold** and a [link](https://example.com)\n\n- one\n- two',
      extras: { 'client::display': { contentType: 'text/markdown' } },
    });
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  for (const phone of [false, true]) {
    it(`has no violations on any screen at ${phone ? 'phone size, dark' : 'desktop size, light'}`, async () => {
      const { context, page } = await b.newPage({ phone });
      // The phone run uses the dark theme (the system theme follows the OS), so both palettes are checked.
      if (phone) await page.emulateMedia({ colorScheme: 'dark' });
      const found: string[] = [];
      const check = async (screen: string) => {
        for (const v of await violations(page)) found.push(`${screen}: ${v}`);
      };
      await page.goto(`${t.url}/pair#code=${'x'.repeat(22)}`);
      await page.getByRole('heading', { name: 'Pair this device' }).waitFor();
      await check('/pair');
      await page.goto(t.url);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await check('sign-in');
      // The account screens reached without signing in (issue 20).
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
      await check('/forgot-password');
      await page.getByLabel('Email', { exact: true }).fill('nobody@example.com');
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
      await check('/forgot-password, sent');
      await page.goto(`${t.url}/reset-password?token=x.y`);
      await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
      await page.getByLabel('New password', { exact: true }).fill('password-1');
      await page.getByLabel('New password again', { exact: true }).fill('password-2');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('alert').waitFor();
      await check('/reset-password with an error');
      await page.goto(`${t.url}/register`);
      await page.getByRole('heading', { name: 'Create an account' }).waitFor();
      await check('/register');
      await page.goto(`${t.url}/verify-email?token=x.y`);
      await page.getByRole('heading', { name: 'This link does not work' }).waitFor();
      await check('/verify-email, a bad link');
      await signInToInbox(page, t.url, t.admin);
      await page.getByRole('heading', { name: 'Report' }).waitFor();
      await check('inbox');
      const screens: [string, string][] = [
        ['/channels', 'Channels'],
        ['/heartbeats', 'Heartbeats'],
        ['/metrics', 'Metrics'],
        ['/web-scripts', 'Web scripts'],
        ['/port-scans', 'Port scans'],
        ['/routing', 'Webhook router'],
        ['/inboxes', 'Email inboxes'],
        ['/chat', 'Assistant'],
        ['/devices', 'Devices'],
        ['/api-tokens', 'API tokens'],
        ['/account', 'Account'],
        ['/users', 'Users'],
        ['/outbox', 'Mail outbox'],
      ];
      for (const [path, heading] of screens) {
        await page.goto(t.url + path);
        await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        await check(path);
        if (path === '/channels') {
          await page
            .getByRole('list', { name: 'Channel tree' })
            .getByRole('button', { name: /^Ops/ })
            .click();
          await page.getByRole('form', { name: 'New webhook' }).waitFor();
          await check('/channels, a channel open');
        }
        if (path === '/heartbeats') {
          await page.getByRole('link', { name: 'Nightly backup' }).click();
          await page.getByRole('table', { name: 'Pings' }).waitFor();
          await page.getByRole('region', { name: 'Uptime' }).getByRole('img').waitFor();
          await page.getByRole('button', { name: 'Edit', exact: true }).click();
          await page.getByRole('list', { name: 'Next fire times' }).waitFor();
          await page.getByText('Examples: curl, crontab, exit codes').click();
          await check('/heartbeats, a heartbeat open with its form');
          await page.goto(`${t.url}/heartbeats?new=1`);
          await page.getByRole('form', { name: 'New heartbeat' }).waitFor();
          await check('/heartbeats, the new heartbeat form');
        }
        if (path === '/chat') {
          await page.getByLabel('Message', { exact: true }).fill('what is down?');
          await page.getByLabel('Message', { exact: true }).press('Enter');
          await page.getByRole('list', { name: 'Conversation' }).getByRole('listitem').nth(1).waitFor();
          await check('/chat, a conversation');
        }
        if (path === '/devices') {
          await page
            .getByRole('button', { name: /^Mutes on/ })
            .first()
            .click();
          await page.getByRole('button', { name: 'Save mutes' }).waitFor();
          await check('/devices, the mutes dialog');
          await page.keyboard.press('Escape');
          await page.getByRole('button', { name: 'Pair a phone' }).click();
          await page.getByRole('img', { name: 'Pairing QR code' }).waitFor();
          await check('/devices, the pairing dialog');
          await page.keyboard.press('Escape');
        }
        if (path === '/account') {
          // Two-factor setup asks for sudo first: the confirmation dialog.
          await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
          await page.getByRole('button', { name: 'Confirm' }).waitFor();
          await check('/account, the sudo dialog');
          await page.keyboard.press('Escape');
        }
      }
      await page.goto(`${t.url}/#/share/join?token=${'x'.repeat(22)}`); // the emailed form
      await page.getByRole('heading', { name: 'Join a shared channel' }).waitFor();
      await check('/share/join');
      await context.close();
      expect(found).toEqual([]);
    }, 180_000);
  }
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  signInToInbox,
} from './browser';

/**
 * The screens ui.test.ts does not walk through, as the administrator: public webhooks, quiet hours,
 * user administration (behind the sudo dialog) and the mail outbox.
 */
describe.skipIf(!hasChromium)('more screens in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  let channel: { id: number };
  let promptAnswer = '';
  const token = () => deviceTokenOf(page);

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    b = await launchBrowser();
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Doorbell' });
    ({ page } = await b.newPage());
    // confirm() is accepted; prompt() gets `promptAnswer`.
    page.on('dialog', (d) => void d.accept(d.type() === 'prompt' ? promptAnswer : undefined));
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('creates a public webhook whose shown-once URL sends to the channel, and can delete it', async () => {
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page
      .getByRole('list', { name: 'Channel tree' })
      .getByRole('button', { name: /^Doorbell/ })
      .click();
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('Webhook name', { exact: true }).fill('front door');
    await form.getByLabel('Title', { exact: true }).fill('Ding');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const url = page.getByLabel('URL of “front door” (shown once)', { exact: true });
    await expect.poll(() => url.inputValue()).toMatch(/\/webhook\/W[A-Za-z0-9]{22}$/);
    // The URL works with no header at all, like a doorbell or a form would call it.
    const sent = await fetch(`${await url.inputValue()}?message=Someone%20rang`);
    expect(sent.status).toBe(200);
    const list = await t.request('GET', `/application/${channel.id}/message`, { token: await token() });
    expect(list.body.messages).toMatchObject([{ title: 'Ding', message: 'Someone rang' }]);
    // Listed masked, with a delete that asks first.
    const row = page.getByRole('listitem').filter({ hasText: 'front door' });
    await expect.poll(() => row.textContent()).toMatch(/webhook\/W\w{2}\*+/);
    await row.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('listitem').filter({ hasText: 'front door' }).count()).toBe(0);
    expect((await fetch(await url.inputValue())).status).toBe(404);
  });

  it('saves quiet hours, and they are still there after a reload', async () => {
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const form = page.getByRole('form', { name: 'Quiet hours' });
    await form.getByLabel('Keep notifications quiet at night').check();
    await form.getByLabel('From', { exact: true }).fill('22:30');
    await form.getByLabel('Until', { exact: true }).fill('06:45');
    await form.getByLabel('Time zone', { exact: true }).fill('Europe/Berlin');
    await form.getByLabel('Let through from priority', { exact: true }).fill('9');
    await form.getByLabel('Sun', { exact: true }).uncheck();
    await form.getByRole('button', { name: 'Save quiet hours' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Saved.');
    const saved = await t.request('GET', '/current/user/quiet-hours', { token: await token() });
    expect(saved.body).toMatchObject({
      enabled: true,
      start: '22:30',
      end: '06:45',
      timezone: 'Europe/Berlin',
      breakthroughPriority: 9,
    });
    expect(saved.body.days).not.toContain(7);
    await page.reload();
    const again = page.getByRole('form', { name: 'Quiet hours' });
    await expect.poll(() => again.getByLabel('From', { exact: true }).inputValue()).toBe('22:30');
    expect(await again.getByLabel('Time zone', { exact: true }).inputValue()).toBe('Europe/Berlin');
    expect(await again.getByLabel('Sun', { exact: true }).isChecked()).toBe(false);
  });

  it('creates a user through the sudo dialog and changes their plan', async () => {
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    await dialog.getByLabel('Email', { exact: true }).fill('new-hire@example.com');
    await dialog.getByLabel('Password', { exact: true }).fill('a-long-password');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    // Administration needs a fresh confirmation: the sudo dialog asks, then the action goes through.
    const sudo = page.getByRole('dialog').filter({ has: page.getByRole('button', { name: 'Confirm' }) });
    await sudo.getByLabel('Password', { exact: true }).fill(t.admin.password);
    await sudo.getByRole('button', { name: 'Confirm' }).click();
    await expect
      .poll(() => page.getByRole('cell', { name: 'new-hire@example.com', exact: true }).isVisible())
      .toBe(true);
    await page.getByLabel('Plan of new-hire@example.com', { exact: true }).selectOption('pro');
    await expect
      .poll(async () => {
        const users = await t.request('GET', '/user', { token: await token() });
        return (users.body.users as { email: string; plan: string }[]).find(
          (u) => u.email === 'new-hire@example.com',
        )?.plan;
      })
      .toBe('pro');
    // The new account signs in.
    const other = await b.newPage();
    await signInToInbox(other.page, t.url, { email: 'new-hire@example.com', password: 'a-long-password' });
    await other.context.close();
  });

  it('shows kept mail in the outbox and opens it', async () => {
    makeUser(t, { email: 'forgetful@example.com' });
    const reset = await t.request('POST', '/user/reset-password', {
      json: { email: 'forgetful@example.com' },
    });
    expect(reset.status).toBe(200);
    await page.getByRole('link', { name: 'Mail outbox', exact: true }).click();
    const mail = page.getByRole('button', { name: /to forgetful@example\.com/ });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return mail.count();
      })
      .toBe(1);
    await mail.click();
    await expect.poll(() => page.locator('.mail-text').textContent()).toMatch(/reset-password/);
  });

  it('pages the user list: no "Load more" on exactly one full page, and the next page when there is one', async () => {
    const count = async () =>
      (await t.request('GET', '/user?limit=200', { token: await token() })).body.users.length;
    for (let n = await count(); n < 100; n++) makeUser(t);
    expect(await count()).toBe(100);
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    const rows = page.getByRole('table').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(100);
    expect(await page.getByRole('button', { name: 'Load more users' }).count()).toBe(0);
    makeUser(t, { email: 'number-101@example.com' });
    await page.reload();
    await page.getByRole('button', { name: 'Load more users' }).click();
    await expect.poll(() => rows.count()).toBe(101);
    expect(await page.getByRole('cell', { name: 'number-101@example.com', exact: true }).isVisible()).toBe(
      true,
    );
    expect(await page.getByRole('button', { name: 'Load more users' }).count()).toBe(0);
  });

  it('rotates an API token (the old value stops working) and deletes it', async () => {
    const made = await apiToken(t, { token: await token() }, { name: 'grafana', access: 'read' });
    await page.getByRole('link', { name: 'API tokens', exact: true }).click();
    await page.getByRole('button', { name: 'Rotate grafana' }).click();
    const shown = page.getByLabel('Token “grafana” (shown once)', { exact: true });
    await expect.poll(() => shown.inputValue()).toMatch(/^M[A-Za-z0-9]{22}$/);
    const fresh = await shown.inputValue();
    expect(fresh).not.toBe(made.token);
    expect((await t.request('GET', '/message', { token: made.token })).status).toBe(401);
    expect((await t.request('GET', '/message', { token: fresh })).status).toBe(200);
    await page.getByRole('button', { name: 'Delete grafana' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'grafana', exact: true }).count()).toBe(0);
    expect((await t.request('GET', '/message', { token: fresh })).status).toBe(401);
  });

  it('renames, suspends, reactivates and revokes another device', async () => {
    const laptop = await deviceToken(t, t.admin, 'old laptop');
    await page.getByRole('link', { name: 'Devices', exact: true }).click();
    promptAnswer = 'Work laptop';
    await page.getByRole('button', { name: 'Rename old laptop' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Rename Work laptop' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Suspend Work laptop' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Reactivate Work laptop' }).count()).toBe(1);
    expect((await t.request('GET', '/message', { token: laptop.token })).status).toBe(401);
    await page.getByRole('button', { name: 'Reactivate Work laptop' }).click();
    await expect
      .poll(async () => (await t.request('GET', '/message', { token: laptop.token })).status)
      .toBe(200);
    await page.getByRole('button', { name: 'Revoke Work laptop' }).click();
    await expect
      .poll(async () => (await t.request('GET', '/message', { token: laptop.token })).status)
      .toBe(401);
    await expect.poll(() => page.getByRole('button', { name: 'Reactivate Work laptop' }).count()).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  mailedLink,
  signInToInbox,
} from './browser';

/**
 * The first five minutes (issue 20, "Done when"), in one browser session against a fresh data dir:
 * first start → sign in → create a channel → copy the key → a program sends → the message appears
 * live → sign out → forgot password → mail (outbox) → new password → sign in.
 */
describe.skipIf(!hasChromium)('first run in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    // No administrator configured: the first start creates admin@localhost with a generated password,
    // which `npm run serve` prints once (server/cli.ts).
    t = await startTestServer({ config: { adminEmail: undefined, adminPassword: undefined } });
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('walks from the first start to a message, then through a forgotten password back in', async () => {
    const first = t.server.firstRun;
    expect(first?.email).toBe('admin@localhost');
    expect(first?.generatedPassword).toMatch(/^\S{12,}$/);
    const admin = { email: first!.email, password: first!.generatedPassword! };

    const { context, page } = await b.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    await signInToInbox(page, t.url, admin);

    // Create a channel with the form's defaults, and copy its key with the Copy button.
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('button', { name: 'New channel' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Backups');
    await page.getByRole('button', { name: 'Create channel' }).click();
    const keyField = page.getByLabel('Channel key (shown once)', { exact: true });
    await expect.poll(() => keyField.inputValue()).toMatch(/^A[A-Za-z0-9]{22}$/);
    await page.getByRole('button', { name: 'Copy Channel key (shown once)' }).click();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toBe(await keyField.inputValue());

    // The form's default priority is the API's: a channel created without one gets the same.
    const device = await deviceTokenOf(page);
    const viaApi = await t.request('POST', '/application', { token: device, json: { name: 'Plain' } });
    const channels = (await t.request('GET', '/application', { token: device })).body as {
      name: string;
      defaultPriority: number;
    }[];
    expect(channels.find((c) => c.name === 'Backups')?.defaultPriority).toBe(viaApi.body.defaultPriority);

    // A program sends with the copied key; the open inbox shows it live, without a reload.
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await expect.poll(() => page.getByText('Live', { exact: true }).isVisible()).toBe(true);
    const sent = await fetch(`${t.url}/message`, {
      method: 'POST',
      headers: { 'X-Service-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Backup finished', message: 'took 4 min' }),
    });
    expect(sent.status).toBe(200);
    await expect.poll(() => page.getByRole('heading', { name: 'Backup finished' }).isVisible()).toBe(true);

    // Sign out, then the password is "forgotten".
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill(admin.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();

    // No SMTP server: the mail waits in the outbox (read here as the administrator's phone would).
    const link = await mailedLink(t, admin, admin.email, '/reset-password');

    // The mailed link opens the page that sets the new password with the link's token.
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('a-brand-new-password');
    await page.getByLabel('New password again', { exact: true }).fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();

    // The old password is dead, the new one signs in.
    const old = await t.request('POST', '/auth/local/login', { basic: admin, json: { name: 'x' } });
    expect(old.status).toBe(401);
    await page.getByLabel('Email', { exact: true }).fill(admin.email);
    await page.getByLabel('Password', { exact: true }).fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'All messages' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByRole('heading', { name: 'Backup finished' }).isVisible()).toBe(true);
    await context.close();
  });
});

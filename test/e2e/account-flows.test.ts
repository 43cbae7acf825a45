import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  mailedLink,
  signInToInbox,
  submitSignIn,
} from './browser';

/**
 * Every account flow has a screen (issue 20): forgot password → the mailed reset link → a new
 * password; self-registration → the mailed verification link → sign-in; a throttled sign-in says when
 * to try again. Mail is read in the administrator's Mail outbox (no SMTP server in tests).
 */
describe.skipIf(!hasChromium)('account flows in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer({ config: { registration: true } });
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('resets a forgotten password through the link read in the Mail outbox', async () => {
    const user = makeUser(t, { email: 'forgetful@example.com', password: 'old-password-1' });
    const { context, page } = await b.newPage();
    await page.goto(t.url);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(user.email);

    // The administrator opens the Mail outbox (behind the sudo dialog) and reads the link.
    const admin = await b.newPage();
    await signInToInbox(admin.page, t.url, t.admin);
    await admin.page.getByRole('link', { name: 'Mail outbox', exact: true }).click();
    const confirm = admin.page
      .getByRole('dialog')
      .filter({ has: admin.page.getByRole('button', { name: 'Confirm' }) });
    await confirm.getByLabel('Password', { exact: true }).fill(t.admin.password);
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    const mail = admin.page.getByRole('button', { name: /to forgetful@example\.com/ });
    await expect
      .poll(async () => {
        await admin.page.getByRole('button', { name: 'Refresh' }).click();
        return mail.count();
      })
      .toBe(1);
    await mail.click();
    const text = (await admin.page.locator('.mail-text').textContent()) ?? '';
    const link = /(http:\/\/\S+)/.exec(text)?.[1] ?? '';
    expect(link).toContain(`${t.url}/reset-password?token=`);
    await admin.context.close();

    // The link opens the page that sets a new password; typos are caught before anything is sent.
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('new-password-22');
    await page.getByLabel('New password again', { exact: true }).fill('new-password-23');
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The new passwords differ.');
    await page.getByLabel('New password again', { exact: true }).fill('new-password-22');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInToInbox(page, t.url, { email: user.email, password: 'new-password-22' });

    // The link is dead once used: the page says so in the server's words.
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill('third-password-3');
    await page.getByLabel('New password again', { exact: true }).fill('third-password-3');
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('invalid or expired reset token');
    // A link cut short says what to do.
    await page.goto(`${t.url}/reset-password`);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('This link is incomplete');
    await context.close();
  });

  it('registers, confirms the address through the mailed link and signs in', async () => {
    const { context, page } = await b.newPage();
    await page.goto(t.url);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill('newcomer@example.com');
    await page.getByLabel('Password', { exact: true }).fill('newcomer-pass-1');
    await page.getByLabel('Password again', { exact: true }).fill('newcomer-pass-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Confirm your address' }).waitFor();
    await page.getByRole('link', { name: 'Back to sign-in' }).click();

    // Before the link is opened the account cannot sign in, and the screen says why.
    const who = { email: 'newcomer@example.com', password: 'newcomer-pass-1' };
    await submitSignIn(page, t.url, who);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('email address not verified');

    const link = await mailedLink(t, t.admin, who.email, '/verify-email');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(who.email);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInToInbox(page, t.url, who);

    // A broken link gets a human page with the server's reason and the way to sign-in.
    await page.goto(`${t.url}/verify-email?token=nope`);
    await page.getByRole('heading', { name: 'This link does not work' }).waitFor();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('invalid or expired verification link');
    await page.getByRole('link', { name: 'Go to sign-in' }).waitFor();
    await context.close();
  });

  it('says when sign-in may be tried again after too many failures', async () => {
    const user = makeUser(t, { email: 'hammered@example.com', password: 'right-password-1' });
    // A script on the same machine gets the password wrong ten times (sign-in counts per account and address).
    for (let i = 0; i < 10; i++)
      await t.request('POST', '/auth/local/login', { basic: { email: user.email, password: 'wrong-one' } });
    const { context, page } = await b.newPage();
    await submitSignIn(page, t.url, user);
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/You can try again in \d+ (seconds?|minutes?) \(at [^)]+\)\.$/);
    const button = page.getByRole('button', { name: /^Sign in \(wait \d+ s\)$/ });
    expect(await button.isDisabled()).toBe(true);
    await context.close();
  });
});

describe.skipIf(!hasChromium)('account flows without self-registration', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    b = await launchBrowser();
    ({ page } = await b.newPage());
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('offers no registration, and /register says to ask the administrator', async () => {
    await page.goto(t.url);
    await page.getByRole('link', { name: 'Forgot password?' }).waitFor();
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    await page.goto(`${t.url}/register`);
    await expect.poll(() => page.getByText('Ask its administrator for one.').isVisible()).toBe(true);
  });
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser } from '../helpers/factories';
import { type FakeSshServer, freePort, startFakeSshServer } from '../helpers/fake-ssh-server';
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

/**
 * Public access end to end (issue 19, docs/public-access.md): an administrator sets up the ssh tunnel
 * on the screen against a loopback sshd, sees it come up with its public URL, checks it, and sees the
 * screen turn to error by itself when the sshd drops the connection. Steps build on each other.
 */
describe.skipIf(!hasChromium)('public access in Chromium', () => {
  let t: TestServer;
  let ssh: FakeSshServer;
  let b: BrowserHandle;
  let page: Page;
  let remotePort = 0;
  const status = () => page.getByRole('region', { name: /^Status/ });
  const chip = () => status().locator('[data-status]');

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    ssh = await startFakeSshServer();
    remotePort = await freePort();
    b = await launchBrowser();
    ({ page } = await b.newPage());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    if (t)
      await t.request('PUT', '/tunnel', { token: await deviceTokenOf(page), json: { provider: 'none' } });
    await b?.close();
    await ssh?.close();
    await t?.close();
  });

  it('opens from the Admin group and starts off, listing what a tunnel would expose', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Public access', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Public access', level: 1 }).waitFor();
    await expect.poll(() => chip().getAttribute('data-status')).toBe('off');
    const exposed = page.getByRole('region', { name: 'What the tunnel exposes' });
    expect(await exposed.getByRole('listitem').filter({ hasText: '/heartbeat/ping/' }).count()).toBe(1);
    expect(await exposed.textContent()).toContain('Never exposed: this web app, sign-in, the API');
    expect(await page.getByRole('button', { name: 'Check now' }).isDisabled()).toBe(true);
  });

  it('a 400 stands under the field it names', async () => {
    await page.getByLabel('Provider', { exact: true }).selectOption('ssh');
    await page.getByLabel('Host', { exact: true }).fill(ssh.host);
    await page.getByLabel('Private key', { exact: true }).fill('not a key');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/^ssh\.(user|privateKey|remotePort|publicUrl): /);
  });

  it('the ssh form with a pasted key brings the tunnel up and shows its public URL', async () => {
    await page.getByLabel('SSH port', { exact: true }).fill(String(ssh.port));
    await page.getByLabel('User', { exact: true }).fill(ssh.user);
    await page.getByLabel('Remote port', { exact: true }).fill(String(remotePort));
    await page.getByLabel('Private key', { exact: true }).fill(ssh.clientKey.private);
    await page.getByLabel('Public URL', { exact: true }).fill(`http://127.0.0.1:${remotePort}`);
    await page.getByText('Advanced: bind address, host key pin').click();
    await page.getByLabel('Host key fingerprint', { exact: true }).fill(ssh.hostFingerprint);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => chip().getAttribute('data-status'), { timeout: 15_000 }).toBe('up');
    await expect
      .poll(() => status().getByLabel('Public URL', { exact: true }).inputValue())
      .toBe(`http://127.0.0.1:${remotePort}`);
    // The stored key is not sent back: the field is empty with a masked placeholder.
    const key = page.getByLabel('Private key', { exact: true });
    expect(await key.inputValue()).toBe('');
    expect(await key.getAttribute('placeholder')).toMatch(/^\*{8} \(stored/);
    expect(await page.content()).not.toContain('PRIVATE KEY-----\n');
    // The forwarded port is the public listener.
    expect((await fetch(`http://127.0.0.1:${remotePort}/health`)).status).toBe(200);
  });

  it('Check now shows an ok check through the tunnel', async () => {
    await page.getByRole('button', { name: 'Check now' }).click();
    await expect.poll(() => page.getByTestId('last-check').textContent()).toMatch(/^ok \(HTTP 200, \d+ ms\)/);
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, 'public-access');
  });

  it('the sshd dropping the connection shows as error without a reload', async () => {
    ssh.dropClients();
    await expect.poll(() => chip().getAttribute('data-status'), { timeout: 15_000 }).toBe('error');
    await expect
      .poll(() => status().getByRole('alert').textContent())
      .toMatch(/^ssh: connection to 127\.0\.0\.1:\d+ (closed|reset)/);
  });

  it('saving again with the stored key (not re-pasted) brings it back up', async () => {
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => chip().getAttribute('data-status'), { timeout: 15_000 }).toBe('up');
    expect(ssh.stats.authFailures).toBe(0);
  });

  it('is not offered to someone who is not an administrator', async () => {
    const other = makeUser(t);
    const { page: p2, context } = await b.newPage();
    await signInToInbox(p2, t.url, other);
    expect(
      await p2
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Public access', exact: true })
        .count(),
    ).toBe(0);
    await p2.goto(`${t.url}/public-access`);
    await p2.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
    await context.close();
  });
});

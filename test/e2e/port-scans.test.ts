import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget, startTcpListener } from '../helpers/fake-targets';
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

const PROOF = '/.well-known/belfry-verification.txt';

type Listener = Awaited<ReturnType<typeof startTcpListener>>;

/**
 * Verified hosts and port scans end to end (docs/api.md "Verified hosts", "Port scans"): Chromium drives
 * the page against a real server; 127.0.0.1 is verified through the real http proof (a loopback web
 * server that serves what the page told the user to serve), and scans connect to real TCP listeners on
 * 127.0.0.1 (one greeting like SSH, one like SMTP, one silent) and a closed port. The page never polls:
 * what moves it is the socket's frames and the SSE signals. Steps build on each other.
 */
describe.skipIf(!hasChromium)('port scans in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  let proofSite: FakeTarget;
  /** What the proof site serves at the proof path; empty until the user "publishes" the token. */
  let published = '';
  let ssh: Listener;
  let smtp: Listener;
  let silent: Listener;
  let closed: number;
  let channel: { id: number };
  const token = () => deviceTokenOf(page);
  const scanItem = (name: string) =>
    page.getByRole('list', { name: 'Scans' }).getByRole('listitem', { name, exact: true });
  const chipOf = (name: string) => scanItem(name).locator('.hb-chip');
  const progressOf = async (name: string) =>
    Number(await scanItem(name).getByRole('progressbar').getAttribute('value'));
  /** Scrolls the Scans heading to just under the sticky top bar, for the screenshots. */
  const showScans = () =>
    page
      .getByRole('heading', { name: 'Scans', level: 2 })
      .evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 100));
  const scansApi = async () =>
    (await t.request('GET', '/port-scan', { token: await token() })).body as {
      id: number;
      name: string;
      status: string;
    }[];

  beforeAll(async () => {
    ensureRendererBuilt();
    proofSite = await startTarget((req, res) => {
      if (req.url === PROOF && published) res.end(`${published}\n`);
      else {
        res.statusCode = 404;
        res.end('not found');
      }
    });
    ssh = await startTcpListener('SSH-2.0-test\r\n');
    smtp = await startTcpListener('220 mail.belfry.test ESMTP ready\r\n');
    silent = await startTcpListener();
    closed = await closedPort();
    t = await startTestServer();
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Ops' });
    b = await launchBrowser();
    const opened = await b.newPage();
    page = opened.page;
    await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await proofSite?.close();
    await ssh?.close();
    await smtp?.close();
    await silent?.close();
  });

  it('refuses a scan of an unverified host with the server text and a link to verify it', async () => {
    await page.getByRole('link', { name: 'Port scans', exact: true }).click();
    await page.getByRole('heading', { name: 'Port scans', level: 1 }).waitFor();
    await expect.poll(() => page.getByText('No hosts yet.').isVisible()).toBe(true);
    const form = page.getByRole('form', { name: 'New scan' });
    await form.getByLabel('Host', { exact: true }).fill('127.0.0.1');
    await form.getByLabel('Custom list').check();
    await form.getByLabel('Custom ports').fill(String(ssh.port));
    await form.getByRole('button', { name: 'Start scan' }).click();
    await expect
      .poll(() => form.getByRole('alert').textContent())
      .toBe('host not verified: verify 127.0.0.1 first (POST /verified-host/start)');
    expect(await scansApi()).toEqual([]);
    await form.getByRole('link', { name: 'Verify 127.0.0.1' }).click();
    const add = page.getByRole('form', { name: 'Add a host' });
    await expect.poll(() => add.getByLabel('Host', { exact: true }).inputValue()).toBe('127.0.0.1');
    expect(new URL(page.url()).search).toBe('?verify=127.0.0.1');
  });

  it('adds 127.0.0.1 with the http proof: the instructions to copy, a failed check, then verified', async () => {
    const add = page.getByRole('form', { name: 'Add a host' });
    expect(await add.getByLabel(/^HTTP file/).isChecked()).toBe(true);
    await add.getByLabel('HTTP port').fill(String(proofSite.port));
    await add.getByRole('button', { name: 'Start verification' }).click();
    const row = page
      .getByRole('list', { name: 'Verified hosts' })
      .getByRole('listitem', { name: '127.0.0.1 (HTTP file)' });
    await row.waitFor();
    const [rec] = (await t.request('GET', '/verified-host', { token: await token() })).body as {
      id: number;
      token: string;
      instructions: string;
    }[];
    const url = `http://127.0.0.1:${proofSite.port}${PROOF}`;
    expect(rec!.instructions).toBe(
      `Serve the text ${rec!.token} at ${url}, then call POST /verified-host/check.`,
    );
    // The server's instructions word for word, and the two values to copy.
    expect(await row.locator('.ps-instructions').textContent()).toBe(rec!.instructions);
    expect(await row.getByLabel('File URL for 127.0.0.1', { exact: true }).inputValue()).toBe(url);
    const content = row.getByLabel('File content for 127.0.0.1', { exact: true });
    expect(await content.inputValue()).toBe(rec!.token);
    await row.getByRole('button', { name: 'Copy File content for 127.0.0.1' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(rec!.token);
    expect(await row.locator('.hb-chip').textContent()).toBe('not verified');

    // Checked before the file is served: the server's error text.
    await row.getByRole('button', { name: 'Verify now' }).click();
    await expect
      .poll(() => row.getByRole('alert').textContent())
      .toBe(`verification failed: GET ${url} answered 404`);
    expect(await row.locator('.hb-chip').textContent()).toBe('not verified');

    // The user serves what the page showed; the next check passes.
    published = await content.inputValue();
    await row.getByRole('button', { name: 'Verify now' }).click();
    await expect.poll(() => row.getByRole('status').textContent()).toContain('127.0.0.1 is verified');
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('verified');
    expect(await row.getByRole('alert').count()).toBe(0);
    expect((await t.request('GET', '/verified-host', { token: await token() })).body[0]).toMatchObject({
      id: rec!.id,
      verified: true,
      lastError: null,
    });
    expect(proofSite.seen.filter((r) => r.path === PROOF)).toHaveLength(2);
  });

  it('shows the dns proof as a TXT record name and value, its failed check, and deletes the host', async () => {
    const add = page.getByRole('form', { name: 'Add a host' });
    await add.getByLabel('Host', { exact: true }).fill('scans.example.invalid');
    await add.getByLabel(/^DNS TXT record/).check();
    expect(await add.getByLabel('HTTP port').count()).toBe(0);
    await add.getByRole('button', { name: 'Start verification' }).click();
    const row = page
      .getByRole('list', { name: 'Verified hosts' })
      .getByRole('listitem', { name: 'scans.example.invalid (DNS TXT record)' });
    await row.waitFor();
    const rec = (
      (await t.request('GET', '/verified-host', { token: await token() })).body as {
        host: string;
        token: string;
        instructions: string;
      }[]
    ).find((h) => h.host === 'scans.example.invalid')!;
    expect(await row.locator('.ps-instructions').textContent()).toBe(
      `Add a TXT record to scans.example.invalid: belfry-verification=${rec.token}, then call POST /verified-host/check.`,
    );
    expect(
      await row.getByLabel('TXT record name for scans.example.invalid', { exact: true }).inputValue(),
    ).toBe('scans.example.invalid');
    expect(
      await row.getByLabel('TXT record value for scans.example.invalid', { exact: true }).inputValue(),
    ).toBe(`belfry-verification=${rec.token}`);
    // Names under .invalid are never looked up: the check fails with the server's text.
    await row.getByRole('button', { name: 'Verify now' }).click();
    await expect
      .poll(() => row.getByRole('alert').textContent())
      .toContain(
        `verification failed: no TXT record belfry-verification=${rec.token} on scans.example.invalid`,
      );
    await screenshot(page, 'port-scans-hosts');

    await row.getByRole('button', { name: 'Delete scans.example.invalid (DNS TXT record)' }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect(
      ((await t.request('GET', '/verified-host', { token: await token() })).body as { host: string }[]).map(
        (h) => h.host,
      ),
    ).toEqual(['127.0.0.1']);
  });

  it('scans a custom list live to done: open ports with banner and service, then monitors one', async () => {
    await page.goto(`${t.url}/port-scans`);
    const form = page.getByRole('form', { name: 'New scan' });
    await expect.poll(() => form.getByLabel('Host', { exact: true }).inputValue()).toBe('127.0.0.1');
    await expect
      .poll(() => form.getByLabel('Channel', { exact: true }).inputValue())
      .toBe(String(channel.id));
    await form.getByLabel('Custom list').check();
    await form.getByLabel('Custom ports').fill(`${closed}, ${ssh.port},${smtp.port},${silent.port}`);
    await form.getByLabel('Concurrency').fill('2');
    await form.getByLabel('Timeout per port (ms)').fill('500');
    await form.getByLabel('Name', { exact: true }).fill('Loopback services');
    await form.getByRole('button', { name: 'Start scan' }).click();

    // The page does not poll: the bar reaches the end on the socket's frames and the status signals.
    await expect.poll(() => chipOf('Loopback services').textContent()).toBe('done');
    await expect.poll(() => progressOf('Loopback services')).toBe(1);
    expect(await scanItem('Loopback services').textContent()).toContain('4 of 4 ports (100%)');
    const table = scanItem('Loopback services').getByRole('table', {
      name: 'Open ports of Loopback services',
    });
    const rows = table.getByRole('row');
    await expect.poll(() => rows.count()).toBe(4); // the header and three open ports
    const cells = async (port: number) =>
      (
        await rows
          .filter({ has: page.getByRole('cell', { name: String(port), exact: true }) })
          .getByRole('cell')
          .allTextContents()
      ).slice(0, 3);
    expect(await cells(ssh.port)).toEqual([String(ssh.port), 'ssh', 'SSH-2.0-test']);
    expect(await cells(smtp.port)).toEqual([String(smtp.port), 'smtp', '220 mail.belfry.test ESMTP ready']);
    const quiet = await cells(silent.port);
    expect(quiet[0]).toBe(String(silent.port));
    expect(quiet[2]).toBe('');
    expect(await table.getByRole('cell', { name: String(closed), exact: true }).count()).toBe(0);
    const [scan] = await scansApi();
    expect(scan).toMatchObject({ name: 'Loopback services', status: 'done' });
    expect((await t.request('GET', `/port-scan/${scan!.id}`, { token: await token() })).body).toMatchObject({
      ports: [closed, ssh.port, smtp.port, silent.port].sort((a, b) => a - b).join(','),
      concurrency: 2,
      timeoutMs: 500,
      appid: channel.id,
    });
    await showScans();
    await screenshot(page, 'port-scans');

    // "Monitor this port" makes a port monitor of the scan's host and port, and links to it.
    const sshRow = rows.filter({ has: page.getByRole('cell', { name: String(ssh.port), exact: true }) });
    await sshRow.getByRole('button', { name: 'Monitor this port' }).click();
    const link = sshRow.getByRole('link', { name: `Open monitor 127.0.0.1:${ssh.port}` });
    await link.waitFor();
    const monitors = (await t.request('GET', '/port-monitor', { token: await token() })).body as {
      id: number;
      host: string;
      port: number;
      appid: number;
      name: string;
    }[];
    expect(monitors).toMatchObject([
      { host: '127.0.0.1', port: ssh.port, appid: channel.id, name: `127.0.0.1:${ssh.port}` },
    ]);
    // The other ports still offer the button; after a reload the monitored one still links.
    expect(await table.getByRole('button', { name: 'Monitor this port' }).count()).toBe(2);
    await page.reload();
    await link.waitFor();
    await link.click();
    await page.getByRole('heading', { name: `127.0.0.1:${ssh.port}`, level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe(`?kind=port-monitor&id=${monitors[0]!.id}`);
  });

  it('queues a second scan behind a running one, moves the bar live, cancels both, renames and restarts', async () => {
    await page.getByRole('link', { name: 'Port scans', exact: true }).click();
    const form = page.getByRole('form', { name: 'New scan' });
    await expect.poll(() => form.getByLabel('Host', { exact: true }).inputValue()).toBe('127.0.0.1');
    // Every port at the server's rate cap (5,000 connects a second) runs for 13 s at least.
    await form.getByLabel('All 65,535').check();
    await form.getByLabel('Name', { exact: true }).fill('Everything');
    await form.getByRole('button', { name: 'Start scan' }).click();
    await expect.poll(() => chipOf('Everything').textContent()).toBe('running');
    await form.getByLabel('Top 100').check();
    await form.getByLabel('Name', { exact: true }).fill('Waiting one');
    await form.getByRole('button', { name: 'Start scan' }).click();
    await expect.poll(() => chipOf('Waiting one').textContent()).toBe('queued');
    expect(await scanItem('Waiting one').textContent()).toContain('next');

    // The running scan's bar moves on the frames while it runs.
    // No status changes meanwhile, so no signal reloads the list: only the frames can move it twice.
    await expect.poll(() => progressOf('Everything')).toBeGreaterThan(0);
    const first = await progressOf('Everything');
    await expect.poll(() => progressOf('Everything')).toBeGreaterThan(first);
    expect(await progressOf('Everything')).toBeLessThan(1);
    expect(await chipOf('Everything').textContent()).toBe('running');
    await showScans();
    await screenshot(page, 'port-scans-running');

    // Cancel the queued one, then the running one.
    await scanItem('Waiting one').getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => chipOf('Waiting one').textContent()).toBe('cancelled');
    expect(await chipOf('Everything').textContent()).toBe('running');
    await scanItem('Everything').getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => chipOf('Everything').textContent()).toBe('cancelled');
    const statuses = Object.fromEntries((await scansApi()).map((s) => [s.name, s.status]));
    expect(statuses).toEqual({
      Everything: 'cancelled',
      'Waiting one': 'cancelled',
      'Loopback services': 'done',
    });
    expect(await progressOf('Everything')).toBeLessThan(1);

    // Rename (PATCH), then restart: it runs again and finishes.
    await scanItem('Waiting one').getByRole('button', { name: 'Rename' }).click();
    const rename = page.getByRole('form', { name: 'Rename Waiting one' });
    await rename.getByLabel('Name', { exact: true }).fill('Top ports');
    await rename.getByLabel('Notes').fill('weekly check');
    await rename.getByRole('button', { name: 'Save' }).click();
    await scanItem('Top ports').waitFor();
    expect(await scanItem('Top ports').textContent()).toContain('weekly check');
    const renamed = (await scansApi()).find((s) => s.name === 'Top ports')!;
    expect(renamed).toMatchObject({ status: 'cancelled', notes: 'weekly check' });
    await scanItem('Top ports').getByRole('button', { name: 'Restart' }).click();
    await expect.poll(() => chipOf('Top ports').textContent()).toBe('done');
    await expect.poll(() => progressOf('Top ports')).toBe(1);
    expect(await scanItem('Top ports').textContent()).toContain('100 of 100 ports (100%)');
  });

  it('has no axe-core findings on the port scans page', async () => {
    await page.goto(`${t.url}/port-scans`);
    await scanItem('Top ports').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await axeFindings(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await axeFindings(page)).toEqual([]);
  });
});

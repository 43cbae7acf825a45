import { createTransport } from 'nodemailer';
import type { BrowserContext, Page } from 'playwright-core';
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

interface MailEvent {
  id: number;
  subject: string;
  matchedRuleId: number | null;
  action: string;
  messageId: number | null;
}

/**
 * Email inboxes end to end (issue 18, wire-families §10): an inbox made in the page, its copied address
 * taking real mail over SMTP on loopback, a mail opened, a rule made from it that drops the next one,
 * rules reordered. Steps build on each other.
 */
describe.skipIf(!hasChromium)('email inboxes in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  let smtpPort = 0;
  let address = '';
  let inboxId = 0;
  const ids: { drop?: number; everything?: number; first?: number } = {};
  const token = () => deviceTokenOf(page);
  const api = async <T>(method: string, path: string, json?: unknown) => {
    const res = await t.request(method, path, { token: await token(), ...(json ? { json } : {}) });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body as T;
  };
  const mailEvents = async () =>
    (await api<{ events: MailEvent[] }>('GET', `/email-inbox/event?inboxId=${inboxId}&limit=50`)).events;
  /** A real SMTP conversation with the server's listener: plain, no login. */
  const send = async (subject: string, text: string, extra: Record<string, unknown> = {}) => {
    const transport = createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    try {
      const info = await transport.sendMail({
        from: 'Backup Bot <backup@nas.example.com>',
        to: address,
        subject,
        text,
        ...extra,
      });
      expect(info.accepted).toEqual([address]);
    } finally {
      transport.close();
    }
  };
  const mails = () => page.getByRole('list', { name: 'Received mail' }).getByRole('listitem');
  const rules = () =>
    page.getByRole('list', { name: 'Rules, in the order they are tried' }).getByRole('listitem');

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer({ config: { smtpListen: '127.0.0.1:0' } });
    smtpPort = t.server.smtp?.boundPort ?? 0;
    expect(smtpPort).toBeGreaterThan(0);
    await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Backups' });
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

  it('creates an inbox with a chosen local part and copies its address; a taken one shows the 409', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Inboxes', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Email inboxes', level: 1 }).waitFor();
    await page.getByText('No inboxes yet.', { exact: false }).waitFor();
    // This server's listener is on: the page says where it takes mail, and shows no "off" notice.
    await expect
      .poll(() => page.locator('.listener-on').textContent())
      .toContain(`on 127.0.0.1:${smtpPort}.`);
    expect(await page.getByRole('status', { name: 'SMTP listener off' }).count()).toBe(0);

    await page.getByRole('button', { name: 'New inbox' }).click();
    const form = page.getByRole('form', { name: 'New inbox' });
    await form.getByLabel('Name', { exact: true }).fill('NAS backups');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Backups' });
    await form.getByLabel('Local part (optional)', { exact: true }).fill('NAS-Backups');
    await form.getByRole('button', { name: 'Create inbox' }).click();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
    const field = page.getByLabel('Address', { exact: true });
    await expect.poll(() => field.inputValue()).toMatch(/^nas-backups@[a-z0-9.-]+$/);
    address = await field.inputValue();
    await page.getByRole('button', { name: 'Copy Address' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(address);
    const list = await api<{ id: number; address: string; status: string; priority: number | null }[]>(
      'GET',
      '/email-inbox',
    );
    expect(list).toMatchObject([{ address, status: 'pending', priority: null }]);
    inboxId = list[0]!.id;
    await page.getByText('No mail yet.', { exact: false }).waitFor();

    // The same local part again: the server's 409 stands under the field.
    await page.goto(`${t.url}/inboxes?new=1`);
    const again = page.getByRole('form', { name: 'New inbox' });
    await again.getByLabel('Name', { exact: true }).fill('Twin');
    await again.getByLabel('Local part (optional)', { exact: true }).fill('nas-backups');
    await again.getByRole('button', { name: 'Create inbox' }).click();
    await expect.poll(() => again.getByRole('alert').textContent()).toBe('localPart: already taken');
    await again.getByRole('button', { name: 'Cancel' }).click();
    const row = page.getByRole('list', { name: 'Inboxes' }).getByRole('listitem');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain(address);
    expect(await row.textContent()).toContain('Backups');
    expect(await row.textContent()).toContain('pending');
  });

  it('lists mail sent over SMTP without a reload and opens one with its text and attachments', async () => {
    await page.getByRole('list', { name: 'Inboxes' }).getByRole('link', { name: 'NAS backups' }).click();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
    await send('Backup 41 failed', 'Job nightly failed: disk /dev/sdb is read-only.', {
      attachments: [{ filename: 'backup.log', content: 'line 1\nline 2\n', contentType: 'text/plain' }],
    });
    await send('Disk almost full', 'Volume 1 is 93% full.');
    await expect
      .poll(() => mails().allTextContents())
      .toEqual([expect.stringContaining('Disk almost full'), expect.stringContaining('Backup 41 failed')]);
    const events = await mailEvents();
    const failed = events.find((e) => e.subject === 'Backup 41 failed')!;
    ids.first = failed.id;
    expect(failed).toMatchObject({ action: 'message', matchedRuleId: null, messageId: expect.any(Number) });
    const row = mails().filter({ hasText: 'Backup 41 failed' });
    expect(await row.textContent()).toContain('backup@nas.example.com');
    expect(await row.textContent()).toContain('no rule (default)');
    expect(await row.getByRole('link', { name: `message #${failed.messageId}` }).count()).toBe(1);
    // The first mail turns the inbox from pending to ok.
    await expect.poll(() => page.locator('.hb-title .hb-chip').textContent()).toBe('ok');
    await screenshot(page, 'inboxes');

    await row.getByRole('link', { name: 'Backup 41 failed' }).click();
    await page.getByRole('heading', { name: 'Backup 41 failed', level: 1 }).waitFor();
    const text = page.getByRole('region', { name: 'Text' });
    expect(await text.textContent()).toContain('disk /dev/sdb is read-only');
    const attachments = page.getByRole('list', { name: 'Attachments' }).getByRole('listitem');
    expect(await attachments.allTextContents()).toEqual([expect.stringMatching(/backup\.log.*text\/plain/)]);
    expect(await page.getByRole('link', { name: `message #${failed.messageId}` }).count()).toBe(1);
    expect(await axeFindings(page)).toEqual([]);
  });

  it('makes a rule from the mail, saved to drop: the next matching mail is dropped with no message', async () => {
    await page.getByRole('button', { name: 'Make a rule from this mail' }).click();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.waitFor();
    // The server's draft: the sender's address and the subject with its digits as \d+.
    await expect
      .poll(() => form.getByLabel('From', { exact: true }).inputValue())
      .toBe('backup@nas.example.com');
    expect(await form.getByLabel('Subject', { exact: true }).inputValue()).toBe('/^Backup \\d+ failed$/i');
    expect(await form.getByLabel('Title template', { exact: true }).inputValue()).toBe('{{subject}}');
    expect(await form.getByTestId('rule-verdict').textContent()).toBe('This rule would take this mail.');
    expect(await form.getByTestId('rule-title-preview').textContent()).toBe('Backup 41 failed');
    await form.getByLabel('Subject', { exact: true }).fill('/^Backup \\d+ passed$/i');
    await expect
      .poll(() => form.getByTestId('rule-verdict').textContent())
      .toBe('This rule would not take this mail: subject does not match.');
    await form.getByLabel('Subject', { exact: true }).fill('/^Backup \\d+ failed$/i');
    await form.getByLabel('Name', { exact: true }).fill('Failed backups');
    await form.getByLabel('Drop (keep the mail in the list, no message)').check();
    expect(await form.getByTestId('rule-verdict').textContent()).toBe(
      'This rule would take this mail and drop it.',
    );
    await form.getByLabel('Subject', { exact: true }).scrollIntoViewIfNeeded();
    await screenshot(page, 'inboxes-rule');
    expect(await axeFindings(page)).toEqual([]);
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
    await expect.poll(() => rules().count()).toBe(1);
    const saved = await api<Record<string, unknown>[]>('GET', `/email-inbox/${inboxId}/rules`);
    expect(saved).toMatchObject([
      {
        name: 'Failed backups',
        inboxId,
        match: { from: 'backup@nas.example.com', subject: '/^Backup \\d+ failed$/i' },
        action: 'drop',
      },
    ]);
    ids.drop = saved[0]!.id as number;

    await send('Backup 42 failed', 'Again read-only.');
    const row = mails().filter({ hasText: 'Backup 42 failed' });
    await expect.poll(() => row.textContent()).toContain('dropped');
    expect(await row.textContent()).toContain('rule “Failed backups”');
    expect(await row.getByRole('link', { name: /^message #/ }).count()).toBe(0);
    expect((await mailEvents()).find((e) => e.subject === 'Backup 42 failed')).toMatchObject({
      action: 'drop',
      matchedRuleId: ids.drop,
      messageId: null,
    });
  });

  it('reorders two rules with up and down, and the first that matches takes the mail', async () => {
    await page.getByRole('button', { name: 'New rule' }).click();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Name', { exact: true }).fill('Everything');
    await form.getByLabel('Title template', { exact: true }).fill('NAS: {{subject}}');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('Failed backups'), expect.stringContaining('Everything')]);
    expect(await rules().first().textContent()).toContain('drop');
    ids.everything = (await api<{ id: number; name: string }[]>('GET', `/email-inbox/${inboxId}/rules`)).find(
      (r) => r.name === 'Everything',
    )!.id;

    await page.getByRole('button', { name: 'Move “Everything” up' }).click();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('Everything'), expect.stringContaining('Failed backups')]);
    const order = await api<{ id: number; position: number }[]>('GET', `/email-inbox/${inboxId}/rules`);
    expect([...order].sort((a, b) => a.position - b.position).map((r) => r.id)).toEqual([
      ids.everything,
      ids.drop,
    ]);
    await send('Backup 43 failed', 'Read-only once more.');
    const row = mails().filter({ hasText: 'Backup 43 failed' });
    await expect.poll(() => row.textContent()).toContain('rule “Everything”');
    const ev = (await mailEvents()).find((e) => e.subject === 'Backup 43 failed')!;
    expect(ev).toMatchObject({
      action: 'message',
      matchedRuleId: ids.everything,
      messageId: expect.any(Number),
    });
    expect(await row.getByRole('link', { name: `message #${ev.messageId}` }).count()).toBe(1);

    await page.getByRole('button', { name: 'Move “Everything” down' }).click();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('Failed backups'), expect.stringContaining('Everything')]);
    expect(await axeFindings(page)).toEqual([]);

    // The message link opens the message the rule titled, in the inbox.
    await row.getByRole('link', { name: `message #${ev.messageId}` }).click();
    const message = page.locator(`#message-${ev.messageId}`);
    await expect.poll(() => message.textContent()).toContain('NAS: Backup 43 failed');
    expect(await message.textContent()).toContain('backup@nas.example.com');
    await page.goBack();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
  });

  it('edits a rule and the inbox, and deletes a rule', async () => {
    await page.getByRole('button', { name: 'Edit “Everything”' }).click();
    const form = page.getByRole('form', { name: 'Edit rule “Everything”' });
    expect(await form.getByLabel('Title template', { exact: true }).inputValue()).toBe('NAS: {{subject}}');
    await form.getByLabel('Body', { exact: true }).fill('read-only');
    await form.getByLabel('Title template', { exact: true }).fill('{{from}}: {{subject}}');
    await form.getByLabel('Priority', { exact: true }).fill('9');
    await form.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('heading', { name: 'NAS backups', level: 1 }).waitFor();
    await expect
      .poll(async () =>
        (await api<Record<string, unknown>[]>('GET', `/email-inbox/${inboxId}/rules`)).find(
          (r) => r.id === ids.everything,
        ),
      )
      .toMatchObject({
        match: { body: 'read-only' },
        title: '{{from}}: {{subject}}',
        priority: 9,
        action: 'message',
      });
    // The list reloads after the save answered: on a loaded machine it may still show the old rule.
    await expect
      .poll(() => rules().filter({ hasText: 'Everything' }).textContent())
      .toContain('body read-only');

    await page.getByRole('button', { name: 'Delete “Everything”' }).click();
    await expect.poll(() => rules().count()).toBe(1);

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('form', { name: 'Edit inbox “NAS backups”' });
    await edit.getByLabel('Name', { exact: true }).fill('NAS');
    expect(await edit.getByLabel('Local part', { exact: true }).inputValue()).toBe('nas-backups');
    await edit.getByLabel('Local part', { exact: true }).fill('nas');
    await edit.getByLabel('Priority', { exact: true }).fill('6');
    await edit.getByRole('button', { name: 'Save inbox' }).click();
    await page.getByRole('heading', { name: 'NAS', level: 1 }).waitFor();
    const old = address;
    address = old.replace(/^nas-backups@/, 'nas@');
    await expect.poll(() => page.getByLabel('Address', { exact: true }).inputValue()).toBe(address);
    expect(
      await api<{ name: string; priority: number; address: string }>('GET', `/email-inbox/${inboxId}`),
    ).toMatchObject({ name: 'NAS', priority: 6, address });
    // The old address stops taking mail at once.
    await expect(send('To the old address', 'gone', { to: old })).rejects.toThrow(/no such inbox/);
  });

  it('pauses the inbox: mail is listed as paused with no message; resumes', async () => {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByText('Paused: mail is still taken', { exact: false }).waitFor();
    await send('Weekly report', 'All good.');
    const row = mails().filter({ hasText: 'Weekly report' });
    await expect.poll(() => row.textContent()).toContain('paused: not sent');
    expect(await row.getByRole('link', { name: /^message #/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    expect((await mailEvents()).find((e) => e.subject === 'Weekly report')).toMatchObject({
      action: 'paused',
      messageId: null,
    });
  });

  it('works at phone width: the list, the inbox and a mail, without sideways scrolling', async () => {
    const phone = await b.newPage({ phone: true });
    await signInToInbox(phone.page, t.url, t.admin);
    const fits = () => phone.page.evaluate(() => document.documentElement.scrollWidth);
    await phone.page.goto(`${t.url}/inboxes`);
    await phone.page.getByRole('list', { name: 'Inboxes' }).getByRole('listitem').first().waitFor();
    expect(await fits()).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await phone.page.goto(`${t.url}/inboxes?id=${inboxId}`);
    await phone.page.getByRole('list', { name: 'Received mail' }).getByRole('listitem').first().waitFor();
    expect(await fits()).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await screenshot(phone.page, 'inboxes-phone');
    await phone.page.goto(`${t.url}/inboxes?id=${inboxId}&mail=${ids.first}`);
    await phone.page.getByRole('heading', { name: 'Backup 41 failed', level: 1 }).waitFor();
    expect(await fits()).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await phone.page.goto(`${t.url}/inboxes?id=${inboxId}&rule=${ids.drop}`);
    await phone.page.getByRole('form', { name: 'Edit rule “Failed backups”' }).waitFor();
    expect(await fits()).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await phone.context.close();
  });

  it('deletes the inbox after a confirm: its address refuses mail', async () => {
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Email inboxes', level: 1 }).waitFor();
    await page.getByText('No inboxes yet.', { exact: false }).waitFor();
    await expect(send('After', 'gone')).rejects.toThrow(/no such inbox/);
  });

  it('on a server without the listener, says it is off and how to turn it on, and no address receives', async () => {
    const off = await startTestServer();
    const other = await b.newPage();
    try {
      const dev = (await deviceToken(off, off.admin, 'setup')).token;
      const appid = (await makeChannel(off, dev, { name: 'Router' })).id;
      const made = await off.request('POST', '/email-inbox', {
        token: dev,
        json: { appid, name: 'Router mail', localPart: 'router' },
      });
      expect(made.status).toBe(200);
      await signInToInbox(other.page, off.url, off.admin);
      await other.page.goto(`${off.url}/inboxes`);
      const notice = other.page.getByRole('status', { name: 'SMTP listener off' });
      await expect
        .poll(() => notice.textContent())
        .toContain('The SMTP listener is off: these addresses cannot receive mail.');
      expect(await notice.textContent()).toContain('--smtp-listen 127.0.0.1:2525');
      expect(await notice.textContent()).toContain('--lan');
      const row = other.page
        .getByRole('list', { name: 'Inboxes' })
        .getByRole('listitem', { name: 'Router mail' });
      expect(await row.locator('.inbox-address').textContent()).toBe('router@localhost (not receiving)');
      expect(await axeFindings(other.page)).toEqual([]);
      // The inbox itself repeats the notice.
      await row.getByRole('link', { name: 'Router mail' }).click();
      await other.page.getByRole('heading', { name: 'Router mail', level: 1 }).waitFor();
      await notice.waitFor();
    } finally {
      await other.context.close();
      await off.close();
    }
  });
});

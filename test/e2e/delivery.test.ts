import { createHmac } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { type FakeHttp, type RecordedRequest, startFakeHttp } from '../helpers/fake-http';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  axeFindings,
  type BrowserHandle,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  signInToInbox,
} from './browser';

/**
 * Re-delivery end to end: a channel's Re-delivery card and Deliveries log (docs/api.md "deliveryConfig",
 * "Delivery (re-delivery until read)") drive the real server in Chromium. The webhook adapter sends to a
 * loopback sink (fake-http) with the real request (signature, headers); `retryBaseSec: 1` as in every
 * delivery test. The server's ManualClock only moves when a step moves it, so a re-delivery waits in the
 * log as `queued` until then. Steps build on each other.
 */
describe.skipIf(!hasChromium)('re-delivery settings and log in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  let sink: FakeHttp;
  let setup: string;
  let ops: { id: number; token: string };
  const SECRET = 's3cret-signing-key';
  const hookUrl = () => `${sink.url}/hook?token=abc123`;

  const card = () => page.getByRole('region', { name: 'Re-delivery' });
  const form = () => page.getByRole('form', { name: 'Webhook delivery' });
  const log = () => page.getByRole('region', { name: 'Deliveries' });
  const logRows = () => log().getByRole('table', { name: 'Deliveries' }).locator('tbody tr');
  const summary = (label: string) => card().locator('summary', { hasText: label });
  const storedWebhook = async () => {
    const list = (await t.request('GET', '/application', { token: setup })).body as {
      id: number;
      deliveryConfig?: Record<string, unknown>;
    }[];
    return list.find((c) => c.id === ops.id)?.deliveryConfig?.webhook;
  };
  /** The sink's requests to the webhook path, oldest first. */
  const hooks = () => sink.requests.filter((r) => r.path.startsWith('/hook'));
  const signatureOk = (r: RecordedRequest, secret: string) => {
    const ts = String(r.headers['x-belfry-timestamp']);
    const want = `sha256=${createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex')}`;
    return r.headers['x-belfry-signature'] === want;
  };
  const openChannel = async (p: Page, name: string) => {
    await p.getByRole('list', { name: 'Channel tree' }).getByRole('button', { name }).click();
    await p.getByRole('region', { name: 'Re-delivery' }).waitFor();
  };
  const rowText = (row: Locator) => row.textContent().then((s) => s ?? '');
  /** Scrolls `el` to the top of the viewport, below the sticky top bar (for the README screenshots). */
  const toTop = (el: Locator) =>
    el.evaluate((node) => {
      node.scrollIntoView({ block: 'start' });
      window.scrollBy(0, -(document.querySelector('.topbar')?.getBoundingClientRect().height ?? 0) - 4);
    });

  beforeAll(async () => {
    ensureRendererBuilt();
    sink = await startFakeHttp();
    // The endpoint answers 503 for one message (a retryable error for the log), 200 for the rest.
    sink.on('POST', '/hook', (r) =>
      r.body.includes('Backup failed')
        ? { status: 503, body: { error: 'upstream down for maintenance' } }
        : { status: 200, body: { ok: true } },
    );
    t = await startTestServer({ config: { retryBaseSec: 1 } });
    setup = (await deviceToken(t, t.admin, 'setup')).token;
    ops = (await makeChannel(t, setup, { name: 'Ops' })) as { id: number; token: string };
    b = await launchBrowser();
    ({ page } = await b.newPage());
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await sink?.close();
  });

  it('sets up a webhook: a server 400 under its field first, then saved with its secrets masked', async () => {
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await openChannel(page, 'Ops');
    await expect
      .poll(() => card().getByRole('status').first().textContent())
      .toBe('No method is on: unread messages stay in Belfry.');
    expect(await page.locator('.dl-jump').textContent()).toBe('Re-delivery: off · Deliveries log');
    // Every adapter has its form, each not set up yet.
    expect(await card().locator('summary').allTextContents()).toEqual(
      [
        'Email',
        'SMS',
        'Phone call',
        'Slack',
        'Discord',
        'Microsoft Teams',
        'Mattermost',
        'Telegram',
        'Webhook',
        'PagerDuty',
        'Opsgenie',
      ].map((l) => `${l}not set up`),
    );
    await summary('Webhook').click();
    const f = form();
    expect(await f.textContent()).toContain('X-Belfry-Signature');
    // Test sends through saved settings only.
    expect(await f.getByRole('button', { name: 'Test' }).isDisabled()).toBe(true);

    // A URL the server refuses: its 400 shows under the URL.
    await f.getByLabel('URL', { exact: true }).fill('ftp://127.0.0.1/hook');
    await f.getByRole('button', { name: 'Turn on Webhook' }).click();
    await expect.poll(() => f.getByRole('alert').textContent()).toMatch(/^deliveryConfig\.webhook\.url: /);
    expect(await storedWebhook()).toBeUndefined();

    await f.getByLabel('URL', { exact: true }).fill(hookUrl());
    await f.getByLabel('Signing secret (optional)', { exact: true }).fill(SECRET);
    await f.getByRole('button', { name: 'Add header' }).click();
    await f.getByLabel('Headers 1 name', { exact: true }).fill('X-Api-Key');
    await f.getByLabel('Headers 1 value', { exact: true }).fill('k-1');
    await f.getByLabel('From priority', { exact: true }).fill('3');
    await f.getByLabel('Re-deliver after (seconds)', { exact: true }).fill('60');
    expect(await f.textContent()).toContain('Still unread after 1 minute (at most 86400)');
    await f.getByRole('button', { name: 'Turn on Webhook' }).click();
    await expect.poll(() => f.getByRole('status').first().textContent()).toBe('Saved.');
    expect(await f.getByRole('alert').count()).toBe(0);
    expect(await storedWebhook()).toEqual({
      enabled: true,
      minPriority: 3,
      delaySec: 60,
      url: `${sink.url}/hook?token=********`,
      secret: '********',
      headers: { 'X-Api-Key': '********' },
    });
    // The form shows what the server keeps: the masks.
    expect(await f.getByLabel('URL', { exact: true }).inputValue()).toBe(`${sink.url}/hook?token=********`);
    expect(await f.getByLabel('Signing secret (optional)', { exact: true }).inputValue()).toBe('********');
    expect(await f.getByLabel('Headers 1 value', { exact: true }).inputValue()).toBe('********');
    expect(await f.textContent()).toContain('Hidden values (********) are kept unless you change them.');
    expect(await summary('Webhook').textContent()).toBe('Webhookon');
    expect(await card().getByRole('status').first().textContent()).toBe('On: Webhook.');
    // The line at the top of the channel's page follows.
    await expect
      .poll(() => page.locator('.dl-jump').textContent())
      .toBe('Re-delivery: on (Webhook) · Deliveries log');
  });

  it('tests the webhook through the real adapter and shows ok; the test is in the log', async () => {
    const f = form();
    await f.getByRole('button', { name: 'Test' }).click();
    await expect
      .poll(() => f.locator('.dl-test').textContent(), { timeout: 20_000 })
      .toBe('Test sent through Webhook: ok.');
    expect(hooks()).toHaveLength(1);
    const [r] = hooks();
    expect(r!.method).toBe('POST');
    expect(r!.path).toBe('/hook?token=abc123');
    expect(r!.headers['x-belfry-event']).toBe('delivery.test');
    expect(r!.headers['x-api-key']).toBe('k-1');
    expect(signatureOk(r!, SECRET)).toBe(true);
    expect(r!.json()).toMatchObject({ event: 'delivery.test', channel: { id: ops.id, name: 'Ops' } });

    await expect.poll(() => logRows().count()).toBe(1);
    const row = logRows().first();
    expect(await rowText(row)).toMatch(/Webhook.*test.*sent/);
  });

  it('shows a re-delivery waiting as queued, a retry with its error, and a read one cancelled (read)', async () => {
    const disk = await sendMessage(t, ops.token, { title: 'Disk full', message: '/var at 97%', priority: 8 });
    // Below the adapter's minPriority 3: never queued.
    await sendMessage(t, ops.token, { title: 'FYI', message: 'low', priority: 1 });
    const diskRow = logRows().filter({ hasText: `#${disk.id}` });
    await expect.poll(() => rowText(diskRow)).toMatch(/Webhook.*message.*queued/);
    const sent = Date.parse(String(disk.date));
    const entry = (
      await t.request('GET', `/application/${ops.id}/deliveries?status=queued`, { token: setup })
    ).body.deliveries[0];
    expect(entry).toMatchObject({ messageId: disk.id, adapter: 'webhook', kind: 'redelivery', attempts: 0 });
    expect(Date.parse(entry.nextAttemptAt)).toBe(sent + 60_000);
    expect(await logRows().count()).toBe(2);

    // Read on another device: cancelled at once, shown with its reason.
    expect(
      (await t.request('POST', '/message/read', { token: setup, json: { ids: [disk.id] } })).status,
    ).toBe(200);
    await expect.poll(() => rowText(diskRow), { timeout: 15_000 }).toMatch(/cancelled \(read\)/);

    // A second message whose endpoint answers 503: after the delay it is tried, and waits for a retry.
    const backup = await sendMessage(t, ops.token, { title: 'Backup failed', message: 'nas01', priority: 6 });
    const backupRow = logRows().filter({ hasText: `#${backup.id}` });
    await expect.poll(() => rowText(backupRow)).toMatch(/queued/);
    t.clock.advance(61_000);
    await t.server.scheduler.tick();
    await expect.poll(() => rowText(backupRow), { timeout: 15_000 }).toMatch(/queued.*1.*HTTP 503/);
    // The read one was never sent.
    expect(hooks().filter((r) => r.body.includes('Disk full'))).toHaveLength(0);

    // The status filter.
    const filter = log().getByLabel('Status', { exact: true });
    await filter.selectOption('cancelled');
    await expect.poll(() => logRows().count()).toBe(1);
    expect(await rowText(logRows().first())).toContain(`#${disk.id}`);
    await filter.selectOption('failed');
    await expect.poll(() => log().getByText('No failed deliveries.').isVisible()).toBe(true);
    await filter.selectOption('');
    await expect.poll(() => logRows().count()).toBe(3);
    await toTop(log());
    await screenshot(page, 'deliveries');
  });

  it('keeps the masked secrets when saved untouched, and asks for them again for a new URL', async () => {
    const f = form();
    // Another URL with the secrets still masked: the server refuses, the form says why.
    await f.getByLabel('URL', { exact: true }).fill(`${sink.url}/other`);
    await f.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => f.getByRole('alert').textContent())
      .toBe('deliveryConfig.webhook: the url changed; enter its secrets again instead of the mask');
    await f.getByRole('button', { name: 'Discard changes' }).click();
    expect(await f.getByLabel('URL', { exact: true }).inputValue()).toBe(`${sink.url}/hook?token=********`);
    expect(await f.getByRole('alert').count()).toBe(0);

    await f.getByLabel('Re-deliver after (seconds)', { exact: true }).fill('120');
    await f.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => f.getByRole('status').first().textContent()).toBe('Saved.');
    expect(await storedWebhook()).toEqual({
      enabled: true,
      minPriority: 3,
      delaySec: 120,
      url: `${sink.url}/hook?token=********`,
      secret: '********',
      headers: { 'X-Api-Key': '********' },
    });
    // The kept values are the real ones: the next test carries the token, the header and the signature.
    const before = hooks().length;
    await f.getByRole('button', { name: 'Test' }).click();
    await expect
      .poll(() => f.locator('.dl-test').textContent(), { timeout: 20_000 })
      .toBe('Test sent through Webhook: ok.');
    const r = hooks()[before]!;
    expect(r.path).toBe('/hook?token=abc123');
    expect(r.headers['x-api-key']).toBe('k-1');
    expect(signatureOk(r, SECRET)).toBe(true);

    await toTop(summary('Webhook'));
    await screenshot(page, 'delivery');
  });

  it('pages the log: older deliveries on request', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await t.request('POST', `/application/${ops.id}/delivery/test`, {
        token: setup,
        json: { adapter: 'webhook' },
      });
      expect(res.body).toEqual({ results: { webhook: { ok: true } } });
    }
    await log().getByRole('button', { name: 'Refresh' }).click();
    // The first page: 20 of the 24 entries, newest first.
    await expect.poll(() => logRows().count()).toBe(20);
    expect(await logRows().allTextContents()).toEqual(Array(20).fill(expect.stringMatching(/test.*sent/)));
    await log().getByRole('button', { name: 'Load older deliveries' }).click();
    // 2 UI tests + 20 API tests + the 2 messages queued above.
    await expect.poll(() => logRows().count()).toBe(24);
    expect(await log().getByRole('button', { name: 'Load older deliveries' }).count()).toBe(0);
  });

  it('shows a re-delivery held for quiet hours, sent once quiet hours are turned off in Account', async () => {
    // Quiet from 11:00 to 14:00 UTC every day; the clock is at about 12:01 UTC.
    const qh = await t.request('PUT', '/current/user/quiet-hours', {
      token: setup,
      json: { enabled: true, timezone: 'UTC', start: '11:00', end: '14:00', days: [1, 2, 3, 4, 5, 6, 7] },
    });
    expect(qh.status).toBe(200);
    const report = await sendMessage(t, ops.token, { title: 'Nightly report', message: 'ok', priority: 5 });
    const row = logRows().filter({ hasText: `#${report.id}` });
    await expect.poll(() => rowText(row)).toMatch(/queued/);
    // Due (the delay is 120 s now) inside the quiet window and below its let-through priority: held.
    t.clock.advance(121_000);
    await t.server.scheduler.tick();
    await expect.poll(() => rowText(row), { timeout: 15_000 }).toMatch(/queued.*held for quiet hours until/);
    expect(hooks().filter((r) => r.body.includes('Nightly report'))).toHaveLength(0);

    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const form = page.getByRole('form', { name: 'Quiet hours' });
    expect(await form.textContent()).toContain(
      'their re-deliveries (email, SMS, Slack, … set up under Channels) wait',
    );
    expect(await form.textContent()).toContain('one digest per channel and method');
    await form.getByLabel('Keep notifications quiet at night').uncheck();
    await form.getByRole('button', { name: 'Save quiet hours' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Saved.');
    // Released at once: the next scheduler turn sends it.
    await t.server.scheduler.tick();
    await expect.poll(() => hooks().filter((r) => r.body.includes('Nightly report')).length).toBe(1);

    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await openChannel(page, 'Ops');
    await expect.poll(() => rowText(logRows().filter({ hasText: `#${report.id}` }))).toMatch(/message.*sent/);
  });

  it('works at phone size in the dark theme, with no axe findings', async () => {
    const phone = await b.newPage({ phone: true });
    const p = phone.page;
    await p.emulateMedia({ colorScheme: 'dark' });
    await signInToInbox(p, t.url, t.admin);
    await p.goto(`${t.url}/channels`);
    await openChannel(p, 'Ops');
    await p.getByRole('region', { name: 'Re-delivery' }).locator('summary', { hasText: 'Webhook' }).click();
    await p.getByRole('form', { name: 'Webhook delivery' }).waitFor();
    await p.getByRole('region', { name: 'Re-delivery' }).locator('summary', { hasText: 'SMS' }).click();
    await p.getByRole('form', { name: 'SMS delivery' }).waitFor();
    await p.getByRole('table', { name: 'Deliveries' }).waitFor();
    // The jump link at the top of the page brings the log's heading into view, below the top bar.
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.getByRole('link', { name: 'Deliveries log' }).click();
    const heading = p.getByRole('heading', { name: 'Deliveries', exact: true });
    await expect
      .poll(async () => {
        const top = (await heading.boundingBox())?.y ?? -1;
        const bar = (await p.locator('.topbar').boundingBox())?.height ?? 0;
        return top >= bar && top < 844 / 2;
      })
      .toBe(true);
    // Nothing wider than the screen: the log's rows become blocks that name their fields.
    expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    const firstRow = p.getByRole('table', { name: 'Deliveries' }).locator('tbody tr').first();
    expect(await firstRow.getByText('Attempts:').isVisible()).toBe(true);
    expect(await axeFindings(p)).toEqual([]);
    await phone.context.close();
    // And the desktop page in the light theme, forms open.
    expect(await axeFindings(page)).toEqual([]);
  });
});

import { Cron } from 'croner';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  signInToInbox,
} from './browser';

/**
 * Heartbeats end to end: the page drives the real API (docs/api.md "Heartbeats") in Chromium, a job's
 * pings are plain fetches of the ping URL the page showed, and missed deadlines come from the server's
 * ManualClock and one scheduler tick. Steps build on each other.
 */
describe.skipIf(!hasChromium)('heartbeats in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  /** A second tab on the channel list, to watch the health dot change live. */
  let channelsTab: Page;
  let channel: { id: number };
  const hb: { id?: number; url?: string } = {};
  const token = () => deviceTokenOf(page);
  const chip = (p: Page) => p.locator('.hb-title .hb-chip');
  const record = async () =>
    (await t.request('GET', `/heartbeat/${hb.id}`, { token: await token() })).body as {
      status: string;
      expectedAt: string | null;
      deadlineAt: string | null;
      paused: boolean;
    };
  /**
   * Moves the server's clock to `at` and runs what fell due, then one second more: status signals on
   * the SSE stream are coalesced per channel per second, and on a ManualClock that second only ends
   * when the clock moves (the system clock ends it with a timer).
   */
  const passTo = async (at: number) => {
    t.clock.advance(at - t.clock.now());
    await t.server.scheduler.tick();
    t.clock.advance(1_000);
  };
  const dot = (p: Page) =>
    p
      .getByRole('list', { name: 'Channel tree' })
      .getByRole('button', { name: /^Backups/ })
      .getByRole('img');

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Backups' });
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

  it('creates a heartbeat on a cron schedule and previews its next fire times in the chosen zone', async () => {
    await page.getByRole('link', { name: 'Heartbeats', exact: true }).click();
    await page.getByRole('heading', { name: 'Heartbeats', level: 1 }).waitFor();
    await expect.poll(() => page.getByText('No heartbeats yet.', { exact: false }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New heartbeat' }).click();
    const form = page.getByRole('form', { name: 'New heartbeat' });
    await form.getByLabel('Name', { exact: true }).fill('Nightly backup');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Backups' });
    await form.getByLabel('Cron schedule').check();
    await form.getByLabel('Cron expression', { exact: true }).fill('30 2 * * *');
    await form.getByLabel('Time zone', { exact: true }).fill('Asia/Tokyo');
    await form.getByLabel('Grace period', { exact: true }).fill('5');
    await form.getByLabel('Grace period unit', { exact: true }).selectOption('m');
    // Five fire times, read in Tokyo: 02:30 local, exactly what croner computes here for that zone.
    const fires = form.getByRole('list', { name: 'Next fire times' }).locator('time');
    await expect.poll(() => fires.count()).toBe(5);
    const expected = new Cron('30 2 * * *', { timezone: 'Asia/Tokyo' })
      .nextRuns(5, new Date())
      .map((d) => d.toISOString());
    expect(await fires.evaluateAll((els) => els.map((e) => e.getAttribute('datetime')))).toEqual(expected);
    expect(await fires.first().textContent()).toMatch(/02:30/);
    expect(await fires.first().textContent()).toMatch(/GMT\+9/);
    // A typo is explained before anything is sent.
    await form.getByLabel('Cron expression', { exact: true }).fill('30 2 * *');
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('5 fields');
    await form.getByLabel('Cron expression', { exact: true }).fill('30 2 * * *');
    await expect.poll(() => fires.count()).toBe(5);
    await screenshot(page, 'heartbeat-form');
    await form.getByRole('button', { name: 'Create heartbeat' }).click();
    await page.getByRole('heading', { name: 'Nightly backup', level: 1 }).waitFor();
    const list = (await t.request('GET', '/heartbeat', { token: await token() })).body as Record<
      string,
      unknown
    >[];
    expect(list).toMatchObject([
      {
        name: 'Nightly backup',
        appid: channel.id,
        schedule: '30 2 * * *',
        intervalSec: null,
        timezone: 'Asia/Tokyo',
        graceSec: 300,
        priority: 8,
        manualResume: false,
        status: 'new',
      },
    ]);
    hb.id = list[0]!.id as number;
    expect(await chip(page).textContent()).toBe('new');
  });

  it('shows the ping URL once, copies it, and a ping turns the heartbeat up live', async () => {
    const url = page.getByLabel('Ping URL (shown once)', { exact: true });
    await expect.poll(() => url.inputValue()).toMatch(/\/heartbeat\/ping\/H[A-Za-z0-9]+$/);
    hb.url = await url.inputValue();
    await page.getByRole('button', { name: 'Copy Ping URL (shown once)' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(hb.url);
    // The ready lines carry the same URL: curl with retries, a crontab line, the exit-code variant.
    expect(
      await page.getByLabel('In a crontab: ping when the job succeeds', { exact: true }).inputValue(),
    ).toBe(`30 2 * * * /path/to/job.sh && curl -fsS -m 10 --retry 5 ${hb.url}`);
    expect(
      await page
        .getByLabel('Report the exit code (0 is success, 1-255 a failure)', { exact: true })
        .inputValue(),
    ).toBe(`/path/to/job.sh; curl -fsS -m 10 --retry 5 ${hb.url}/$?`);

    // A second tab on the channel list: the health dot says the channel waits for a first ping.
    channelsTab = await context.newPage();
    await channelsTab.goto(`${t.url}/channels`);
    await expect.poll(() => dot(channelsTab).getAttribute('aria-label')).toMatch(/^Heartbeats pending/);

    const res = await fetch(hb.url);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: 'up' });
    await expect.poll(() => chip(page).textContent()).toBe('up');
    await expect.poll(() => dot(channelsTab).getAttribute('aria-label')).toMatch(/^Heartbeats ok/);
  });

  it('turns down live when the deadline passes, and the channel’s dot turns alerting', async () => {
    const { deadlineAt } = await record();
    expect(deadlineAt).not.toBeNull();
    await passTo(Date.parse(deadlineAt!) + 1_000);
    await expect.poll(() => chip(page).textContent()).toBe('down');
    await expect
      .poll(() => dot(channelsTab).getAttribute('aria-label'))
      .toBe('Heartbeats alerting: 1 of 1 heartbeat down');
    // The inbox tree shows the same dot, and the down message.
    await channelsTab.goto(`${t.url}/inbox`);
    await expect
      .poll(() =>
        channelsTab
          .getByRole('complementary', { name: 'Channels' })
          .getByRole('img', { name: /^Heartbeats alerting/ })
          .count(),
      )
      .toBe(1);
    await expect
      .poll(() => channelsTab.getByRole('heading', { name: 'Nightly backup is down' }).isVisible())
      .toBe(true);
    await channelsTab.close();
  });

  it('keeps a failed run’s exit code, reason and output in the ping log', async () => {
    const res = await fetch(`${hb.url}/3`, { method: 'POST', body: 'rsync: connection refused\n' });
    expect(res.status).toBe(200);
    const log = page.getByRole('table', { name: 'Pings' });
    await expect.poll(() => log.locator('tbody tr').count()).toBe(2);
    const failed = log.locator('tbody tr').first();
    expect(await failed.locator('td').nth(1).textContent()).toBe('failure (exit 3)');
    expect(await failed.locator('td').nth(2).textContent()).toBe('down');
    expect(await failed.textContent()).toContain('exit status 3');
    await failed.getByText(/^Body \(26 bytes\)$/).click();
    expect(await failed.locator('pre').textContent()).toBe('rsync: connection refused\n');
    expect(await log.locator('tbody tr').nth(1).locator('td').nth(1).textContent()).toBe('success');
  });

  it('pauses and resumes', async () => {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect.poll(() => chip(page).textContent()).toBe('paused');
    expect(await record()).toMatchObject({ status: 'paused', paused: true, deadlineAt: null });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await expect.poll(() => chip(page).textContent()).toBe('up');
    expect(await record()).toMatchObject({ status: 'up', paused: false });
  });

  it('sends a test alert, and a new ping URL retires the old one', async () => {
    await page.getByRole('button', { name: 'Send test alert' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Test alert sent' }).textContent())
      .toBe('Test alert sent: “[Test] Nightly backup is down”.');
    await page.getByRole('button', { name: 'New ping URL' }).click();
    const url = page.getByLabel('Ping URL (shown once)', { exact: true });
    await expect.poll(() => url.inputValue()).not.toBe(hb.url);
    expect((await fetch(hb.url!)).status).toBe(404);
    hb.url = await url.inputValue();
    expect((await fetch(hb.url)).status).toBe(200);
  });

  it('shows the uptime figures and the 90-day bar, in the detail and in the list', async () => {
    // Six more nights, each job pinging a minute after its fire time (within the grace): six days up.
    for (let night = 0; night < 6; night++) {
      const { expectedAt } = await record();
      t.clock.advance(Date.parse(expectedAt!) - t.clock.now() + 60_000);
      expect((await fetch(hb.url!)).status).toBe(200);
    }
    const uptime = page.getByRole('region', { name: 'Uptime' });
    await expect.poll(() => uptime.getByRole('img', { name: /^90-day uptime / }).count()).toBe(1);
    const bars = uptime.locator('.uptime-day');
    expect(await bars.count()).toBe(90);
    const hist = (await t.request('GET', `/monitor-history/heartbeat/${hb.id}`, { token: await token() }))
      .body as { uptime: Record<string, number | null>; days: { status: string }[] };
    expect(hist.days.slice(-7).map((d) => d.status)).toEqual(['down', 'up', 'up', 'up', 'up', 'up', 'up']);
    // The page follows the pings (service frames) to the same figures and bars as the API.
    const figures = ['24h', '7d', '30d', '90d'].map((w) =>
      hist.uptime[w] === null ? 'no data' : `${hist.uptime[w]} %`,
    );
    await expect.poll(() => uptime.locator('dd').allTextContents()).toEqual(figures);
    expect(figures[0]).toBe('100 %');
    expect(figures[1]).not.toBe('100 %');
    await expect
      .poll(() => bars.evaluateAll((els) => els.slice(-7).map((e) => e.className)))
      .toEqual(['down', 'up', 'up', 'up', 'up', 'up', 'up'].map((s) => `uptime-day ${s}`));

    await page.getByRole('link', { name: '← All heartbeats' }).click();
    const row = page.getByRole('list', { name: 'Heartbeats' }).getByRole('listitem');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.hb-chip').textContent()).toBe('up');
    expect(await row.textContent()).toContain('cron 30 2 * * * (Asia/Tokyo)');
    await expect.poll(() => row.getByRole('img', { name: /^90-day uptime / }).count()).toBe(1);
    // The filter by channel: another channel has none.
    await makeChannel(t, await token(), { name: 'Other' });
    await page.reload();
    await page.getByLabel('Channel', { exact: true }).selectOption({ label: 'Other' });
    await expect.poll(() => page.getByText('No heartbeats write to this channel.').isVisible()).toBe(true);
    await page.getByLabel('Channel', { exact: true }).selectOption({ label: 'Backups' });
    await expect.poll(() => row.count()).toBe(1);
    // Two more, made through the API: one waiting for its first ping, one paused. All channels again.
    for (const body of [
      { name: 'Home router', intervalSec: 300 },
      { name: 'Photo sync', intervalSec: 3_600, paused: true },
    ]) {
      const res = await t.request('POST', '/heartbeat', {
        token: await token(),
        json: { appid: channel.id, ...body },
      });
      expect(res.status).toBe(200);
    }
    await page.getByLabel('Channel', { exact: true }).selectOption({ label: 'All channels' });
    await expect
      .poll(() => row.evaluateAll((els) => els.map((e) => e.querySelector('.hb-chip')?.textContent)))
      .toEqual(['up', 'new', 'paused']);
    expect(await row.nth(1).textContent()).toContain('after the first ping');
    expect(await row.nth(2).textContent()).toContain('none while paused');
    await screenshot(page, 'heartbeats');
    // The heartbeat again: the URL is masked now, the examples folded, its state, uptime and log in view.
    await page.getByRole('link', { name: 'Nightly backup' }).click();
    await page.getByRole('table', { name: 'Pings' }).waitFor();
    expect(await page.getByLabel('Ping URL (shown once)', { exact: true }).count()).toBe(0);
    await screenshot(page, 'heartbeat');
  });

  it('edits it: from cron to an interval, a longer grace and an alert message', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit “Nightly backup”' });
    // The form opens with the stored values.
    expect(await form.getByLabel('Cron expression', { exact: true }).inputValue()).toBe('30 2 * * *');
    expect(await form.getByLabel('Time zone', { exact: true }).inputValue()).toBe('Asia/Tokyo');
    expect(await form.getByLabel('Grace period', { exact: true }).inputValue()).toBe('5');
    await form.getByLabel('Every fixed interval').check();
    await form.getByLabel('Ping every', { exact: true }).fill('6');
    await form.getByLabel('Ping every unit', { exact: true }).selectOption('h');
    await form.getByLabel('Grace period', { exact: true }).fill('10');
    await form.getByLabel('Alert message', { exact: true }).fill('Check the NAS');
    await expect
      .poll(() => form.getByRole('region', { name: 'Preview' }).textContent())
      .toContain('every 6h, grace 10m');
    await form.getByRole('button', { name: 'Save heartbeat' }).click();
    await expect.poll(() => form.count()).toBe(0);
    const saved = (await t.request('GET', `/heartbeat/${hb.id}`, { token: await token() })).body;
    expect(saved).toMatchObject({
      intervalSec: 21_600,
      schedule: null,
      graceSec: 600,
      alertMessage: 'Check the NAS',
    });
    await expect
      .poll(() => page.getByRole('region', { name: 'State' }).textContent())
      .toContain('every 6h, grace 10m');
  });

  it('turns late live within the grace, and the channel’s dot says degraded', async () => {
    expect((await fetch(hb.url!)).status).toBe(200);
    await expect.poll(async () => (await record()).status).toBe('up');
    const { expectedAt } = await record();
    const other = await context.newPage();
    await other.goto(`${t.url}/channels`);
    // Home router waits for its first ping; Photo sync is paused and not counted.
    await expect
      .poll(() => dot(other).getAttribute('aria-label'))
      .toBe('Heartbeats ok: none of 2 late or down, 1 waiting for a first ping');
    await passTo(Date.parse(expectedAt!) + 60_000);
    await expect.poll(() => chip(page).textContent()).toBe('late');
    await expect
      .poll(() => dot(other).getAttribute('aria-label'))
      .toBe('Heartbeats degraded: 1 of 2 heartbeats late');
    await other.close();
  });

  it('pages the ping log: 20 at a time, older ones on request', async () => {
    for (let i = 1; i <= 15; i++) {
      const res = await fetch(`${hb.url}/log`, { method: 'POST', body: `progress ${i}` });
      expect(res.status).toBe(200);
    }
    const total = (
      await t.request('GET', `/monitor-history/heartbeat/${hb.id}/log?limit=200`, { token: await token() })
    ).body.checks.length as number;
    expect(total).toBeGreaterThan(20);
    const rows = page.getByRole('table', { name: 'Pings' }).locator('tbody tr');
    await expect.poll(() => rows.first().textContent()).toContain('progress 15');
    expect(await rows.count()).toBe(20);
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('log');
    await page.getByRole('button', { name: 'Load older pings' }).click();
    await expect.poll(() => rows.count()).toBe(total);
    expect(await page.getByRole('button', { name: 'Load older pings' }).count()).toBe(0);
  });
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { type FakeHttp, startFakeHttp } from '../helpers/fake-http';
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
 * Maintenance windows end to end: the Maintenance screen drives the real API (docs/api.md "Maintenance
 * windows") in Chromium, in a UTC browser, for a weekly window kept in Europe/Berlin. The server's
 * ManualClock starts on Thursday 2026-01-15 12:00 UTC (13:00 in Berlin); the window starts and ends on
 * the server's clock and the page follows by the channels' live status signals. Steps build on each other.
 */
describe.skipIf(!hasChromium)('maintenance windows in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  let setup: string;
  let target: FakeHttp;
  const hb: { ops?: number; web?: number } = {};
  let monitorId = 0;
  const token = () => deviceTokenOf(page);
  const rows = () => page.getByRole('list', { name: 'Maintenance windows' }).getByRole('listitem');
  /** Moves the server's clock to `at`, runs what fell due, then one second more (SSE signals are coalesced per second). */
  const passTo = async (at: number) => {
    t.clock.advance(at - t.clock.now());
    await t.server.scheduler.tick();
    t.clock.advance(1_000);
  };
  const status = async (id: number | undefined, kind = 'heartbeat') =>
    ((await t.request('GET', `/${kind}/${id}`, { token: setup })).body as { status: string }).status;

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    setup = (await deviceToken(t, t.admin, 'setup')).token;
    const ops = await makeChannel(t, setup, { name: 'Ops' });
    await makeChannel(t, setup, { name: 'Ops database', parentId: ops.id });
    const web = await makeChannel(t, setup, { name: 'Web' });
    // One heartbeat in the window's channel, one elsewhere picked by itself, one left out; all pinged up.
    for (const [key, appid, name] of [
      ['ops', ops.id, 'Nightly backup'],
      ['web', web.id, 'Web check'],
      ['other', web.id, 'Mail queue'],
    ] as const) {
      const res = await t.request('POST', '/heartbeat', {
        token: setup,
        json: { appid, name, intervalSec: 86_400, graceSec: 3_600 },
      });
      expect(res.status).toBe(200);
      if (key !== 'other') hb[key] = res.body.id;
      expect((await t.request('GET', `/heartbeat/ping/${res.body.token}`)).status).toBe(200);
    }
    // And a monitor of the window's channel, checking a loopback target every minute: up.
    target = await startFakeHttp();
    target.on('GET', '/health', { status: 200, body: { ok: true } });
    const mon = await t.request('POST', '/monitor', {
      token: setup,
      json: { appid: ops.id, name: 'Status API', url: `${target.url}/health`, intervalSec: 60 },
    });
    expect(mon.status).toBe(200);
    monitorId = mon.body.id;
    // The first check runs on create; one tick returns once its result is applied.
    await t.server.scheduler.tick();
    expect(await status(monitorId, 'monitor')).toBe('up');
    b = await launchBrowser();
    // A UTC browser: the list shows each occurrence in UTC and, besides, in the window's own zone.
    const context = await b.browser.newContext({ viewport: { width: 1280, height: 820 }, timezoneId: 'UTC' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await target?.close();
  });

  it('creates a weekly window in Berlin time, with a server error shown by its field first', async () => {
    await page.getByRole('link', { name: 'Maintenance', exact: true }).click();
    await page.getByRole('heading', { name: 'Maintenance', level: 1 }).waitFor();
    await expect
      .poll(() => page.getByText('No maintenance windows yet.', { exact: false }).isVisible())
      .toBe(true);
    await page.getByRole('button', { name: 'New window' }).click();
    const form = page.getByRole('form', { name: 'New maintenance window' });
    await form.getByLabel('Name', { exact: true }).fill('Thursday deploy');
    // The zone defaults to the browser's.
    expect(await form.getByLabel('Time zone', { exact: true }).inputValue()).toBe('UTC');
    await form.getByLabel('Thursday', { exact: true }).check();
    await form.getByLabel('Start time', { exact: true }).fill('14:00');
    await form.getByLabel('End time', { exact: true }).fill('15:00');
    await form.getByLabel('Time zone', { exact: true }).selectOption('Europe/Berlin');
    expect(await form.textContent()).toContain('Each occurrence lasts 1h.');

    // Nothing covered yet: the server's 400 shows under the channels.
    await form.getByRole('button', { name: 'Create window' }).click();
    const channelsBox = form.getByRole('group', { name: 'Channels' });
    await expect
      .poll(() => channelsBox.getByRole('alert').textContent())
      .toMatch(/^channelIds: a window must cover at least one channel or monitor/);

    const channelPicks = form.getByRole('list', { name: 'Channels' });
    // Tree order: the sub-channel right under its parent.
    expect(await channelPicks.getByRole('listitem').allTextContents()).toEqual([
      expect.stringContaining('Ops'),
      expect.stringContaining('Ops database'),
      expect.stringContaining('Web'),
    ]);
    await channelPicks.getByLabel('Ops', { exact: true }).check();
    await form.getByLabel('Include sub-channels', { exact: true }).check();
    await form
      .getByRole('list', { name: 'Heartbeats and monitors' })
      .getByRole('checkbox', { name: /^Web check/ })
      .check();
    await form.getByRole('button', { name: 'Create window' }).click();

    await page.getByRole('heading', { name: 'Maintenance', level: 1 }).waitFor();
    const row = rows().filter({ hasText: 'Thursday deploy' });
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('scheduled');
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('Thu 14:00–15:00 Europe/Berlin');
    // Today 13:00-14:00 UTC, that is 14:00-15:00 in Berlin (CET, UTC+1 in January).
    expect(text).toMatch(/Next occurrence\s*Thu, Jan 15, 2026, 13:00 UTC – Thu, Jan 15, 2026, 14:00 UTC/);
    expect(text).toMatch(/14:00 GMT\+1 – .*15:00 GMT\+1 \(Europe\/Berlin\)/);
    expect(text).toContain('Ops, Ops database');
    expect(text).toContain('Web check');

    const list = (await t.request('GET', '/maintenance-window', { token: await token() })).body;
    expect(list).toEqual([
      expect.objectContaining({
        name: 'Thursday deploy',
        includeSubtree: true,
        monitors: [{ kind: 'heartbeat', id: hb.web }],
        schedule: { type: 'weekly', timezone: 'Europe/Berlin', days: [4], start: '14:00', end: '15:00' },
        enabled: true,
        active: false,
        nextStart: '2026-01-15T13:00:00.000Z',
        nextEnd: '2026-01-15T14:00:00.000Z',
      }),
    ]);
  });

  it('turns active when the window starts, and the covered heartbeats and monitor show maintenance', async () => {
    await passTo(Date.parse('2026-01-15T13:00:00.000Z'));
    const row = rows().filter({ hasText: 'Thursday deploy' });
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('active');
    expect(await row.textContent()).toMatch(/Now, until Thu, Jan 15, 2026, 14:00 UTC/);
    await screenshot(page, 'maintenance');
    expect(await status(hb.ops)).toBe('maintenance');
    expect(await status(hb.web)).toBe('maintenance');
    expect(await status(monitorId, 'monitor')).toBe('maintenance');

    // Checks go on during the window; the monitor stays in maintenance.
    await passTo(Date.parse('2026-01-15T13:02:00.000Z'));
    await page.getByRole('link', { name: 'Monitors', exact: true }).click();
    const monRow = page.getByRole('list', { name: 'Monitors' }).getByRole('listitem', { name: 'Status API' });
    await expect.poll(() => monRow.locator('.hb-chip').textContent()).toBe('maintenance');

    await page.getByRole('link', { name: 'Heartbeats', exact: true }).click();
    const hbRows = page.getByRole('list', { name: 'Heartbeats' }).getByRole('listitem');
    const chipOf = (name: string) => hbRows.filter({ hasText: name }).locator('.hb-chip');
    await expect.poll(() => chipOf('Nightly backup').textContent()).toBe('maintenance');
    expect(await chipOf('Web check').textContent()).toBe('maintenance');
    expect(await chipOf('Mail queue').textContent()).toBe('up');

    // At its end the window waits for next Thursday and the heartbeats are up again.
    await passTo(Date.parse('2026-01-15T14:00:00.000Z'));
    await expect.poll(() => chipOf('Nightly backup').textContent()).toBe('up');
    expect(await status(hb.web)).toBe('up');
    expect(await status(monitorId, 'monitor')).toBe('up');
    await page.getByRole('link', { name: 'Maintenance', exact: true }).click();
    await expect
      .poll(() => rows().filter({ hasText: 'Thursday deploy' }).textContent())
      .toMatch(/Next occurrence\s*Thu, Jan 22, 2026, 13:00 UTC/);
  });

  it('edits the window (PUT replaces it) and deletes it', async () => {
    await page.getByRole('link', { name: 'Thursday deploy' }).click();
    const form = page.getByRole('form', { name: 'Edit “Thursday deploy”' });
    expect(await form.getByLabel('Time zone', { exact: true }).inputValue()).toBe('Europe/Berlin');
    expect(await form.getByLabel('Thursday', { exact: true }).isChecked()).toBe(true);
    await form.getByLabel('Friday', { exact: true }).check();
    await form.getByLabel('End time', { exact: true }).fill('02:00');
    expect(await form.textContent()).toContain('ending the next day');
    await form.getByRole('button', { name: 'Save window' }).click();
    const row = rows().filter({ hasText: 'Thursday deploy' });
    await expect.poll(() => row.textContent()).toContain('Thu, Fri 14:00–02:00 (next day) Europe/Berlin');

    await row.getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => page.getByText('No maintenance windows yet.', { exact: false }).isVisible())
      .toBe(true);
    expect((await t.request('GET', '/maintenance-window', { token: await token() })).body).toEqual([]);
  });
});

import type { BrowserContext, Locator, Page } from 'playwright-core';
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

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/**
 * Metrics end to end (wire-families §8): a source made in the page, points sent to the URL the page
 * showed as plain loopback fetches (JSON and Prometheus text), the series, their charts by bucket, the
 * unit, and an alert made in the editor that fires once the server's ManualClock passes its `for` and
 * one scheduler tick runs. The server's clock starts at the half hour of this hour (the page's own
 * clock runs on; the chart's window follows the newest point). Steps build on each other.
 */
describe.skipIf(!hasChromium)('metrics in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  let channel: { id: number };
  const src: { id?: number; url?: string } = {};
  /** The server's time of the first points (the chart's buckets are counted from it). */
  let t0 = 0;
  const token = () => deviceTokenOf(page);
  const chip = () => page.locator('.hb-title .hb-chip');
  const seriesRow = (name: string) =>
    page.getByRole('list', { name: 'Series' }).getByRole('listitem', { name, exact: true });
  const send = async (body: string, type: string) => {
    const res = await fetch(src.url!, { method: 'POST', headers: { 'Content-Type': type }, body });
    return { status: res.status, body: await res.json() };
  };
  /**
   * Status signals on the SSE stream are coalesced per channel per second, and on a ManualClock that
   * second only ends when the clock moves: a second more lets the held signal out.
   */
  const flush = () => t.clock.advance(1_000);
  /** Moves the server's clock, runs what fell due, then ends the second that coalesces SSE signals. */
  const pass = async (ms: number) => {
    t.clock.advance(ms);
    await t.server.scheduler.tick();
    t.clock.advance(1_000);
  };

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    // The middle of an hour, always 10-70 minutes in this device's past (chart windows end at the device's now).
    t.clock.set(Math.floor((Date.now() - 40 * MIN) / HOUR) * HOUR + 30 * MIN);
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Home' });
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

  it('creates a source and shows its ingest URL once, with copyable JSON and Prometheus examples', async () => {
    await page.getByRole('link', { name: 'Metrics', exact: true }).click();
    await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor();
    await expect
      .poll(() => page.getByText('No metric sources yet.', { exact: false }).isVisible())
      .toBe(true);
    await page.getByRole('button', { name: 'New metric source' }).click();
    const form = page.getByRole('form', { name: 'New metric source' });
    await form.getByLabel('Name', { exact: true }).fill('Home sensors');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Home' });
    await form.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('heading', { name: 'Home sensors', level: 1 }).waitFor();
    const list = (await t.request('GET', '/metric-source', { token: await token() })).body as {
      id: number;
      appid: number;
      status: string;
      token: string;
    }[];
    expect(list).toMatchObject([
      { name: 'Home sensors', appid: channel.id, status: 'pending', paused: false },
    ]);
    src.id = list[0]!.id;
    expect(await chip().textContent()).toBe('pending');

    const url = page.getByLabel('Ingest URL (shown once)', { exact: true });
    await expect.poll(() => url.inputValue()).toMatch(new RegExp(`^${t.url}/metric/M[A-Za-z0-9]+$`));
    src.url = await url.inputValue();
    // The list answers the masked token; the page had the full one from the create answer.
    expect(src.url).not.toContain(list[0]!.token);
    await page.getByRole('button', { name: 'Copy Ingest URL (shown once)' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(src.url);
    expect(await page.getByLabel('curl: one JSON point', { exact: true }).inputValue()).toBe(
      `curl -fsS -H 'Content-Type: application/json' -d '{"name":"cpu_temp","value":48.5,"tags":{"host":"nas"}}' ${src.url}`,
    );
    expect(await page.getByLabel(/^curl: a JSON batch/).inputValue()).toMatch(
      new RegExp(`^curl -fsS -H 'Content-Type: application/json' -d '\\{"metrics":\\[.*\\]\\}' ${src.url}$`),
    );
    expect(await page.getByLabel('curl: a Prometheus text file', { exact: true }).inputValue()).toBe(
      `curl -fsS --data-binary @metrics.txt -H 'Content-Type: text/plain' ${src.url}`,
    );
    expect(await page.getByLabel(/^node_exporter: push its textfile/).inputValue()).toContain(
      `--data-binary @/var/lib/node_exporter/textfile_collector/backup.prom -H 'Content-Type: text/plain' ${src.url}`,
    );
    await screenshot(page, 'metrics-source-new');
  });

  it('shows JSON points as series live, and Prometheus text after a refresh', async () => {
    const now = t.clock.now();
    t0 = now;
    // One point, then a batch with times: the first point turns the source ok (a live signal).
    expect(
      await send(JSON.stringify({ name: 'cpu_temp', value: 20, tags: { host: 'nas' } }), 'application/json'),
    ).toEqual({ status: 200, body: { accepted: 1, rejected: [] } });
    flush();
    await expect.poll(() => chip().textContent()).toBe('ok');
    const batch = [
      { name: 'cpu_temp', value: 22, tags: { host: 'nas' }, at: new Date(now - 2 * MIN).toISOString() },
      { name: 'cpu_temp', value: 18, tags: { host: 'nas' }, at: (now - 65 * MIN) / 1000 },
      { name: 'cpu_temp', value: 25, tags: { host: 'nas' }, at: new Date(now - 3 * DAY).toISOString() },
      { name: 'cpu_temp', value: 'hot', tags: { host: 'nas' } },
    ];
    expect(await send(JSON.stringify({ metrics: batch }), 'application/json')).toEqual({
      status: 200,
      body: { accepted: 3, rejected: [{ index: 3, error: expect.stringMatching(/^metrics\[3\]\.value: /) }] },
    });
    const cpu = seriesRow('cpu_temp{host="nas"}');
    await expect.poll(() => cpu.locator('.metric-last').textContent()).toBe('20');

    const prom = [
      '# HELP room_temperature_celsius Temperature of the room',
      '# TYPE room_temperature_celsius gauge',
      'room_temperature_celsius{room="office"} 21.5',
      'room_temperature_celsius{room="cellar"} 14.25',
      'ups_battery_charge_percent 97',
      '',
    ].join('\n');
    expect(await send(prom, 'text/plain')).toEqual({ status: 200, body: { accepted: 3, rejected: [] } });
    // Points that change no status send no signal: the page shows them on Refresh (or within 30 s).
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect.poll(() => page.getByRole('list', { name: 'Series' }).getByRole('listitem').count()).toBe(4);
    const office = seriesRow('room_temperature_celsius{room="office"}');
    expect(await office.locator('.metric-last').textContent()).toBe('21.5');
    expect(await office.textContent()).toContain('Temperature of the room');
    expect(
      await seriesRow('room_temperature_celsius{room="cellar"}').locator('.metric-last').textContent(),
    ).toBe('14.25');
    expect(await seriesRow('ups_battery_charge_percent').locator('.metric-last').textContent()).toBe('97');
    // Points in 24 h: the 3-day-old one is not among them.
    expect(await cpu.textContent()).toMatch(/Points in 24 h3(?!\d)/);
  });

  it('draws a series by minute, hour and day, each bucket a dot and a table row', async () => {
    const now = t0;
    const cpu = seriesRow('cpu_temp{host="nas"}');
    await cpu.getByRole('button', { name: 'Chart of cpu_temp{host="nas"}' }).click();
    const chart = cpu.getByRole('img', { name: /^cpu_temp\{host="nas"\}, / });
    const dots = chart.locator('.recharts-line-dots circle');
    const rows = cpu.getByRole('table').locator('tbody tr');
    await cpu.getByText(/^Data table/).click();
    // The four points' buckets within each window: 1m the last 24 h, 1h 7 days, 1d 90 days.
    const ats = [now, now - 2 * MIN, now - 65 * MIN, now - 3 * DAY];
    const buckets = (size: number, window: number) =>
      new Set(ats.filter((a) => a > now - window).map((a) => Math.floor(a / size))).size;
    const expected = { '1m': buckets(MIN, DAY), '1h': buckets(HOUR, 7 * DAY), '1d': buckets(DAY, 90 * DAY) };
    expect(expected['1m']).toBe(3);
    expect(expected['1h']).toBe(3);
    for (const [bucket, window] of [
      ['1m', 'last 24 hours'],
      ['1h', 'last 7 days'],
      ['1d', 'last 90 days'],
    ] as const) {
      await cpu.getByLabel(`${bucket}: ${window}`, { exact: true }).check();
      await expect
        .poll(() => chart.getAttribute('aria-label'))
        .toContain(`${window} by ${bucket}: ${expected[bucket]} bucket`);
      await expect.poll(() => dots.count()).toBe(expected[bucket]);
      expect(await rows.count()).toBe(expected[bucket]);
      expect(await chart.locator('.recharts-area-area').count()).toBe(1);
    }
    // By hour, the newest bucket holds the points of now and two minutes ago: min 20, max 22, avg 21.
    await cpu.getByLabel('1h: last 7 days', { exact: true }).check();
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.first().locator('td').allTextContents()).toEqual([
      expect.any(String),
      '21',
      '20',
      '22',
      '20',
      '2',
    ]);
    // Hovering the newest dot shows its figures.
    await dots.last().hover();
    await expect
      .poll(() => cpu.locator('.metric-tooltip').textContent())
      .toMatch(/avg21min20max22last20count2/);
    await cpu.evaluate((e) => e.scrollIntoView());
    await screenshot(page, 'metrics-chart');
  });

  it('edits a series’ unit: on its row, its values and the chart’s axis', async () => {
    const cpu = seriesRow('cpu_temp{host="nas"}');
    await cpu.getByRole('button', { name: 'Edit cpu_temp{host="nas"}' }).click();
    const form = cpu.getByRole('form', { name: 'Edit cpu_temp{host="nas"}' });
    await form.getByLabel('Unit', { exact: true }).fill('°C');
    await form.getByLabel('Description', { exact: true }).fill('NAS CPU package');
    await form.getByRole('button', { name: 'Save series' }).click();
    await expect.poll(() => form.count()).toBe(0);
    expect(await cpu.locator('.metric-last').textContent()).toBe('20 °C');
    expect(await cpu.textContent()).toContain('NAS CPU package');
    await expect.poll(() => cpu.locator('.metric-chart .recharts-label').textContent()).toBe('°C');
    const metrics = (await t.request('GET', `/metric-source/${src.id}/metrics`, { token: await token() }))
      .body as { name: string; unit: string; description: string }[];
    expect(metrics.find((m) => m.name === 'cpu_temp')).toMatchObject({
      unit: '°C',
      description: 'NAS CPU package',
    });
  });

  it('makes an alert in the editor, shows the server’s 400 by its field, and fires after its for', async () => {
    await page.getByRole('button', { name: 'New alert' }).click();
    const form = page.getByRole('form', { name: 'New alert' });
    const field = (label: string): Locator =>
      form.locator('.field').filter({ has: page.getByLabel(label, { exact: true }) });
    // The metric's names are offered; absent hides the threshold and needs a `for` of the minimum.
    expect(
      await form
        .locator('datalist option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(['cpu_temp', 'room_temperature_celsius', 'ups_battery_charge_percent']);
    await form.getByLabel('Metric', { exact: true }).fill('cpu_temp');
    await form.getByLabel('Condition', { exact: true }).selectOption('absent');
    expect(await form.getByLabel(/^Threshold/).count()).toBe(0);
    await form.getByRole('button', { name: 'Create alert' }).click();
    await expect
      .poll(() => field('For').getByRole('alert').textContent())
      .toMatch(/^forSec: must be at least 30/);
    // An above alert with a `for` of one minute.
    await form.getByLabel('Condition', { exact: true }).selectOption('above');
    await form.getByLabel('Threshold (°C)', { exact: true }).fill('30');
    await form.getByLabel('Tags', { exact: true }).fill('host=nas');
    await form.getByLabel('For', { exact: true }).fill('1');
    await form.getByLabel('For unit', { exact: true }).selectOption('m');
    await form.getByLabel('Priority', { exact: true }).fill('9');
    await form
      .getByLabel('Message', { exact: true })
      .fill('{{metric}}{{tags}} at {{value}} (over {{threshold}})');
    expect(await form.textContent()).toContain('{{value}} the value that breached');
    await form.getByRole('button', { name: 'Create alert' }).click();
    await expect.poll(() => form.count()).toBe(0);
    const alert = page.getByRole('list', { name: 'Alerts' }).getByRole('listitem');
    await expect.poll(() => alert.count()).toBe(1);
    expect(await alert.getAttribute('aria-label')).toBe('cpu_temp{host="nas"} above 30 °C for 1m');
    expect(await alert.locator('.hb-chip').textContent()).toBe('ok');
    const saved = (await t.request('GET', `/metric-source/${src.id}/alerts`, { token: await token() })).body;
    expect(saved).toMatchObject([
      {
        metric: 'cpu_temp',
        tags: { host: 'nas' },
        condition: 'above',
        threshold: 30,
        forSec: 60,
        priority: 9,
        message: '{{metric}}{{tags}} at {{value}} (over {{threshold}})',
        enabled: true,
        state: 'ok',
      },
    ]);

    // A breaching point: not yet firing (for 1m); a minute later it is, live.
    await pass(1_000);
    expect(
      await send(
        JSON.stringify({ name: 'cpu_temp', value: 35.5, tags: { host: 'nas' } }),
        'application/json',
      ),
    ).toMatchObject({ status: 200, body: { accepted: 1 } });
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect
      .poll(() => seriesRow('cpu_temp{host="nas"}').locator('.metric-last').textContent())
      .toBe('35.5 °C');
    expect(await alert.locator('.hb-chip').textContent()).toBe('ok');
    await pass(61_000);
    await expect.poll(() => alert.locator('.hb-chip').textContent()).toBe('firing');
    await expect.poll(() => chip().textContent()).toBe('firing');
    expect(await alert.locator('.metric-last').textContent()).toBe('35.5 °C');
    expect(await alert.textContent()).toContain('Firing since');
    const messages = (await t.request('GET', `/application/${channel.id}/message`, { token: await token() }))
      .body.messages as { title: string; message: string; priority: number }[];
    expect(messages[0]).toMatchObject({
      title: 'Home sensors: cpu_temp above 30',
      message: expect.stringContaining('at 35.5 (over 30)'),
      priority: 9,
    });
    await page
      .getByRole('heading', { name: 'Alerts', level: 2 })
      .evaluate((e) => e.scrollIntoView({ block: 'center' }));
    await screenshot(page, 'metrics-source');

    // Back under the threshold: ok again.
    await send(JSON.stringify({ name: 'cpu_temp', value: 24, tags: { host: 'nas' } }), 'application/json');
    await pass(0);
    await expect.poll(() => alert.locator('.hb-chip').textContent()).toBe('ok');
    await expect.poll(() => chip().textContent()).toBe('ok');

    // Edited: the editor opens with the stored rule; a higher threshold and no tag filter.
    await alert.getByRole('button', { name: 'Edit alert cpu_temp{host="nas"} above 30 °C for 1m' }).click();
    const edit = alert.getByRole('form', { name: 'Edit alert' });
    expect(await edit.getByLabel('Tags', { exact: true }).inputValue()).toBe('host="nas"');
    expect(await edit.getByLabel('Threshold (°C)', { exact: true }).inputValue()).toBe('30');
    expect(await edit.getByLabel('For unit', { exact: true }).inputValue()).toBe('m');
    await edit.getByLabel('Threshold (°C)', { exact: true }).fill('40');
    await edit.getByLabel('Tags', { exact: true }).fill('');
    await edit.getByRole('button', { name: 'Save alert' }).click();
    await expect.poll(() => alert.getAttribute('aria-label')).toBe('cpu_temp above 40 °C for 1m');
    expect(
      (await t.request('GET', `/metric-source/${src.id}/alerts`, { token: await token() })).body,
    ).toMatchObject([{ threshold: 40, tags: {}, forSec: 60, priority: 9 }]);
  });

  it('pauses, resumes and rotates the URL; the list row says status, last point and series', async () => {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect.poll(() => chip().textContent()).toBe('paused');
    expect(await send(JSON.stringify({ name: 'cpu_temp', value: 1 }), 'application/json')).toEqual({
      status: 200,
      body: { accepted: 0, rejected: [], paused: true },
    });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await expect.poll(() => chip().textContent()).not.toBe('paused');

    expect(await page.getByLabel('Ingest URL (shown once)', { exact: true }).count()).toBe(1);
    await page.reload();
    // After a reload the token is masked, and the page says so.
    const masked = page.getByLabel('Ingest URL (token masked)', { exact: true });
    await expect.poll(() => masked.inputValue()).toMatch(/\/metric\/M\w*\*+\w*$/);
    expect(await page.getByText(/The token in this URL is masked/).isVisible()).toBe(true);
    const old = src.url!;
    await page.getByRole('button', { name: 'New ingest URL' }).click();
    const url = page.getByLabel('Ingest URL (shown once)', { exact: true });
    await expect.poll(() => url.inputValue()).not.toBe(old);
    src.url = await url.inputValue();
    expect(src.url).toMatch(/\/metric\/M[A-Za-z0-9]+$/);
    expect(
      (await fetch(old, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }))
        .status,
    ).toBe(404);
    expect(
      (await send(JSON.stringify({ name: 'cpu_temp', value: 23, tags: { host: 'nas' } }), 'application/json'))
        .status,
    ).toBe(200);

    await page.getByRole('link', { name: '← All metric sources' }).click();
    const row = page
      .getByRole('list', { name: 'Metric sources' })
      .getByRole('listitem', { name: 'Home sensors' });
    await expect.poll(() => row.locator('.hb-chip').textContent()).toBe('ok');
    expect(await row.textContent()).toContain('Home');
    await expect.poll(() => row.locator('dd').nth(1).textContent()).toBe('4');
    expect(await row.locator('dd').first().textContent()).not.toBe('never');
    // A second source, made paused through the API, waits below it.
    const garage = await t.request('POST', '/metric-source', {
      token: await token(),
      json: { appid: channel.id, name: 'Garage', paused: true },
    });
    expect(garage.status).toBe(200);
    await page.reload();
    const rows = page.getByRole('list', { name: 'Metric sources' }).getByRole('listitem');
    await expect
      .poll(() =>
        rows.evaluateAll((els) =>
          els.map((e) => `${e.getAttribute('aria-label')} ${e.querySelector('.hb-chip')?.textContent}`),
        ),
      )
      .toEqual(['Home sensors ok', 'Garage paused']);
    await expect.poll(() => rows.nth(1).locator('dd').allTextContents()).toEqual(['never', '0']);
    await screenshot(page, 'metrics');
  });

  it('has no axe findings with a chart and the alert editor open, and fits a phone', async () => {
    const found: string[] = [];
    for (const phone of [false, true]) {
      const { context: c, page: p } = await b.newPage({ phone });
      if (phone) await p.emulateMedia({ colorScheme: 'dark' });
      await p.goto(t.url);
      await p.evaluate((tok) => localStorage.setItem('belfry.token', tok), await token());
      await p.goto(`${t.url}/metrics`);
      await p.getByRole('list', { name: 'Metric sources' }).getByRole('listitem').first().waitFor();
      await p.waitForLoadState('networkidle');
      for (const f of await axeFindings(p)) found.push(`${phone ? 'phone' : 'desktop'} list: ${f}`);
      await p.getByRole('link', { name: 'Home sensors' }).click();
      const cpu = p
        .getByRole('list', { name: 'Series' })
        .getByRole('listitem', { name: 'cpu_temp{host="nas"}' });
      await cpu.getByRole('button', { name: 'Chart of cpu_temp{host="nas"}' }).click();
      await cpu.getByRole('img', { name: /^cpu_temp/ }).waitFor();
      await cpu.getByText(/^Data table/).click();
      await p.getByText('Examples: curl with JSON, Prometheus text, node_exporter').click();
      await p.getByRole('button', { name: 'New alert' }).click();
      await p.getByRole('form', { name: 'New alert' }).waitFor();
      await p.waitForLoadState('networkidle');
      for (const f of await axeFindings(p)) found.push(`${phone ? 'phone' : 'desktop'} detail: ${f}`);
      const overflow = await p.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, phone ? 'phone' : 'desktop').toBeLessThanOrEqual(0);
      if (phone) {
        await cpu.evaluate((e) => e.scrollIntoView());
        await screenshot(p, 'metrics-phone');
      }
      await c.close();
    }
    expect(found).toEqual([]);
  });

  it('deletes a series and the source', async () => {
    await page.getByRole('link', { name: 'Home sensors' }).click();
    const ups = seriesRow('ups_battery_charge_percent');
    await ups.getByRole('button', { name: 'Delete ups_battery_charge_percent' }).click();
    await expect.poll(() => ups.count()).toBe(0);
    const left = (await t.request('GET', `/metric-source/${src.id}/metrics`, { token: await token() })).body;
    expect(left.map((m: { name: string }) => m.name).sort()).toEqual([
      'cpu_temp',
      'room_temperature_celsius',
      'room_temperature_celsius',
    ]);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor();
    await expect
      .poll(() => page.getByRole('list', { name: 'Metric sources' }).getByRole('listitem').allTextContents())
      .toEqual([expect.stringContaining('Garage')]);
    expect((await send('{"name":"x","value":1}', 'application/json')).status).toBe(404);
  });
});

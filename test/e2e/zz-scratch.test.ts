import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { type BrowserHandle, ensureRendererBuilt, launchBrowser, signInToInbox } from './browser';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const iso = (ms: number) => new Date(ms).toISOString();
const now = Date.now();
const rec = (over: Record<string, unknown> = {}) => ({
  id: 1,
  appid: 0,
  name: 'Nightly backup',
  paused: false,
  status: 'up',
  lastCheckAt: iso(now - 60000),
  createdAt: iso(now - 86400000),
  intervalSec: null,
  schedule: '0 3 * * *',
  timezone: 'Europe/Berlin',
  graceSec: 300,
  alertMessage: '',
  manualResume: false,
  priority: 8,
  token: 'Hab****x7Qz',
  pingUrl: 'http://x/heartbeat/ping/Hab****x7Qz',
  expectedAt: iso(now + 3600000),
  deadlineAt: iso(now + 3900000),
  lastFailReason: 'exit status 2',
  startedAt: null,
  lastDurationMs: 125000,
  statusSince: iso(now - 3600000),
  ...over,
});
const days = Array.from({ length: 90 }, (_, i) => ({
  date: iso(now - (89 - i) * 86400000).slice(0, 10),
  uptime: i < 60 ? null : i === 80 ? 97.5 : 100,
  status: i < 60 ? 'none' : i === 80 ? 'down' : i === 70 ? 'maintenance' : 'up',
  downSec: i === 80 ? 2000 : 0,
  avgMs: null,
}));

describe('scratch', () => {
  let t: TestServer;
  let b: BrowserHandle;
  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });
  for (const phone of [false, true])
    it(`renders ${phone}`, async () => {
      const ch = await makeChannel(t, (await deviceToken(t)).token, { name: 'Backups' });
      const { page } = await b.newPage({ phone });
      if (phone) await page.emulateMedia({ colorScheme: 'dark' });
      page.on('console', (m) => console.log('console', m.text()));
      page.on('pageerror', (e) => console.log('pageerror', e.message));
      await page.route(/\/application$/, async (route) => {
        const r = await route.fetch();
        const body = (await r.json()) as Record<string, unknown>[];
        await route.fulfill({
          json: body.map((c) =>
            c.id === ch.id ? { ...c, hbTotal: 2, hbAlerting: 1, hbStatus: 'alerting' } : c,
          ),
        });
      });
      await page.route(/\/heartbeat(\?.*)?$/, (route) =>
        route.request().method() === 'POST'
          ? route.fulfill({
              json: rec({
                appid: ch.id,
                status: 'new',
                token: 'Habcdefghijkl',
                pingUrl: `${t.url}/heartbeat/ping/Habcdefghijkl`,
              }),
            })
          : route.fulfill({
              json: [
                rec({ appid: ch.id }),
                rec({
                  id: 2,
                  appid: ch.id,
                  name: 'Router',
                  status: 'down',
                  schedule: null,
                  intervalSec: 300,
                  deadlineAt: null,
                  expectedAt: null,
                }),
              ],
            }),
      );
      await page.route(/\/heartbeat\/1$/, (route) => route.fulfill({ json: rec({ appid: ch.id }) }));
      await page.route(/\/monitor-history\/heartbeat\/\d+$/, (route) =>
        route.fulfill({
          json: {
            kind: 'heartbeat',
            id: 1,
            name: 'x',
            status: 'up',
            statusSince: null,
            uptime: { '24h': 100, '7d': 99.123, '30d': 99.9, '90d': null },
            responseTime: { avgMs: null, p95Ms: null },
            days,
          },
        }),
      );
      await page.route(/\/monitor-history\/heartbeat\/\d+\/log/, (route) =>
        route.fulfill({
          json: {
            paging: { size: 2, limit: 20, since: 5 },
            checks: [
              {
                id: 7,
                at: iso(now - 60000),
                ok: false,
                status: 'down',
                responseTimeMs: null,
                error: 'exit status 2',
                pingKind: 'fail',
                exitCode: 2,
                body: 'tar: No space left on device\n',
              },
              {
                id: 6,
                at: iso(now - 120000),
                ok: true,
                status: 'up',
                responseTimeMs: null,
                pingKind: 'success',
              },
            ],
          },
        }),
      );
      await signInToInbox(page, t.url, t.admin);
      const found: string[] = [];
      const check = async (name: string) => {
        await page.evaluate(AXE);
        const v = await page.evaluate(async () => {
          const axe = (window as any).axe;
          const r = await axe.run(document);
          return r.violations.map(
            (v: any) =>
              `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`,
          );
        });
        found.push(...v.map((x: string) => `${name}: ${x}`));
      };
      await check('inbox');
      await page.screenshot({ path: `/tmp/scr-inbox-${phone}.png` });
      await page.goto(`${t.url}/heartbeats`);
      await page.getByRole('heading', { name: 'Heartbeats', level: 1 }).waitFor();
      await page
        .getByRole('img', { name: /90-day/ })
        .first()
        .waitFor();
      await check('list');
      await page.screenshot({ path: `/tmp/scr-list-${phone}.png`, fullPage: true });
      await page.getByRole('link', { name: 'Nightly backup' }).click();
      await page.getByRole('table', { name: 'Pings' }).waitFor();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await page.getByText('Examples: curl, crontab, exit codes').click();
      await page.getByText(/^Body/).click();
      await check('detail');
      await page.screenshot({ path: `/tmp/scr-detail-${phone}.png`, fullPage: true });
      await page.goto(`${t.url}/heartbeats?new=1`);
      await page.getByLabel('Name', { exact: true }).fill('Job');
      await page.getByLabel('Cron schedule').check();
      await page.getByLabel('Time zone', { exact: true }).fill('Asia/Tokyo');
      await check('new');
      await page.screenshot({ path: `/tmp/scr-new-${phone}.png`, fullPage: true });
      await page.getByRole('button', { name: 'Create heartbeat' }).click();
      await page.getByLabel('Ping URL (shown once)', { exact: true }).waitFor();
      await page.screenshot({ path: `/tmp/scr-created-${phone}.png`, fullPage: true });
      await page.goto(`${t.url}/channels`);
      await page.getByRole('img', { name: /alerting/ }).waitFor();
      await check('channels');
      console.log(found.join('\n'));
      expect(found).toEqual([]);
    });
});

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POWER_PAUSED } from '../../server/features/monitors/engine';
import { SHOTS_PER_WORKFLOW } from '../../server/features/monitors/kinds/browser/shots';
import { CHROMIUM_IDLE_MS, chromiumStats, NO_CHROMIUM, SYSTEM_CHROMIUM } from '../../server/lib/chromium';
import { BROWSER_WORKFLOWS_PER_USER } from '../../server/lib/limits';
import { setOnBattery } from '../../server/lib/power';
import {
  apiToken,
  deviceToken,
  insertChannelKeyRow,
  makeChannel,
  makeUser,
  sendMessage,
} from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs, type WsClient } from './realtime-helpers';

/**
 * Browser workflows (§2.3, §2.6) with the real Chromium (Debian's /usr/bin/chromium, headless) against
 * pages served on loopback by this test. Checks run when the ManualClock is advanced and the one timer
 * ticks; steps take real (short) time in the browser.
 */

const HAS_CHROMIUM = existsSync(SYSTEM_CHROMIUM);
const SEC = 1000;

let t: TestServer;
let dev: string;
let otherDev: string;
let appid: number;
let site: FakeTarget;
/** `/hold` answers only once `release` settles; `arrived` tells the test a check is waiting there. */
let held: { arrived: () => void; release: Promise<void> } | null = null;

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

beforeAll(async () => {
  t = await startTestServer({ config: { minIntervalSec: 1 } });
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
  appid = (await makeChannel(t, dev)).id;
  site = await startTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (s: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(s, { 'Content-Type': 'text/html; charset=utf-8', ...headers });
      res.end(body);
    };
    if (url.pathname === '/login')
      html(
        200,
        page(
          'Sign in',
          `<form action="/home" method="get">
             <label>User <input name="user" id="user"></label>
             <label>Password <input name="pass" id="pass" type="password"></label>
             <button type="submit">Sign in</button>
           </form>`,
        ),
      );
    else if (url.pathname === '/home')
      html(
        200,
        page(
          'Home',
          `<h1 id="greeting">Welcome ${url.searchParams.get('user') ?? 'nobody'}</h1>
           <p id="pw">your password is ${url.searchParams.get('pass') ?? ''}</p>
           <div id="late"></div>
           <script>setTimeout(() => { document.getElementById('late').textContent = 'ready now' }, 150)</script>`,
        ),
      );
    else if (url.pathname === '/whoami') {
      const cookie = req.headers.cookie ?? '';
      html(200, page('Who', `<p id="c">cookies: ${cookie || 'none'}</p>`));
    } else if (url.pathname === '/set-session')
      html(200, page('Signed in', '<p>signed in</p>'), { 'Set-Cookie': 'sid=s-123; Path=/; HttpOnly' });
    else if (url.pathname === '/slow')
      html(
        200,
        page('Slow', '<p>slow</p><script>setTimeout(() => { document.title = "done" }, 10)</script>'),
      );
    else if (url.pathname === '/hold') {
      const h = held;
      h?.arrived();
      void (h?.release ?? Promise.resolve()).then(() => html(404, page('Gone', '<p>gone</p>')));
    } else html(404, page('Not found', '<p>nothing here</p>'));
  });
});
afterAll(async () => {
  await site?.close();
  await t?.close();
});

async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

function post(path: string, json: unknown, token = dev) {
  return t.request('POST', path, { token, json });
}

async function create(body: Record<string, unknown>, token = dev) {
  const res = await post('/browser-workflow', { appid, name: 'shop login', ...body }, token);
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number };
}

function messagesOf(channel: number) {
  return t.server.ctx.db
    .all<{ title: string; message: string; extras: string }>(
      'SELECT title, message, extras FROM messages WHERE channel_id = ? ORDER BY id',
      [channel],
    )
    .map((m) => ({ ...m, extras: JSON.parse(m.extras) }));
}

const LOGIN_STEPS = (user = '{{user}}', pass = 'hunter2-secret') => [
  { action: 'goto', url: `${site.url}/login` },
  { action: 'fill', selector: '#user', value: user },
  { action: 'fill', selector: '#pass', value: pass, secret: true },
  { action: 'click', selector: 'text="Sign in"' },
  { action: 'expectUrl', value: '/home' },
  { action: 'waitFor', selector: '#greeting' },
  { action: 'expectText', selector: '#greeting', value: 'welcome alice' },
  { action: 'expectText', selector: '#late', value: '/^ready/' },
  { action: 'press', selector: '#greeting', value: 'Tab' },
  { action: 'waitFor', value: 20 },
];

describe('browser-workflow records', () => {
  it('POST /browser-workflow answers the record with defaults and secrets masked when created', async () => {
    const w = await create({
      paused: true,
      variables: { user: 'alice', apiToken: 'tok-very-secret' },
      cookies: [{ name: 'session', value: 'cookie-secret' }],
      steps: LOGIN_STEPS(),
    });
    expect(w).toMatchObject({
      kind: 'browser-workflow',
      appid,
      name: 'shop login',
      paused: true,
      status: 'paused',
      intervalSec: 300,
      timeoutSec: 60,
      variables: { user: 'alice', apiToken: '********' },
      cookies: [
        {
          name: 'session',
          value: '********',
          domain: '127.0.0.1',
          path: '/',
          expires: null,
          httpOnly: false,
          secure: false,
          sameSite: 'Lax',
        },
      ],
    });
    expect(w.steps[0]).toEqual({ action: 'goto', url: `${site.url}/login`, timeoutMs: 10_000 });
    expect(w.steps[2]).toEqual({
      action: 'fill',
      selector: '#pass',
      value: '********',
      timeoutMs: 10_000,
      secret: true,
    });
    expect(w.steps[9]).toEqual({ action: 'waitFor', value: 20, timeoutMs: 10_000 });
    // "********" sent back keeps the stored secrets (by name for cookies and variables, by position for steps)
    const put = await t.request('PUT', `/browser-workflow/${w.id}`, {
      token: dev,
      json: { steps: w.steps, cookies: w.cookies, variables: w.variables },
    });
    expect(put.status).toBe(200);
    const row = t.server.ctx.db.first<{ settings: string }>('SELECT settings FROM monitors WHERE id = ?', [
      w.id,
    ]);
    expect(row).toBeDefined();
    const { openSettings } = await import('../../server/features/monitors/fields');
    const stored = openSettings(
      t.server.ctx,
      t.server.ctx.db.first('SELECT * FROM monitors WHERE id = ?', [w.id])!,
    );
    expect(stored).toMatchObject({
      variables: { apiToken: 'tok-very-secret' },
      cookies: [{ value: 'cookie-secret' }],
      steps: expect.arrayContaining([expect.objectContaining({ value: 'hunter2-secret', secret: true })]),
    });
    await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
  });

  it('POST /browser-workflow answers 400 naming the field when a step or cookie is bad', async () => {
    const goto = { action: 'goto', url: `${site.url}/login` };
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'steps: required'],
      [{ steps: [] }, 'steps: at least one item'],
      [{ steps: Array(51).fill(goto) }, 'steps: at most 50 items'],
      [
        { steps: [{ action: 'hover' }] },
        'steps[0].action: must be one of goto, click, fill, press, waitFor, expectText, expectUrl',
      ],
      [{ steps: [{ action: 'goto' }] }, 'steps[0].url: required'],
      [
        { steps: [{ action: 'goto', url: 'file:///etc/passwd' }] },
        'steps[0].url: must be an http or https URL',
      ],
      [{ steps: [goto, { action: 'click' }] }, 'steps[1].selector: required'],
      [{ steps: [goto, { action: 'fill', selector: '#a' }] }, 'steps[1].value: required'],
      [{ steps: [goto, { action: 'press' }] }, 'steps[1].value: required'],
      [
        { steps: [goto, { action: 'waitFor' }] },
        'steps[1].selector: required (or value: milliseconds to wait)',
      ],
      [
        { steps: [goto, { action: 'waitFor', value: 30_001 }] },
        'steps[1].value: must be between 0 and 30000',
      ],
      [
        { steps: [goto, { action: 'expectText', value: '/(/' }] },
        'steps[1].value: not a valid regular expression',
      ],
      [{ steps: [{ ...goto, timeoutMs: 99 }] }, 'steps[0].timeoutMs: must be between 100 and 60000'],
      [{ steps: [goto], cookies: [{ value: 'x' }] }, 'cookies[0].name: required'],
      [
        { steps: [goto], cookies: [{ name: 'a', value: 'x', sameSite: 'lax' }] },
        'cookies[0].sameSite: must be one of Strict, Lax, None',
      ],
      [
        { steps: [{ action: 'expectUrl', value: 'x' }], cookies: [{ name: 'a', value: 'x' }] },
        'cookies[0].domain: required',
      ],
      [
        { steps: [goto], variables: { '1x': 'a' } },
        'variables.1x: must be a name of letters, digits and _ (not starting with a digit)',
      ],
      [{ steps: [goto], timeoutSec: 301 }, 'timeoutSec: must be at most 300'],
    ];
    for (const [json, error] of cases) {
      const res = await post('/browser-workflow', { appid, name: 'x', ...json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription, JSON.stringify(json)).toBe(error);
    }
  });

  it(`POST /browser-workflow answers 403 when the user has ${BROWSER_WORKFLOWS_PER_USER} already`, async () => {
    const u = makeUser(t);
    const token = (await deviceToken(t, u)).token;
    const channel = (await makeChannel(t, token)).id;
    const body = {
      appid: channel,
      name: 'w',
      paused: true,
      steps: [{ action: 'goto', url: `${site.url}/login` }],
    };
    for (let i = 0; i < BROWSER_WORKFLOWS_PER_USER; i++)
      expect((await post('/browser-workflow', body, token)).status).toBe(200);
    const over = await post('/browser-workflow', body, token);
    expect(over.status).toBe(403);
    expect(over.body.errorDescription).toBe(
      `limit reached: at most ${BROWSER_WORKFLOWS_PER_USER} browser workflows per user`,
    );
    // other kinds are not counted against it
    expect(
      (await post('/monitor', { appid: channel, name: 'm', paused: true, url: `${site.url}/login` }, token))
        .status,
    ).toBe(200);
  });
});

describe.skipIf(!HAS_CHROMIUM)('browser-workflow runs (real Chromium)', () => {
  it('test-step runs goto, fill, click, press, waitFor, expectText and expectUrl when every step holds', async () => {
    const res = await post('/browser-workflow/test-step', {
      steps: LOGIN_STEPS(),
      variables: { user: 'alice' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 'up', details: { title: 'Home' } });
    expect(res.body.error).toBeUndefined();
    expect(res.body.details.steps.map((s: any) => [s.action, s.ok])).toEqual(
      LOGIN_STEPS().map((s) => [s.action, true]),
    );
    for (const s of res.body.details.steps) expect(s.durationMs).toBeGreaterThanOrEqual(0);
    // the secret fill value rode in the URL (a GET form): it is masked in every text of the answer
    expect(res.body.details.finalUrl).toBe(`${site.url}/home?user=alice&pass=********`);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('test-step sets the cookies before step 1', async () => {
    const res = await post('/browser-workflow/test-step', {
      cookies: [{ name: 'session', value: 'abc123' }],
      steps: [
        { action: 'goto', url: `${site.url}/whoami` },
        { action: 'expectText', selector: '#c', value: 'session=' },
      ],
    });
    expect(res.body).toMatchObject({ ok: true });
    // the cookie value is a secret: a failing expectation quoting the page never shows it
    const failing = await post('/browser-workflow/test-step', {
      cookies: [{ name: 'session', value: 'abc123' }],
      steps: [
        { action: 'goto', url: `${site.url}/whoami` },
        { action: 'expectUrl', value: '/elsewhere', timeoutMs: 100 },
      ],
    });
    expect(failing.body.error).toBe(`step 2 expectUrl: URL ${site.url}/whoami does not contain "/elsewhere"`);
  });

  it('test-step answers each §2.3 error as `step {n} {action}: {detail}` when a step fails', async () => {
    const closed = await closedPort();
    const run = async (steps: unknown[], variables: Record<string, string> = {}) =>
      (await post('/browser-workflow/test-step', { steps, variables })).body;
    const login = { action: 'goto', url: `${site.url}/login` };
    const cases: [unknown[], string][] = [
      [[{ action: 'goto', url: `${site.url}/missing` }], 'step 1 goto: status 404'],
      [[{ action: 'goto', url: `http://127.0.0.1:${closed}/` }], 'step 1 goto: connection refused'],
      [[{ action: 'goto', url: 'http://{{host}}/' }], 'step 1 goto: variable "host" is not defined'],
      [
        [login, { action: 'click', selector: '#nope', timeoutMs: 200 }],
        'step 2 click: timeout after 200 ms waiting for #nope',
      ],
      [
        [login, { action: 'fill', selector: '#nope', value: 'x', timeoutMs: 200 }],
        'step 2 fill: timeout after 200 ms waiting for #nope',
      ],
      [
        [login, { action: 'waitFor', selector: '#nope', timeoutMs: 200 }],
        'step 2 waitFor: timeout after 200 ms waiting for #nope',
      ],
      [
        [login, { action: 'expectText', value: 'Goodbye', timeoutMs: 200 }],
        'step 2 expectText: text does not contain "Goodbye"',
      ],
      [
        [login, { action: 'expectText', selector: 'h2', value: 'x', timeoutMs: 200 }],
        'step 2 expectText: h2 matched nothing',
      ],
      [
        [login, { action: 'expectText', value: '/^Nope/', timeoutMs: 200 }],
        'step 2 expectText: text does not match /^Nope/',
      ],
      [
        [login, { action: 'expectUrl', value: '/^https:/', timeoutMs: 200 }],
        `step 2 expectUrl: URL ${site.url}/login does not match /^https:/`,
      ],
    ];
    for (const [steps, error] of cases) {
      const body = await run(steps);
      expect(body.ok, error).toBe(false);
      expect(body.status).toBe('down');
      expect(body.error).toBe(error);
      const last = body.details.steps.at(-1);
      expect(last).toMatchObject({ ok: false, error: error.replace(/^step \d+ \w+: /, '') });
    }
  });

  it('test-step saves a screenshot of the failed step, served to its owner only', async () => {
    const res = await post('/browser-workflow/test-step', {
      steps: [
        { action: 'goto', url: `${site.url}/login` },
        { action: 'expectText', value: 'Logged out', timeoutMs: 100 },
      ],
    });
    const key = res.body.details.screenshotKey as string;
    expect(key).toMatch(/^[A-Za-z0-9]{22}$/);
    const shot = await fetch(`${t.url}/browser-shot/${key}`, { headers: { 'X-Service-Key': dev } });
    expect(shot.status).toBe(200);
    expect(shot.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await shot.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]); // JPEG SOI
    // `?token=` (an <img> sends no header)
    expect((await fetch(`${t.url}/browser-shot/${key}?token=${dev}`)).status).toBe(200);
    const other = await t.request('GET', `/browser-shot/${key}`, { token: otherDev });
    expect(other.status).toBe(404);
    expect(other.body.errorDescription).toBe('screenshot not found');
    expect((await t.request('GET', `/browser-shot/${key}`)).status).toBe(401);
    expect((await t.request('GET', '/browser-shot/short', { token: dev })).status).toBe(404);
  });

  it('a failing check goes down with the screenshot key in the down message extras', async () => {
    const channel = (await makeChannel(t, dev)).id;
    const w = await create({
      appid: channel,
      steps: [
        { action: 'goto', url: `${site.url}/login` },
        { action: 'expectText', value: 'Maintenance', timeoutMs: 100 },
      ],
    });
    await t.server.scheduler.tick();
    const got = (await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body;
    expect(got).toMatchObject({
      status: 'down',
      lastError: 'step 2 expectText: text does not contain "Maintenance"',
    });
    const [down] = messagesOf(channel);
    expect(down).toMatchObject({
      title: 'shop login is down',
      message: `${site.url}/login: step 2 expectText: text does not contain "Maintenance"`,
    });
    const key = down!.extras['service::screenshot'];
    expect(key).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(down!.extras['service::source']).toEqual({ kind: 'browser-workflow', id: w.id, event: 'down' });
    expect((await t.request('GET', `/browser-shot/${key}`, { token: dev })).status).toBe(200);
    // an API token scoped to another channel does not reach the workflow's screenshots
    const scoped = await apiToken(t, { token: dev }, { access: 'read', appIds: [appid] });
    expect((await t.request('GET', `/browser-shot/${key}`, { token: scoped.token })).status).toBe(404);
    const inScope = await apiToken(t, { token: dev }, { access: 'read', appIds: [channel] });
    expect((await t.request('GET', `/browser-shot/${key}`, { token: inScope.token })).status).toBe(200);
    // check-now answers the kind's details
    const now = await post(`/browser-workflow/${w.id}/check-now`, {});
    expect(now.body).toMatchObject({ ok: false, status: 'down', details: { finalUrl: `${site.url}/login` } });
    expect(now.body.details.screenshotKey).toMatch(/^[A-Za-z0-9]{22}$/);
    await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
  });

  it(`keeps at most ${SHOTS_PER_WORKFLOW} screenshots per workflow and none older than 30 days`, async () => {
    const w = await create({
      intervalSec: 1,
      steps: [{ action: 'goto', url: `${site.url}/missing` }],
    });
    const keys: string[] = [];
    for (let i = 0; i <= SHOTS_PER_WORKFLOW; i++) {
      const r = await post(`/browser-workflow/${w.id}/check-now`, {});
      keys.push(r.body.details.screenshotKey);
    }
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9]{22}$/);
    const status = async (k: string) => (await t.request('GET', `/browser-shot/${k}`, { token: dev })).status;
    expect(await status(keys[0]!)).toBe(404);
    expect(await status(keys[1]!)).toBe(200);
    expect(await status(keys.at(-1)!)).toBe(200);
    await t.request('POST', `/browser-workflow/${w.id}/pause`, { token: dev });
    t.clock.advance(30 * 86_400 * SEC + SEC);
    expect(await status(keys.at(-1)!)).toBe(404);
    await t.server.scheduler.runNow('retention');
    const files = readdirSync(join(t.dataDir, 'browser-shots'));
    for (const k of keys) expect(files).not.toContain(`${k}.jpg`);
    await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
    // 21 real browser checks one after another: ~1 s each on a loaded 2-core machine (30 s was too tight).
  }, 120_000);

  it('opens at most two browser contexts at once and closes the browser after a minute idle', async () => {
    const before = chromiumStats(t.server.ctx).peak;
    expect(before).toBeLessThanOrEqual(2);
    const steps = [
      { action: 'goto', url: `${site.url}/slow` },
      { action: 'waitFor', value: 300 },
    ];
    const runs = await Promise.all([1, 2, 3, 4].map(() => post('/browser-workflow/test-step', { steps })));
    for (const r of runs) expect(r.body.ok).toBe(true);
    const stats = chromiumStats(t.server.ctx);
    expect(stats.peak).toBe(2);
    expect(stats).toMatchObject({ running: true, open: 0, waiting: 0 });
    await advance(CHROMIUM_IDLE_MS - SEC);
    expect(chromiumStats(t.server.ctx).running).toBe(true);
    await advance(2 * SEC);
    expect(chromiumStats(t.server.ctx).running).toBe(false);
    // the next check launches it again; content monitors' render: "browser" uses the same browser
    const launches = chromiumStats(t.server.ctx).launches;
    const rule = await post('/content-monitor/test-rule', {
      url: `${site.url}/home?user=bob`,
      selector: '#greeting',
      rule: 'contains',
      value: 'bob',
      render: 'browser',
    });
    expect(rule.body).toMatchObject({ ok: true, text: 'Welcome bob' });
    expect(chromiumStats(t.server.ctx)).toMatchObject({ running: true, launches: launches + 1 });
  });

  it('login answers the cookies the sign-in left and stores them in the workflow when workflowId is given', async () => {
    const w = await create({ paused: true, steps: [{ action: 'goto', url: `${site.url}/whoami` }] });
    const res = await post('/browser-workflow/login', {
      url: `${site.url}/set-session`,
      steps: [{ action: 'expectText', value: 'signed in' }],
      workflowId: w.id,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      finalUrl: `${site.url}/set-session`,
      cookies: [
        {
          name: 'sid',
          value: 's-123',
          domain: '127.0.0.1',
          path: '/',
          expires: null,
          httpOnly: true,
          secure: false,
          sameSite: 'Lax',
        },
      ],
    });
    const got = (await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body;
    expect(got.cookies).toEqual([
      expect.objectContaining({ name: 'sid', value: '********', httpOnly: true }),
    ]);
    // the stored cookie is sent by the workflow's own checks
    await t.request('PUT', `/browser-workflow/${w.id}`, {
      token: dev,
      json: {
        steps: [
          { action: 'goto', url: `${site.url}/whoami` },
          { action: 'expectText', value: 'sid=s-123' },
        ],
      },
    });
    expect((await post(`/browser-workflow/${w.id}/check-now`, {})).body).toMatchObject({ ok: true });
    // someone else's workflow: 404, nothing runs
    const foreign = await post(
      '/browser-workflow/login',
      { url: `${site.url}/set-session`, workflowId: w.id },
      otherDev,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.errorDescription).toBe('monitor not found');
    const failed = await post('/browser-workflow/login', { url: `${site.url}/missing` });
    expect(failed.body).toMatchObject({ ok: false, error: 'step 1 goto: status 404' });
    await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
  });

  it('on battery browser workflows pause without alerts and other monitors check half as often', async () => {
    const channel = (await makeChannel(t, dev)).id;
    const w = await create({
      appid: channel,
      intervalSec: 60,
      steps: [{ action: 'goto', url: `${site.url}/missing` }],
    });
    const m = (
      await post('/monitor', { appid: channel, name: 'plain', intervalSec: 60, url: `${site.url}/missing` })
    ).body;
    await t.server.scheduler.tick(); // first checks: workflow down (one message), monitor down too (404)
    expect(
      messagesOf(channel)
        .map((x) => x.title)
        .sort(),
    ).toEqual(['plain is down', 'shop login is down']);
    const shots = () =>
      t.server.ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM browser_shots WHERE monitor_id = ?', [
        w.id,
      ])!.n;
    const shotsBefore = shots();
    expect((await t.request('GET', '/power', { token: dev })).body).toMatchObject({
      onBattery: false,
      intervalFactor: 1,
    });

    setOnBattery(t.server.ctx, true);
    expect((await t.request('GET', '/power', { token: dev })).body).toEqual({
      onBattery: true,
      source: 'electron',
      intervalFactor: 2,
      batteryIntervalFactor: 2,
      browserWorkflowsPaused: true,
      since: new Date(t.clock.now()).toISOString(),
    });
    const paused = (await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body;
    expect(paused).toMatchObject({ status: 'unknown', lastError: POWER_PAUSED });
    const firstCheck = (await t.request('GET', `/monitor/${m.id}`, { token: dev })).body.lastCheckAt;
    await advance(60 * SEC); // the monitor's check was planned before: it runs, and plans the next 120 s on
    const second = (await t.request('GET', `/monitor/${m.id}`, { token: dev })).body.lastCheckAt;
    expect(Date.parse(second) - Date.parse(firstCheck)).toBe(60 * SEC);
    await advance(60 * SEC);
    expect((await t.request('GET', `/monitor/${m.id}`, { token: dev })).body.lastCheckAt).toBe(second);
    await advance(60 * SEC);
    const third = (await t.request('GET', `/monitor/${m.id}`, { token: dev })).body.lastCheckAt;
    expect(Date.parse(third) - Date.parse(second)).toBe(120 * SEC);
    // the workflow ran no check meanwhile: no screenshot, no message, still unknown
    expect(shots()).toBe(shotsBefore);
    expect((await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body).toMatchObject({
      status: 'unknown',
      lastError: POWER_PAUSED,
    });
    expect(messagesOf(channel)).toHaveLength(2);

    setOnBattery(t.server.ctx, false);
    await t.server.scheduler.tick(); // back on AC: the workflow is checked at once
    expect((await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body).toMatchObject({
      status: 'down',
      lastError: 'step 1 goto: status 404',
    });
    expect(shots()).toBe(shotsBefore + 1);
    // still down since before: no second down message (lastAlerted = down)
    expect(messagesOf(channel)).toHaveLength(2);
    // the monitor's next check is back to 60 s after its last start
    expect((await t.request('GET', '/power', { token: dev })).body).toMatchObject({
      onBattery: false,
      intervalFactor: 1,
    });
    await advance(60 * SEC);
    const fourth = (await t.request('GET', `/monitor/${m.id}`, { token: dev })).body.lastCheckAt;
    expect(Date.parse(fourth) - Date.parse(third)).toBe(60 * SEC);
    await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
    await t.request('DELETE', `/monitor/${m.id}`, { token: dev });
  });
});

describe.skipIf(!HAS_CHROMIUM)('browser-workflow checks in flight when the power changes', () => {
  it('a check that ends after the machine went on battery is not judged: unknown, no down message', async () => {
    const channel = (await makeChannel(t, dev)).id;
    let arrived!: () => void;
    const atPage = new Promise<void>((r) => {
      arrived = r;
    });
    let release!: () => void;
    held = { arrived, release: new Promise<void>((r) => (release = r)) };
    try {
      const w = await create({
        appid: channel,
        intervalSec: 60,
        steps: [{ action: 'goto', url: `${site.url}/hold` }],
      });
      const ticked = t.server.scheduler.tick(); // the first check starts and waits at /hold
      await atPage;
      setOnBattery(t.server.ctx, true);
      release(); // the page answers 404 now: on mains power this check would say down
      await ticked;
      expect((await t.request('GET', `/browser-workflow/${w.id}`, { token: dev })).body).toMatchObject({
        status: 'unknown',
        lastError: POWER_PAUSED,
      });
      expect(messagesOf(channel)).toEqual([]);
      await t.request('DELETE', `/browser-workflow/${w.id}`, { token: dev });
    } finally {
      held = null;
      setOnBattery(t.server.ctx, false);
    }
  });
});

describe.skipIf(!HAS_CHROMIUM)('browser-workflow with BELFRY_BLOCK_PRIVATE_TARGETS', () => {
  it('test-step refuses a loopback page to a non-admin and opens it for an administrator', async () => {
    const s = await startTestServer({ config: { blockPrivateTargets: true } });
    try {
      const admin = (await deviceToken(s)).token;
      const user = (await deviceToken(s, makeUser(s))).token;
      const steps = [{ action: 'goto', url: `${site.url}/login` }];
      const refused = await s.request('POST', '/browser-workflow/test-step', {
        token: user,
        json: { steps },
      });
      expect(refused.body).toMatchObject({ ok: false, error: 'step 1 goto: private address refused' });
      const allowed = await s.request('POST', '/browser-workflow/test-step', {
        token: admin,
        json: { steps },
      });
      expect(allowed.body).toMatchObject({ ok: true, details: { title: 'Sign in' } });
      const empty = await s.request('POST', '/browser-workflow/test-step', { token: user, json: {} });
      expect(empty.status).toBe(400);
      expect(empty.body.errorDescription).toBe('steps: required');
    } finally {
      await s.close();
    }
  });
});

describe('browser-workflow without Chromium', () => {
  it('a check is unknown with the §2.3 error when no Chromium is available', async () => {
    const s = await startTestServer({ config: { chromiumPath: '/nonexistent/chromium' } });
    try {
      const token = (await deviceToken(s)).token;
      const channel = (await makeChannel(s, token)).id;
      const res = await s.request('POST', '/browser-workflow', {
        token,
        json: { appid: channel, name: 'w', steps: [{ action: 'goto', url: 'http://127.0.0.1:9/' }] },
      });
      await s.server.scheduler.tick();
      const got = (await s.request('GET', `/browser-workflow/${res.body.id}`, { token })).body;
      expect(got).toMatchObject({ status: 'unknown', lastError: NO_CHROMIUM });
      const test = await s.request('POST', '/browser-workflow/test-step', {
        token,
        json: { steps: [{ action: 'goto', url: 'http://127.0.0.1:9/' }] },
      });
      expect(test.body).toMatchObject({ ok: false, error: NO_CHROMIUM });
      expect(s.server.ctx.db.all('SELECT * FROM messages WHERE channel_id = ?', [channel])).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('GET /power answers the BELFRY_ON_BATTERY setting of a headless server', async () => {
    const s = await startTestServer({ config: { onBattery: true, batteryIntervalFactor: 3 } });
    try {
      const token = (await deviceToken(s)).token;
      const read = await apiToken(s, { token }, { access: 'read' });
      expect((await s.request('GET', '/power', { token: read.token })).body).toEqual({
        onBattery: true,
        source: 'setting',
        intervalFactor: 3,
        batteryIntervalFactor: 3,
        browserWorkflowsPaused: true,
        since: null,
      });
      expect((await s.request('GET', '/power')).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it("pushes power:changed to every user's /ws?events=1 sockets, and to no key or unflagged socket", async () => {
    const s = await startTestServer();
    const sockets: WsClient[] = [];
    try {
      const admin = (await deviceToken(s)).token;
      const other = (await deviceToken(s, makeUser(s))).token;
      const channel = await makeChannel(s, admin);
      const key = insertChannelKeyRow(s, channel.id, { canRead: true });
      const open = async (path: string, token: string) => {
        const ws = await openWs(s, path, token);
        sockets.push(ws);
        return ws;
      };
      const [adminWs, otherWs, plainWs, keyWs] = [
        await open('/ws?events=1', admin),
        await open('/ws?events=1', other),
        await open('/ws', admin),
        await open('/ws?events=1', key),
      ];
      setOnBattery(s.server.ctx, true);
      const onBattery = {
        kind: 'power:changed',
        appid: 0,
        at: new Date(s.clock.now()).toISOString(),
        data: {
          onBattery: true,
          source: 'electron',
          intervalFactor: 2,
          batteryIntervalFactor: 2,
          browserWorkflowsPaused: true,
          since: new Date(s.clock.now()).toISOString(),
        },
      };
      expect(await adminWs.next()).toEqual(onBattery);
      expect(await otherWs.next()).toEqual(onBattery);
      setOnBattery(s.server.ctx, true); // the same state again: no frame
      s.clock.advance(1_000);
      setOnBattery(s.server.ctx, false);
      expect(await adminWs.next()).toMatchObject({
        kind: 'power:changed',
        appid: 0,
        data: { onBattery: false, intervalFactor: 1, browserWorkflowsPaused: false },
      });
      // a message after the changes is the first frame the unflagged and the key socket see
      const m = await sendMessage(s, channel.token, { message: 'after' });
      for (const ws of [plainWs, keyWs])
        expect(await ws.next()).toMatchObject({ id: m.id, message: 'after' });
      expect(await adminWs.next()).toMatchObject({ id: m.id });
      expect(await otherWs.next()).toMatchObject({ kind: 'power:changed', data: { onBattery: false } });
    } finally {
      for (const ws of sockets) ws.ws.close();
      await s.close();
    }
  });
});

describe('POST /browser-workflow/build-step', () => {
  it('build-step turns a plain-language description into a step by local rules', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { description: 'Open https://shop.example/login' },
        { action: 'goto', url: 'https://shop.example/login' },
      ],
      [
        { description: 'go to the login page', url: 'https://shop.example/' },
        { action: 'goto', url: 'https://shop.example/' },
      ],
      [{ description: 'Click "Sign in"' }, { action: 'click', selector: 'text="Sign in"' }],
      [{ description: 'click on #submit' }, { action: 'click', selector: '#submit' }],
      [
        { description: 'type "alice" into "Email"' },
        { action: 'fill', selector: 'text="Email"', value: 'alice', secret: false },
      ],
      [
        { description: 'fill the password "hunter2" into #pass' },
        { action: 'fill', selector: '#pass', value: 'hunter2', secret: true },
      ],
      [{ description: 'press enter' }, { action: 'press', value: 'Enter' }],
      [{ description: 'wait 2 seconds' }, { action: 'waitFor', value: 2000 }],
      [{ description: 'wait for "Dashboard"' }, { action: 'waitFor', selector: 'text="Dashboard"' }],
      [{ description: 'expect to see "Welcome back"' }, { action: 'expectText', value: 'Welcome back' }],
      [{ description: 'the URL should contain /dashboard' }, { action: 'expectUrl', value: '/dashboard' }],
    ];
    for (const [json, step] of cases) {
      const res = await post('/browser-workflow/build-step', json);
      expect(res.status, JSON.stringify(json)).toBe(200);
      expect(res.body.step, JSON.stringify(json)).toMatchObject({ ...step, timeoutMs: 10_000 });
    }
    const none = await post('/browser-workflow/build-step', { description: 'hmm' });
    expect(none.status).toBe(400);
    expect(none.body.errorDescription).toMatch(/^description: no step found/);
  });
});

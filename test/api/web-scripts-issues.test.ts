import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
});

type Script = Record<string, any> & { id: number; token: string; appid: number };

async function script(body: Record<string, unknown> = {}): Promise<Script> {
  const appid = body.appid ?? (await makeChannel(t, dev)).id;
  const res = await t.request('POST', '/web-script', { token: dev, json: { name: 'shop', appid, ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Script;
}

async function send(s: Script, events: unknown[], flushReason = 'error') {
  const res = await t.request('POST', `/script/${s.token}`, {
    body: JSON.stringify({ events, flushReason }),
    headers: { 'Content-Type': 'text/plain' },
  });
  if (res.status !== 200) throw new Error(`batch: ${res.status} ${res.text}`);
  return res.body as { accepted: number };
}

async function issues(s: Script, status = 'unresolved') {
  const res = await t.request('GET', `/web-script/${s.id}/issues?status=${status}`, { token: dev });
  expect(res.status).toBe(200);
  return res.body as Record<string, any>[];
}

const HOUR = 3_600_000;

/** The sparkline of events at these times: 24 hourly counts ending with the hour that holds now. */
function hourly(times: number[]): number[] {
  const last = Math.floor(t.clock.now() / HOUR) * HOUR;
  const out = new Array(24).fill(0);
  for (const at of times) {
    const i = 23 - (last - Math.floor(at / HOUR) * HOUR) / HOUR;
    if (i >= 0) out[i]++;
  }
  return out;
}

function messagesOf(appid: number) {
  return t.server.ctx.db
    .all<{
      title: string;
      message: string;
      priority: number;
      date: number;
      extras: string;
      sender_name: string;
    }>(
      'SELECT title, message, priority, date, extras, sender_name FROM messages WHERE channel_id = ? ORDER BY id',
      [appid],
    )
    .map((m) => ({ ...m, extras: JSON.parse(m.extras) as Record<string, any> }));
}

// A React production build (Chrome): the same bug from two builds, two property names, two pages.
const reactError = (build: string, prop: string, page: string) => ({
  type: 'error',
  message: `Uncaught TypeError: Cannot read properties of undefined (reading '${prop}')`,
  stack: `TypeError: Cannot read properties of undefined (reading '${prop}')
    at ProductList (https://shop.example/static/js/main.${build}.js:2:10452)
    at Ki (https://shop.example/static/js/vendor.8d7e6f5a.js:2:64231)
    at Ms (https://shop.example/static/js/vendor.8d7e6f5a.js:2:112901)`,
  url: `https://shop.example${page}`,
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0',
  source: `https://shop.example/static/js/main.${build}.js`,
  line: 2,
  col: 10452,
});

// Firefox: an unhandled rejection from a fetch helper.
const firefoxRejection = {
  type: 'rejection',
  message: 'TypeError: NetworkError when attempting to fetch resource.',
  stack:
    'loadCart@https://shop.example/static/js/main.3f9a2b1c.js:2:8810\nasync*init@https://shop.example/static/js/main.3f9a2b1c.js:2:120',
  url: 'https://shop.example/cart',
};

describe('grouping', () => {
  it('events with the same fingerprint make one issue; a new issue sends one message', async () => {
    const s = await script();
    const t0 = t.clock.now();
    await send(s, [
      reactError('3f9a2b1c', 'map', '/products?page=1'),
      reactError('3f9a2b1c', 'length', '/products?page=2'),
    ]);
    t.clock.advance(5000);
    await send(s, [reactError('77aa88bb', 'map', '/sale')], 'interval');
    const list = await issues(s);
    expect(list).toEqual([
      {
        id: list[0]!.id,
        scriptId: s.id,
        title: "Uncaught TypeError: Cannot read properties of undefined (reading 'map')",
        culprit: 'ProductList (https://shop.example/static/js/main.3f9a2b1c.js:2:10452)',
        type: 'error',
        count: 3,
        firstSeen: iso(t0),
        lastSeen: iso(t0 + 5000),
        status: 'unresolved',
        lastUrl: 'https://shop.example/sale',
        lastRelease: null,
        sparkline: hourly([t0, t0, t0 + 5000]),
      },
    ]);
    const msgs = messagesOf(s.appid);
    expect(msgs).toEqual([
      {
        title: 'shop: new issue',
        message:
          "Uncaught TypeError: Cannot read properties of undefined (reading 'map')\nProductList (https://shop.example/static/js/main.3f9a2b1c.js:2:10452)\nhttps://shop.example/products?page=1",
        priority: 6,
        date: t0,
        extras: { 'service::source': { kind: 'web-script', id: s.id, event: 'new', issueId: list[0]!.id } },
        sender_name: 'shop',
      },
    ]);
  });

  it('Chrome and Firefox stacks of different bugs make separate issues, newest first', async () => {
    const s = await script({ priority: 8 });
    await send(s, [reactError('3f9a2b1c', 'map', '/')]);
    t.clock.advance(1000);
    await send(s, [firefoxRejection]);
    t.clock.advance(1000);
    await send(s, [{ type: 'message', message: 'checkout took 4200 ms' }]);
    const list = await issues(s);
    expect(list.map((i) => [i.type, i.culprit])).toEqual([
      ['message', ''],
      ['rejection', 'loadCart (https://shop.example/static/js/main.3f9a2b1c.js:2:8810)'],
      ['error', 'ProductList (https://shop.example/static/js/main.3f9a2b1c.js:2:10452)'],
    ]);
    expect(messagesOf(s.appid).map((m) => [m.title, m.priority])).toEqual([
      ['shop: new issue', 8],
      ['shop: new issue', 8],
      ['shop: new issue', 8],
    ]);
    const errs = await t.request(
      'GET',
      `/web-script/${s.id}/error-series?bucket=1m&from=${iso(t.clock.now() - 2000)}`,
      {
        token: dev,
      },
    );
    const sum = (k: string) => (errs.body.points as Record<string, number>[]).reduce((a, p) => a + p[k]!, 0);
    expect([sum('errors'), sum('rejections'), sum('messages'), sum('newIssues')]).toEqual([1, 1, 1, 3]);
  });

  it('an error event without a stack groups by its source position', async () => {
    const s = await script();
    await send(s, [
      { type: 'error', message: 'Script error.', source: 'https://cdn.other.example/w.js', line: 1, col: 9 },
    ]);
    expect((await issues(s))[0]!.culprit).toBe('? (https://cdn.other.example/w.js:1:9)');
  });
});

describe('issue states', () => {
  it('resolve, then a new event: regression message and unresolved again; ignored: counted without message', async () => {
    const s = await script();
    await send(s, [reactError('3f9a2b1c', 'map', '/')]);
    const [issue] = await issues(s);
    const resolved = await t.request('POST', `/web-script/${s.id}/issues/${issue!.id}/resolve`, {
      token: dev,
    });
    expect(resolved.body).toMatchObject({ id: issue!.id, status: 'resolved' });
    expect((await t.request('GET', `/web-script/${s.id}`, { token: dev })).body).toMatchObject({
      status: 'ok',
      unresolvedCount: 0,
    });
    t.clock.advance(60_000);
    await send(s, [reactError('3f9a2b1c', 'map', '/again')]);
    expect((await issues(s))[0]).toMatchObject({ id: issue!.id, status: 'unresolved', count: 2 });
    const msgs = messagesOf(s.appid);
    expect(msgs.map((m) => m.title)).toEqual(['shop: new issue', 'shop: issue regressed']);
    expect(msgs[1]!.extras['service::source']).toEqual({
      kind: 'web-script',
      id: s.id,
      event: 'regression',
      issueId: issue!.id,
    });
    expect(msgs[1]!.message.endsWith('\nhttps://shop.example/again')).toBe(true);

    await t.request('POST', `/web-script/${s.id}/issues/${issue!.id}/ignore`, { token: dev });
    await send(s, [reactError('3f9a2b1c', 'map', '/')]);
    expect(messagesOf(s.appid)).toHaveLength(2);
    expect(await issues(s)).toEqual([]);
    expect((await issues(s, 'ignored'))[0]).toMatchObject({ count: 3, status: 'ignored' });
    expect((await t.request('GET', `/web-script/${s.id}/issue-count`, { token: dev })).body).toEqual({
      unresolved: 0,
    });
  });

  it('a deleted issue starts again as new', async () => {
    const s = await script();
    await send(s, [firefoxRejection]);
    const [issue] = await issues(s);
    expect(
      (await t.request('DELETE', `/web-script/${s.id}/issues/${issue!.id}`, { token: dev })).body,
    ).toEqual({});
    expect((await t.request('GET', `/web-script/${s.id}`, { token: dev })).body.status).toBe('ok');
    await send(s, [firefoxRejection]);
    const [again] = await issues(s);
    expect(again!.id).not.toBe(issue!.id);
    expect(again!.count).toBe(1);
    expect(messagesOf(s.appid).map((m) => m.extras['service::source'].event)).toEqual(['new', 'new']);
  });

  it("another script's issue id is 404 issue not found", async () => {
    const a = await script();
    const b = await script();
    await send(b, [firefoxRejection]);
    const [issue] = await issues(b);
    const res = await t.request('POST', `/web-script/${a.id}/issues/${issue!.id}/resolve`, { token: dev });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('issue not found');
  });

  it('only the last 100 events of an issue are kept', async () => {
    const s = await script();
    for (let i = 0; i < 3; i++)
      await send(
        s,
        new Array(50).fill(0).map(() => firefoxRejection),
        'size',
      );
    const [issue] = await issues(s);
    expect(issue!.count).toBe(150);
    const kept = t.server.ctx.db.first<{ n: number }>(
      'SELECT COUNT(*) AS n FROM web_script_events WHERE issue_id = ?',
      [issue!.id],
    )!.n;
    expect(kept).toBe(100);
  });
});

describe('breadcrumbs', () => {
  it('GET …/breadcrumbs answers those of the latest event', async () => {
    const s = await script();
    const at = t.clock.now() - 3000;
    await send(s, [
      {
        ...firefoxRejection,
        at: at - 10_000,
        breadcrumbs: [{ at: iso(at - 11_000), type: 'click', message: 'old' }],
      },
    ]);
    await send(s, [
      {
        ...firefoxRejection,
        at,
        breadcrumbs: [
          { at: iso(at - 2000), type: 'click', message: 'button#checkout "Pay"' },
          { at: iso(at - 1000), type: 'fetch', message: 'POST https://api.shop.example/orders 500' },
          { at: at - 500, type: 'console', message: 'error: payment failed' },
        ],
      },
    ]);
    const [issue] = await issues(s);
    const res = await t.request('GET', `/web-script/${s.id}/issues/${issue!.id}/breadcrumbs`, { token: dev });
    expect(res.body).toEqual({
      eventAt: iso(at),
      breadcrumbs: [
        { at: iso(at - 2000), type: 'click', message: 'button#checkout "Pay"' },
        { at: iso(at - 1000), type: 'fetch', message: 'POST https://api.shop.example/orders 500' },
        { at: iso(at - 500), type: 'console', message: 'error: payment failed' },
      ],
      // No source map: the frames as printed, all the page's own (same origin as the page).
      frames: [
        {
          fn: 'loadCart',
          file: 'https://shop.example/static/js/main.3f9a2b1c.js',
          line: 2,
          col: 8810,
          inApp: true,
          resolved: false,
        },
        {
          fn: 'async*init', // Firefox's async marker stays, as parsed for the fingerprint
          file: 'https://shop.example/static/js/main.3f9a2b1c.js',
          line: 2,
          col: 120,
          inApp: true,
          resolved: false,
        },
      ],
    });
  });

  it('an issue whose events carried no stack answers no frames', async () => {
    const s = await script();
    await send(s, [{ type: 'message', message: 'checkout slow' }]);
    const [issue] = await issues(s);
    const res = await t.request('GET', `/web-script/${s.id}/issues/${issue!.id}/breadcrumbs`, { token: dev });
    expect(res.body).toMatchObject({ breadcrumbs: [], frames: [] });
  });
});

describe('sparklines', () => {
  it('each row counts its events an hour over the last 24 hours, from one query for the page', async () => {
    const s = await script();
    const now = t.clock.now();
    const hourStart = Math.floor(now / HOUR) * HOUR;
    const mk = (message: string, at: number) => ({ type: 'message', message, at });
    await send(s, [
      mk('first', now),
      mk('first', now),
      mk('first', hourStart - 1), // the hour before
      mk('first', hourStart - 23 * HOUR), // the oldest hour shown
      mk('first', hourStart - 24 * HOUR), // one hour too old: not in the line
      mk('second', hourStart - 5 * HOUR),
    ]);
    const list = await issues(s);
    const first = list.find((i) => i.title === 'first')!;
    const second = list.find((i) => i.title === 'second')!;
    expect(first.count).toBe(5);
    expect(first.sparkline).toHaveLength(24);
    expect(first.sparkline[23]).toBe(2);
    expect(first.sparkline[22]).toBe(1);
    expect(first.sparkline[0]).toBe(1);
    expect(first.sparkline.reduce((a: number, b: number) => a + b, 0)).toBe(4);
    expect(second.sparkline).toEqual(hourly([hourStart - 5 * HOUR]));
    expect(second.sparkline[18]).toBe(1);

    // A day later the old hours have left the line; the issue stays.
    t.clock.advance(24 * HOUR);
    const later = (await issues(s)).find((i) => i.title === 'first')!;
    expect(later.sparkline).toEqual(new Array(24).fill(0));
    expect(later.count).toBe(5);
  });
});

describe('series', () => {
  it('GET …/series answers every bucket with zeros by default over the last 24 h', async () => {
    const s = await script();
    await t.request('GET', `/script/${s.token}`);
    await t.request('POST', `/script/${s.token}`);
    await send(s, [firefoxRejection, firefoxRejection], 'size');
    const res = await t.request('GET', `/web-script/${s.id}/series`, { token: dev });
    expect(res.body.bucket).toBe('1h');
    expect(res.body.points).toHaveLength(24);
    const last = res.body.points[23];
    const hour = Math.floor(t.clock.now() / 3_600_000) * 3_600_000;
    expect(last).toEqual({ at: iso(hour), loads: 1, pings: 1, batches: 1, events: 2 });
    expect(res.body.points[0]).toEqual({
      at: iso(hour - 23 * 3_600_000),
      loads: 0,
      pings: 0,
      batches: 0,
      events: 0,
    });
  });

  it('GET …/series answers 400 for a bad bucket, a reversed range and more than 1440 buckets', async () => {
    const s = await script();
    for (const [q, prefix] of [
      ['bucket=5m', 'bucket:'],
      [`from=${iso(t.clock.now())}&to=${iso(t.clock.now() - 60_000)}`, 'from:'],
      [`bucket=1m&from=${iso(t.clock.now() - 2 * 86_400_000)}`, 'from: at most 1440'],
      ['from=yesterday', 'from:'],
    ]) {
      const res = await t.request('GET', `/web-script/${s.id}/series?${q}`, { token: dev });
      expect(res.status, q).toBe(400);
      expect(res.body.errorDescription.startsWith(prefix!)).toBe(true);
    }
  });

  it('GET …/flush-stats counts batches by flush reason over the last 7 days', async () => {
    const s = await script();
    await send(s, [firefoxRejection], 'interval');
    await send(s, [firefoxRejection], 'interval');
    await send(s, [firefoxRejection], 'unload');
    await send(s, [firefoxRejection], 'error');
    await send(s, new Array(20).fill(firefoxRejection), 'size');
    await t.request('POST', `/script/${s.token}`);
    const res = await t.request('GET', `/web-script/${s.id}/flush-stats`, { token: dev });
    expect(res.body).toEqual({
      from: iso(t.clock.now() - 7 * 86_400_000),
      to: iso(t.clock.now()),
      total: 6,
      reasons: { interval: 2, size: 1, unload: 1, error: 1, ping: 1 },
    });
  });
});

describe('analysis', () => {
  async function issueOf(event: Record<string, unknown>) {
    const s = await script();
    await send(s, [event]);
    return { s, issue: (await issues(s))[0]! };
  }

  it('GET …/analysis is 204 before any analysis; POST …/analyze saves one and returns it without force', async () => {
    const { s, issue } = await issueOf(reactError('3f9a2b1c', 'map', '/'));
    const base = `/web-script/${s.id}/issues/${issue.id}`;
    expect((await t.request('GET', `${base}/analysis`, { token: dev })).status).toBe(204);
    const a = await t.request('POST', `${base}/analyze`, { token: dev, json: {} });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      issueId: issue.id,
      provider: 'local',
      lang: 'en',
      createdAt: iso(t.clock.now()),
    });
    expect(a.body.summary).toContain('"map"');
    expect(a.body.summary).toContain('ProductList');
    expect(a.body.suggestions.length).toBeGreaterThan(1);
    expect((await t.request('GET', `${base}/analysis`, { token: dev })).body).toEqual(a.body);
    t.clock.advance(1000);
    expect((await t.request('POST', `${base}/analyze`, { token: dev, json: {} })).body).toEqual(a.body);
    const forced = await t.request('POST', `${base}/analyze`, { token: dev, json: { force: true } });
    expect(forced.body.createdAt).toBe(iso(t.clock.now()));
    const ru = await t.request('POST', `${base}/analyze`, { token: dev, json: { lang: 'ru' } });
    expect(ru.body.lang).toBe('ru');
    expect(ru.body.summary).toContain('«map»');
    const bad = await t.request('POST', `${base}/analyze`, { token: dev, json: { lang: 'de' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription.startsWith('lang:')).toBe(true);
  });

  it('the local analysis recognises the common browser errors', async () => {
    const cases: [string, RegExp][] = [
      ['TypeError: t.map is not a function', /t\.map was called as a function/],
      ['TypeError: Failed to fetch', /fetch\(\) request did not get any HTTP response/],
      ['Script error.', /another origin/],
      ['ChunkLoadError: Loading chunk 214 failed.', /lazily loaded chunk/],
      ['ResizeObserver loop completed with undelivered notifications.', /ResizeObserver callback/],
    ];
    for (const [message, summary] of cases) {
      const { s, issue } = await issueOf({ type: 'error', message });
      const res = await t.request('POST', `/web-script/${s.id}/issues/${issue.id}/analyze`, {
        token: dev,
        json: {},
      });
      expect(res.body.summary, message).toMatch(summary);
      expect(res.body.likelyCause.length, message).toBeGreaterThan(20);
    }
  });

  it('the generic analysis uses the culprit and a failed request among the breadcrumbs', async () => {
    const { s, issue } = await issueOf({
      ...firefoxRejection,
      message: 'Error: order 1234 rejected',
      breadcrumbs: [
        { at: iso(t.clock.now() - 2000), type: 'click', message: 'button "Pay"' },
        { at: iso(t.clock.now() - 1000), type: 'fetch', message: 'POST https://api.shop.example/orders 502' },
      ],
    });
    const res = await t.request('POST', `/web-script/${s.id}/issues/${issue.id}/analyze`, {
      token: dev,
      json: {},
    });
    expect(res.body.summary).toBe(
      'Unhandled promise rejection: Error: order 1234 rejected (loadCart (https://shop.example/static/js/main.3f9a2b1c.js:2:8810)).',
    );
    expect(res.body.likelyCause).toContain('POST https://api.shop.example/orders 502');
    expect(res.body.suggestions[0]).toContain('loadCart');
  });
});

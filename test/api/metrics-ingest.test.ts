import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AT_MAX_AGE_MS,
  INGESTS_PER_MINUTE,
  METRIC_SOURCES_PER_USER,
  POINTS_PER_REQUEST,
  SERIES_PER_SOURCE,
} from '../../server/features/metrics/points';
import { issueToken } from '../../server/lib/tokens';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;
let otherUserId: number;

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  const other = makeUser(t);
  otherUserId = other.id;
  otherDev = (await deviceToken(t, other)).token;
});
afterAll(async () => {
  await t.close();
});

async function source(body: Record<string, unknown> = {}, token = dev) {
  const appid = body.appid ?? (await makeChannel(t, token)).id;
  const res = await t.request('POST', '/metric-source', { token, json: { name: 'node-1', appid, ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number; token: string; appid: number };
}

function post(token: string, json: unknown) {
  return t.request('POST', `/metric/${token}`, { json });
}

function postText(token: string, text: string) {
  return t.request('POST', `/metric/${token}`, {
    body: text,
    headers: { 'Content-Type': 'text/plain; version=0.0.4' },
  });
}

async function metrics(id: number, token = dev) {
  const res = await t.request('GET', `/metric-source/${id}/metrics`, { token });
  expect(res.status).toBe(200);
  return res.body as Record<string, any>[];
}

describe('metric sources', () => {
  it('POST /metric-source creates a pending source whose full token and url are shown once', async () => {
    const c = await makeChannel(t, dev);
    const now = t.clock.now();
    const res = await t.request('POST', '/metric-source', {
      token: dev,
      json: { appid: c.id, name: ' web ' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      name: 'web',
      paused: false,
      status: 'pending',
      statusSince: iso(now),
      lastCheckAt: null,
      createdAt: iso(now),
      token: expect.stringMatching(/^M[A-Za-z0-9]{22}$/),
      url: `${t.url}/metric/${res.body.token}`,
    });
    const got = await t.request('GET', `/metric-source/${res.body.id}`, { token: dev });
    expect(got.status).toBe(200);
    const masked = `${res.body.token.slice(0, 3)}${'*'.repeat(16)}${res.body.token.slice(-4)}`;
    expect(got.body.token).toBe(masked);
    expect(got.body.url).toBe(`${t.url}/metric/${masked}`);
    const list = await t.request('GET', `/metric-source?appid=${c.id}`, { token: dev });
    expect(list.body).toEqual([got.body]);
  });

  it('POST /metric-source answers 400 appid: no such channel when the channel is someone else', async () => {
    const theirs = await makeChannel(t, otherDev);
    const res = await t.request('POST', '/metric-source', {
      token: dev,
      json: { appid: theirs.id, name: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('appid: no such channel');
    const noName = await t.request('POST', '/metric-source', { token: dev, json: { appid: theirs.id } });
    expect(noName.status).toBe(400);
    expect(noName.body.errorDescription).toMatch(/^name: /);
  });

  it('POST /metric-source/{id}/rotate gives a new token and the old one stops ingesting', async () => {
    const s = await source();
    const rotated = await t.request('POST', `/metric-source/${s.id}/rotate`, { token: dev });
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).not.toBe(s.token);
    expect(rotated.body.url).toBe(`${t.url}/metric/${rotated.body.token}`);
    const old = await post(s.token, { name: 'up', value: 1 });
    expect(old.status).toBe(404);
    expect(old.body.errorDescription).toBe('metric source not found');
    expect((await post(rotated.body.token, { name: 'up', value: 1 })).body).toEqual({
      accepted: 1,
      rejected: [],
    });
  });

  it('GET /metric-source/{id} answers 404 for someone else and for a scoped token outside its scope', async () => {
    const s = await source({}, otherDev);
    const res = await t.request('GET', `/metric-source/${s.id}`, { token: dev });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('metric source not found');
    const mine = await source();
    const other = await makeChannel(t, dev);
    const scoped = await apiToken(t, { token: dev }, { access: 'read', appIds: [other.id] });
    expect((await t.request('GET', `/metric-source/${mine.id}`, { token: scoped.token })).status).toBe(404);
    const inScope = await apiToken(t, { token: dev }, { access: 'read', appIds: [mine.appid] });
    expect((await t.request('GET', `/metric-source/${mine.id}`, { token: inScope.token })).status).toBe(200);
    const list = await t.request('GET', '/metric-source', { token: inScope.token });
    expect(list.body.map((x: { id: number }) => x.id)).toEqual([mine.id]);
    const write = await t.request('PUT', `/metric-source/${mine.id}`, {
      token: inScope.token,
      json: { name: 'n' },
    });
    expect(write.status).toBe(403);
  });

  it('a channel key gets 403 and an M source token used as an API token gets 401 invalid or expired token', async () => {
    const s = await source();
    const key = insertChannelKeyRow(t, s.appid, { canRead: true });
    expect((await t.request('GET', '/metric-source', { token: key })).status).toBe(403);
    const res = await t.request('GET', '/metric-source', { token: s.token });
    expect(res.status).toBe(401);
    expect(res.body.errorDescription).toBe('invalid or expired token');
  });

  it('POST /metric/{api token} answers 404 metric source not found', async () => {
    const api = await apiToken(t, { token: dev });
    const res = await post(api.token, { name: 'up', value: 1 });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('metric source not found');
    expect((await post(issueToken('H').token, { name: 'up', value: 1 })).status).toBe(404);
  });

  it('PUT /metric-source/{id} pauses: ingest answers paused and stores nothing; resuming restores ok', async () => {
    const s = await source();
    expect((await post(s.token, { name: 'up', value: 1 })).status).toBe(200);
    const paused = await t.request('PUT', `/metric-source/${s.id}`, { token: dev, json: { paused: true } });
    expect(paused.body).toMatchObject({ paused: true, status: 'paused' });
    const res = await post(s.token, { name: 'up', value: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: 0, rejected: [], paused: true });
    expect((await metrics(s.id))[0]).toMatchObject({ lastValue: 1, count24h: 1 });
    const resumed = await t.request('PUT', `/metric-source/${s.id}`, { token: dev, json: { paused: false } });
    expect(resumed.body).toMatchObject({ paused: false, status: 'ok' });
  });

  it('the channel event-sources list shows metric sources', async () => {
    const s = await source();
    const res = await t.request('GET', `/application/${s.appid}/event-sources`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body.sources).toContainEqual(
      expect.objectContaining({
        kind: 'metric-source',
        id: s.id,
        name: 'node-1',
        status: 'pending',
        paused: false,
      }),
    );
  });

  it('DELETE /metric-source/{id} answers {} and the token stops working', async () => {
    const s = await source();
    const res = await t.request('DELETE', `/metric-source/${s.id}`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await post(s.token, { name: 'up', value: 1 })).status).toBe(404);
  });

  it(`POST /metric-source answers 403 beyond ${METRIC_SOURCES_PER_USER} sources per user`, async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await makeChannel(t, d);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => {
      for (let i = 0; i < METRIC_SOURCES_PER_USER; i++) {
        const { digest, hint } = issueToken('M');
        ctx.db.run(
          `INSERT INTO metric_sources (user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
           VALUES (?, ?, 'x', 'pending', 0, ?, ?, 0)`,
          [u.id, c.id, digest, hint],
        );
      }
    });
    const res = await t.request('POST', '/metric-source', {
      token: d,
      json: { appid: c.id, name: 'one more' },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe(
      `limit reached: at most ${METRIC_SOURCES_PER_USER} metric sources per user`,
    );
    expect(otherUserId).not.toBe(u.id);
  });
});

describe('POST /metric/{token} JSON', () => {
  it('POST /metric/{token} accepts one point and the source becomes ok with lastCheckAt', async () => {
    const s = await source();
    const res = await post(s.token, { name: 'cpu.load', value: 0.5, tags: { host: 'a' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.body).toEqual({ accepted: 1, rejected: [] });
    const got = await t.request('GET', `/metric-source/${s.id}`, { token: dev });
    expect(got.body).toMatchObject({ status: 'ok', lastCheckAt: iso(t.clock.now()) });
    expect(await metrics(s.id)).toEqual([
      {
        id: expect.any(Number),
        name: 'cpu.load',
        tags: { host: 'a' },
        unit: '',
        description: '',
        lastValue: 0.5,
        lastAt: iso(t.clock.now()),
        count24h: 1,
      },
    ]);
  });

  it('POST /metric/{token} takes a batch: each name + tag set is its own series, tag order does not matter', async () => {
    const s = await source();
    const now = t.clock.now();
    const res = await post(s.token, {
      metrics: [
        { name: 'req', value: 1, tags: { a: '1', b: '2' } },
        { name: 'req', value: 2, tags: { b: '2', a: '1' }, at: (now - 1000) / 1000 },
        { name: 'req', value: 3, tags: { a: '1' }, at: iso(now - 2000) },
        { name: 'req', value: 4 },
      ],
    });
    expect(res.body).toEqual({ accepted: 4, rejected: [] });
    const list = await metrics(s.id);
    expect(list.map((m) => [m.tags, m.count24h, m.lastValue])).toEqual([
      [{ a: '1', b: '2' }, 2, 1],
      [{ a: '1' }, 1, 3],
      [{}, 1, 4],
    ]);
  });

  it('POST /metric/{token} rejects bad points by index with their field and accepts the rest', async () => {
    const s = await source();
    const now = t.clock.now();
    const tooManyTags = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v']));
    const res = await post(s.token, {
      metrics: [
        { name: 'ok', value: 1 },
        { name: 'ok', value: '1' },
        { value: 1 },
        { name: '9bad', value: 1 },
        { name: 'ok', value: 1, at: 'yesterday' },
        { name: 'ok', value: 1, at: (now + 6 * 60_000) / 1000 },
        { name: 'ok', value: 1, at: iso(now - AT_MAX_AGE_MS - 1000) },
        { name: 'ok', value: 1, tags: tooManyTags },
        { name: 'ok', value: 1, tags: { host: 5 } },
        { name: 'ok', value: 1, tags: { 'bad key': 'x' } },
        'nope',
        { name: 'ok', value: 2, at: (now + 4 * 60_000) / 1000 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accepted: 2,
      rejected: [
        { index: 1, error: 'metrics[1].value: must be a number' },
        { index: 2, error: 'metrics[2].name: required' },
        { index: 3, error: 'metrics[3].name: must match ^[a-zA-Z_:][a-zA-Z0-9_:.-]{0,127}$' },
        { index: 4, error: 'metrics[4].at: must be an RFC 3339 time or unix seconds' },
        { index: 5, error: 'metrics[5].at: more than 5 minutes ahead' },
        { index: 6, error: 'metrics[6].at: older than 90 days' },
        { index: 7, error: 'metrics[7].tags: at most 10 tags' },
        { index: 8, error: 'metrics[8].tags.host: must be a string' },
        {
          index: 9,
          error:
            'metrics[9].tags: tag names are letters, digits, _ . - (not first) and at most 64 characters',
        },
        { index: 10, error: 'metrics[10]: must be an object' },
      ],
    });
  });

  it('POST /metric/{token} answers 400 naming the first error when no point is accepted', async () => {
    const s = await source();
    const res = await post(s.token, { metrics: [{ name: 'x', value: null }, { name: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('metrics[0].value: must be a number');
    const single = await post(s.token, { name: 'x', value: 'high' });
    expect(single.status).toBe(400);
    expect(single.body.errorDescription).toBe('metrics[0].value: must be a number');
    const empty = await post(s.token, { metrics: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.errorDescription).toBe('metrics: at least one point');
    const notArray = await post(s.token, { metrics: 'x' });
    expect(notArray.body.errorDescription).toBe('metrics: must be an array');
    expect((await t.request('GET', `/metric-source/${s.id}`, { token: dev })).body.status).toBe('pending');
  });

  it(`POST /metric/{token} answers 400 beyond ${POINTS_PER_REQUEST} points and accepts exactly that many`, async () => {
    const s = await source();
    const point = (i: number) => ({ name: 'n', value: i, tags: { i: String(i % 5) } });
    const over = await post(s.token, {
      metrics: Array.from({ length: POINTS_PER_REQUEST + 1 }, (_, i) => point(i)),
    });
    expect(over.status).toBe(400);
    expect(over.body.errorDescription).toBe(`metrics: at most ${POINTS_PER_REQUEST} points`);
    const full = await post(s.token, {
      metrics: Array.from({ length: POINTS_PER_REQUEST }, (_, i) => point(i)),
    });
    expect(full.body).toEqual({ accepted: POINTS_PER_REQUEST, rejected: [] });
    expect((await metrics(s.id)).map((m) => m.count24h)).toEqual([200, 200, 200, 200, 200]);
  });

  it(`POST /metric/{token} rejects points of new series beyond ${SERIES_PER_SOURCE} with too many series`, async () => {
    const s = await source();
    const batch = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: 'm', value: 1, tags: { k: String(from + i) } }));
    expect((await post(s.token, { metrics: batch(0, 1000) })).body).toEqual({ accepted: 1000, rejected: [] });
    const res = await post(s.token, { metrics: [...batch(5, 1), ...batch(1000, 2)] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accepted: 1,
      rejected: [
        { index: 1, error: 'metrics[1]: too many series' },
        { index: 2, error: 'metrics[2]: too many series' },
      ],
    });
    const none = await post(s.token, { metrics: batch(2000, 1) });
    expect(none.status).toBe(400);
    expect(none.body.errorDescription).toBe('metrics[0]: too many series');
    expect((await metrics(s.id)).length).toBe(SERIES_PER_SOURCE);
  });

  it('POST /metric/{token} answers 415 for a form body and 404 for an unknown token', async () => {
    const s = await source();
    const form = await t.request('POST', `/metric/${s.token}`, { form: { name: 'x', value: '1' } });
    expect(form.status).toBe(415);
    const unknown = await post(issueToken('M').token, { name: 'x', value: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorDescription).toBe('metric source not found');
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
  });

  it(`POST /metric/{token} answers 429 beyond ${INGESTS_PER_MINUTE} requests a minute per token`, async () => {
    const s = await source();
    t.clock.advance(60_000);
    for (let i = 0; i < INGESTS_PER_MINUTE; i += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, j) => post(s.token, { name: 'x', value: i + j })),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    }
    const res = await post(s.token, { name: 'x', value: 1 });
    expect(res.status).toBe(429);
    expect(res.body.errorDescription).toMatch(
      /^too many requests for this metric source; try again in \d+ s$/,
    );
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(60_000);
    expect((await post(s.token, { name: 'x', value: 1 })).status).toBe(200);
  });
});

describe('POST /metric/{token} Prometheus text', () => {
  const NODE = [
    '# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.',
    '# TYPE node_cpu_seconds_total counter',
    'node_cpu_seconds_total{cpu="0",mode="idle"} 123456.78',
    'node_cpu_seconds_total{cpu="0",mode="user"} 2345.5',
    '# HELP node_filesystem_avail_bytes Filesystem space available to non-root users in bytes.',
    '# TYPE node_filesystem_avail_bytes gauge',
    'node_filesystem_avail_bytes{device="/dev/sda1",fstype="ext4",mountpoint="/"} 4.2e+10',
    'node_label_info{path="C:\\\\Program Files",quote="say \\"hi\\"",nl="a\\nb"} 1',
    '# a comment',
    '',
    'node_load1 0.42 TS',
    'node_boot_time_seconds NaN',
    'node_temp +Inf',
    'broken{a="1" 3',
  ].join('\n');

  it('POST /metric/{token} reads a node_exporter snippet: HELP as description, labels with escapes, ms timestamps', async () => {
    const s = await source();
    const at = t.clock.now() - 30_000;
    const res = await postText(s.token, NODE.replace('TS', String(at)));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accepted: 5,
      rejected: [
        { index: 5, error: 'line 12: value: NaN and Inf are not accepted' },
        { index: 6, error: 'line 13: value: NaN and Inf are not accepted' },
        { index: 7, error: 'line 14: "," or "}" expected' },
      ],
    });
    const list = await metrics(s.id);
    const byName = (n: string) => list.filter((m) => m.name === n);
    expect(byName('node_cpu_seconds_total')).toEqual([
      expect.objectContaining({
        tags: { cpu: '0', mode: 'idle' },
        description: 'Seconds the CPUs spent in each mode.',
        lastValue: 123456.78,
      }),
      expect.objectContaining({ tags: { cpu: '0', mode: 'user' }, lastValue: 2345.5 }),
    ]);
    expect(byName('node_filesystem_avail_bytes')[0]).toMatchObject({
      tags: { device: '/dev/sda1', fstype: 'ext4', mountpoint: '/' },
      description: 'Filesystem space available to non-root users in bytes.',
      lastValue: 4.2e10,
    });
    expect(byName('node_label_info')[0]!.tags).toEqual({
      path: 'C:\\Program Files',
      quote: 'say "hi"',
      nl: 'a\nb',
    });
    expect(byName('node_load1')[0]).toMatchObject({ lastValue: 0.42, lastAt: iso(at), description: '' });
  });

  it('POST /metric/{token} with HELP fills an empty description but keeps one set by PATCH', async () => {
    const s = await source();
    await postText(s.token, 'up 1\n');
    const [m] = await metrics(s.id);
    expect(m!.description).toBe('');
    await postText(s.token, '# HELP up Whether the target is up.\nup 1\n');
    expect((await metrics(s.id))[0]!.description).toBe('Whether the target is up.');
    const patched = await t.request('PATCH', `/metric-source/${s.id}/metrics/${m!.id}`, {
      token: dev,
      json: { description: 'mine', unit: 'bool' },
    });
    expect(patched.body).toMatchObject({ description: 'mine', unit: 'bool' });
    await postText(s.token, '# HELP up Whether the target is up.\nup 1\n');
    expect((await metrics(s.id))[0]).toMatchObject({ description: 'mine', unit: 'bool', count24h: 3 });
  });

  it('POST /metric/{token} answers 400 for a text body without samples or with only bad ones', async () => {
    const s = await source();
    const empty = await postText(s.token, '# HELP x y\n# TYPE x gauge\n');
    expect(empty.status).toBe(400);
    expect(empty.body.errorDescription).toBe('metrics: no sample lines in the body');
    const bad = await postText(s.token, 'x{a=1} 2\n');
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('line 1: quoted value expected for label a');
    const old = await postText(s.token, `x 1 ${t.clock.now() - AT_MAX_AGE_MS - 1}\n`);
    expect(old.body.errorDescription).toBe('line 1: timestamp: older than 90 days');
  });
});

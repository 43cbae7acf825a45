import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_INTERVAL_MS } from '../../server/jobs/index';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function source(token = dev) {
  const c = await makeChannel(t, token);
  const res = await t.request('POST', '/metric-source', { token, json: { name: 'db', appid: c.id } });
  return res.body as { id: number; token: string; appid: number };
}

async function ingest(token: string, metrics: Record<string, unknown>[]) {
  const res = await t.request('POST', `/metric/${token}`, { json: { metrics } });
  expect(res.status).toBe(200);
  return res.body;
}

async function seriesId(sourceId: number) {
  const res = await t.request('GET', `/metric-source/${sourceId}/metrics`, { token: dev });
  return res.body[0].id as number;
}

function series(sourceId: number, mid: number, query = '', token = dev) {
  return t.request('GET', `/metric-source/${sourceId}/metrics/${mid}/series${query}`, { token });
}

/** A minute start well inside the hour, so the cases below stay in known buckets. */
function minuteStart(): number {
  const now = t.clock.now();
  return now - (now % HOUR) + 10 * MIN;
}

describe('series', () => {
  it('GET …/series?bucket=1m gives min, max, avg, last and count per UTC minute across a boundary', async () => {
    const s = await source();
    const m0 = minuteStart();
    t.clock.set(m0 + 5 * MIN);
    await ingest(s.token, [
      { name: 'lat', value: 10, at: (m0 + 50_000) / 1000 },
      { name: 'lat', value: 30, at: (m0 + 10_000) / 1000 },
      { name: 'lat', value: 20, at: (m0 + 59_999) / 1000 },
      { name: 'lat', value: 5, at: (m0 + MIN) / 1000 },
    ]);
    // A second request folds into the same bucket (upsert), and an older point does not become `last`.
    await ingest(s.token, [{ name: 'lat', value: 100, at: (m0 + 1000) / 1000 }]);
    const mid = await seriesId(s.id);
    const res = await series(s.id, mid, `?bucket=1m&from=${iso(m0 - MIN)}&to=${iso(m0 + 3 * MIN)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      metric: { id: mid, name: 'lat', tags: {} },
      bucket: '1m',
      from: iso(m0 - MIN),
      to: iso(m0 + 3 * MIN),
      points: [
        { at: iso(m0), min: 10, max: 100, avg: 40, last: 20, count: 4 },
        { at: iso(m0 + MIN), min: 5, max: 5, avg: 5, last: 5, count: 1 },
      ],
    });
    const hour = await series(s.id, mid, `?bucket=1h&from=${(m0 - HOUR) / 1000}&to=${(m0 + HOUR) / 1000}`);
    expect(hour.body.points).toEqual([
      { at: iso(m0 - 10 * MIN), min: 5, max: 100, avg: 33, last: 5, count: 5 },
    ]);
    const day = await series(s.id, mid, '?bucket=1d');
    expect(day.body.points).toEqual([
      { at: iso(m0 - (m0 % DAY)), min: 5, max: 100, avg: 33, last: 5, count: 5 },
    ]);
  });

  it('GET …/series sends JSON whose Content-Length counts the bytes of non-ASCII tags', async () => {
    const s = await source();
    t.clock.set(minuteStart());
    await ingest(s.token, [
      { name: 'temp_c', value: 0.1 + 0.2, tags: { ville: 'Zürich 東京' } },
      { name: 'temp_c', value: -1e21, tags: { ville: 'Zürich 東京' } },
    ]);
    const res = await series(s.id, await seriesId(s.id), '?bucket=1m');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
    expect(res.body).toMatchObject({
      metric: { name: 'temp_c', tags: { ville: 'Zürich 東京' } },
      bucket: '1m',
      points: [{ min: -1e21, max: 0.1 + 0.2, last: -1e21, count: 2 }],
    });
  });

  it('GET …/series defaults to 1h buckets over the last 100 and omits empty ones', async () => {
    const s = await source();
    const now = t.clock.now();
    await ingest(s.token, [
      { name: 'q', value: 1, at: (now - 150 * HOUR) / 1000 },
      { name: 'q', value: 2, at: (now - 99 * HOUR) / 1000 },
      { name: 'q', value: 3 },
    ]);
    const mid = await seriesId(s.id);
    const res = await series(s.id, mid);
    const last = now - (now % HOUR);
    expect(res.body.bucket).toBe('1h');
    expect(res.body.from).toBe(iso(last - 99 * HOUR));
    expect(res.body.to).toBe(iso(now));
    expect(res.body.points.map((p: { at: string; last: number }) => [p.at, p.last])).toEqual([
      [iso(last - 99 * HOUR), 2],
      [iso(last), 3],
    ]);
  });

  it('GET …/series answers 400 beyond 1440 buckets, for a bad bucket and for from after to', async () => {
    const s = await source();
    await ingest(s.token, [{ name: 'q', value: 1 }]);
    const mid = await seriesId(s.id);
    const now = t.clock.now();
    const aligned = now - (now % MIN);
    const ok = await series(s.id, mid, `?bucket=1m&from=${iso(aligned - 1439 * MIN)}&to=${iso(now)}`);
    expect(ok.status).toBe(200);
    const over = await series(s.id, mid, `?bucket=1m&from=${iso(aligned - 1440 * MIN)}&to=${iso(now)}`);
    expect(over.status).toBe(400);
    expect(over.body.errorDescription).toBe('from: at most 1440 buckets');
    const bad = await series(s.id, mid, '?bucket=5m');
    expect(bad.body.errorDescription).toBe('bucket: must be 1m, 1h or 1d');
    const reversed = await series(s.id, mid, `?from=${iso(now)}&to=${iso(now - HOUR)}`);
    expect(reversed.body.errorDescription).toBe('from: must not be after to');
    const garbage = await series(s.id, mid, '?to=soon');
    expect(garbage.body.errorDescription).toBe('to: must be an RFC 3339 time or unix seconds');
  });

  it('GET …/series answers 404 for someone else, and for a metric of another source', async () => {
    const s = await source();
    await ingest(s.token, [{ name: 'q', value: 1 }]);
    const mid = await seriesId(s.id);
    const theirs = await series(s.id, mid, '', otherDev);
    expect(theirs.status).toBe(404);
    expect(theirs.body.errorDescription).toBe('metric source not found');
    const other = await source();
    const wrong = await series(other.id, mid);
    expect(wrong.status).toBe(404);
    expect(wrong.body.errorDescription).toBe('metric not found');
  });

  it('DELETE …/metrics/{mid} removes the series with its data; a new point starts a new series', async () => {
    const s = await source();
    await ingest(s.token, [{ name: 'q', value: 1 }]);
    const mid = await seriesId(s.id);
    const res = await t.request('DELETE', `/metric-source/${s.id}/metrics/${mid}`, { token: dev });
    expect(res.body).toEqual({});
    expect((await series(s.id, mid)).status).toBe(404);
    const db = t.server.ctx.db;
    expect(
      db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_rollups WHERE series_id = ?', [mid])!.n,
    ).toBe(0);
    expect(
      db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_points WHERE series_id = ?', [mid])!.n,
    ).toBe(0);
    await ingest(s.token, [{ name: 'q', value: 7 }]);
    const list = (await t.request('GET', `/metric-source/${s.id}/metrics`, { token: dev })).body;
    expect(list).toEqual([expect.objectContaining({ name: 'q', lastValue: 7, count24h: 1 })]);
    expect(list[0].id).not.toBe(mid);
  });

  it('PATCH …/metrics/{mid} answers 400 for a unit over 20 characters', async () => {
    const s = await source();
    await ingest(s.token, [{ name: 'q', value: 1 }]);
    const mid = await seriesId(s.id);
    const res = await t.request('PATCH', `/metric-source/${s.id}/metrics/${mid}`, {
      token: dev,
      json: { unit: 'x'.repeat(21) },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toMatch(/^unit: /);
  });
});

describe('retention', () => {
  it('the retention job prunes raw points after 24 h, 1m after 7 days, 1h after 90 days; count24h follows', async () => {
    const s = await source();
    const start = t.clock.now();
    await ingest(s.token, [
      { name: 'r', value: 1, at: (start - 2 * MIN) / 1000 },
      { name: 'r', value: 3 },
    ]);
    const mid = await seriesId(s.id);
    const db = t.server.ctx.db;
    const count = (sql: string) => db.first<{ n: number }>(sql, [mid])!.n;
    const raw = () => count('SELECT COUNT(*) AS n FROM metric_points WHERE series_id = ?');
    const rollups = (res: number) =>
      db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_rollups WHERE series_id = ? AND res = ?', [
        mid,
        res,
      ])!.n;
    expect([raw(), rollups(MIN), rollups(HOUR), rollups(DAY)]).toEqual([2, 2, expect.any(Number), 1]);
    const advance = async (ms: number) => {
      t.clock.advance(ms);
      await t.server.scheduler.tick();
    };
    await advance(DAY + RETENTION_INTERVAL_MS);
    expect(raw()).toBe(0);
    expect(rollups(MIN)).toBe(2);
    let list = (await t.request('GET', `/metric-source/${s.id}/metrics`, { token: dev })).body;
    expect(list[0]).toMatchObject({ lastValue: 3, lastAt: iso(start), count24h: 0 });
    // The 1m buckets still answer a query after the raw points are gone.
    const q = await series(s.id, mid, `?bucket=1m&from=${iso(start - 5 * MIN)}&to=${iso(start)}`);
    expect(q.body.points.map((p: { count: number; last: number }) => [p.count, p.last])).toEqual([
      [1, 1],
      [1, 3],
    ]);
    await advance(7 * DAY);
    expect(rollups(MIN)).toBe(0);
    expect(rollups(HOUR)).toBeGreaterThan(0);
    await advance(90 * DAY);
    expect(rollups(HOUR)).toBe(0);
    expect(rollups(DAY)).toBe(1);
    const day = await series(s.id, mid, `?bucket=1d&from=${iso(start - DAY)}&to=${iso(start + DAY)}`);
    expect(day.body.points).toEqual([
      { at: iso(start - (start % DAY)), min: 1, max: 3, avg: 2, last: 3, count: 2 },
    ]);
    list = (await t.request('GET', `/metric-source/${s.id}/metrics`, { token: dev })).body;
    expect(list[0]).toMatchObject({ lastValue: 3, count24h: 0 });
    await advance(640 * DAY);
    expect(rollups(DAY)).toBe(0);
  });

  it('POST /metric/{token} stores an old point only in the rollups still kept for its age', async () => {
    const s = await source();
    const now = t.clock.now();
    await ingest(s.token, [{ name: 'old', value: 4, at: (now - 10 * DAY) / 1000 }]);
    const mid = await seriesId(s.id);
    const db = t.server.ctx.db;
    const rows = db.all<{ res: number }>('SELECT res FROM metric_rollups WHERE series_id = ? ORDER BY res', [
      mid,
    ]);
    expect(rows.map((r) => r.res)).toEqual([HOUR, DAY]);
    expect(
      db.first<{ n: number }>('SELECT COUNT(*) AS n FROM metric_points WHERE series_id = ?', [mid])!.n,
    ).toBe(0);
  });
});

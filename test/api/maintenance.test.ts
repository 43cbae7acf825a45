import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t, { plan: 'business' }))).token;
});
afterAll(async () => {
  await t.close();
});

/** Moves the ManualClock and lets the one timer apply what became due. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

async function advanceTo(ms: number) {
  await advance(ms - t.clock.now());
}

function once(fromNow: number, length: number) {
  const now = t.clock.now();
  return { type: 'once', startsAt: iso(now + fromNow), endsAt: iso(now + fromNow + length) };
}

async function createWindow(body: Record<string, unknown>, token = dev) {
  const res = await t.request('POST', '/maintenance-window', { token, json: { name: 'deploy', ...body } });
  if (res.status !== 200) throw new Error(`create window: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number };
}

async function del(id: number) {
  await t.request('DELETE', `/maintenance-window/${id}`, { token: dev });
}

describe('maintenance window records', () => {
  it('POST /maintenance-window creates a once window with defaults and its derived fields', async () => {
    const c = await makeChannel(t, dev);
    const now = t.clock.now();
    const res = await t.request('POST', '/maintenance-window', {
      token: dev,
      json: { name: '  DB upgrade ', channelIds: [c.id], schedule: once(HOUR, 2 * HOUR) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'DB upgrade',
      channelIds: [c.id],
      includeSubtree: false,
      monitors: [],
      schedule: { type: 'once', startsAt: iso(now + HOUR), endsAt: iso(now + 3 * HOUR) },
      enabled: true,
      active: false,
      nextStart: iso(now + HOUR),
      nextEnd: iso(now + 3 * HOUR),
      coveredChannelIds: [c.id],
      createdAt: iso(now),
    });
    const got = await t.request('GET', `/maintenance-window/${res.body.id}`, { token: dev });
    expect(got.body).toEqual(res.body);
    const list = await t.request('GET', '/maintenance-window', { token: dev });
    expect(list.body).toContainEqual(res.body);
    await del(res.body.id);
  });

  it('PUT /maintenance-window/{id} replaces the record: absent fields take their defaults', async () => {
    const a = await makeChannel(t, dev);
    const b = await makeChannel(t, dev, { parentId: a.id });
    const w = await createWindow({
      channelIds: [a.id],
      includeSubtree: true,
      enabled: false,
      schedule: { type: 'weekly', timezone: 'Europe/Berlin', days: [3, 1], start: '22:00', end: '02:00' },
    });
    expect(w.coveredChannelIds).toEqual([a.id, b.id].sort((x, y) => x - y));
    expect(w.schedule).toEqual({
      type: 'weekly',
      timezone: 'Europe/Berlin',
      days: [1, 3],
      start: '22:00',
      end: '02:00',
    });
    expect([w.active, w.nextStart, w.nextEnd]).toEqual([false, null, null]);
    const res = await t.request('PUT', `/maintenance-window/${w.id}`, {
      token: dev,
      json: { name: 'other', channelIds: [b.id], schedule: once(HOUR, HOUR) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: w.id,
      name: 'other',
      channelIds: [b.id],
      includeSubtree: false,
      enabled: true,
      coveredChannelIds: [b.id],
      createdAt: w.createdAt,
    });
    const gone = await t.request('DELETE', `/maintenance-window/${w.id}`, { token: dev });
    expect([gone.status, gone.text]).toEqual([204, '']);
    expect((await t.request('GET', `/maintenance-window/${w.id}`, { token: dev })).status).toBe(404);
  });

  it('POST /maintenance-window answers 400 with the field for every invalid body', async () => {
    const c = await makeChannel(t, dev);
    const foreign = await makeChannel(t, otherDev);
    const hb = await t.request('POST', '/heartbeat', {
      token: otherDev,
      json: { appid: foreign.id, name: 'x' },
    });
    const weekly = { type: 'weekly', days: [1], start: '01:00', end: '02:00' };
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '', channelIds: [c.id], schedule: weekly }, 'name: required'],
      [{ channelIds: [c.id] }, 'schedule: '],
      [
        { channelIds: [], schedule: weekly },
        'channelIds: a window must cover at least one channel or monitor',
      ],
      [{ channelIds: [foreign.id], schedule: weekly }, `channelIds: no such channel ${foreign.id}`],
      [{ channelIds: [999_999], schedule: weekly }, 'channelIds: no such channel 999999'],
      [
        { monitors: [{ kind: 'heartbeat', id: hb.body.id }], schedule: weekly },
        'monitors[0]: no such monitor',
      ],
      [{ monitors: [{ kind: 'nope', id: 1 }], schedule: weekly }, 'monitors[0]: no such monitor'],
      [{ monitors: [{ kind: 'heartbeat' }], schedule: weekly }, 'monitors[0].id: '],
      [{ channelIds: [c.id], schedule: once(2 * HOUR, -HOUR) }, 'schedule.endsAt: must be after startsAt'],
      [{ channelIds: [c.id], schedule: once(-3 * HOUR, HOUR) }, 'schedule.endsAt: must be in the future'],
      [{ channelIds: [c.id], schedule: once(0, 367 * DAY) }, 'schedule.endsAt: at most 366 days'],
      [
        { channelIds: [c.id], schedule: { type: 'once', startsAt: 'soon', endsAt: 'later' } },
        'schedule.startsAt: ',
      ],
      [
        { channelIds: [c.id], schedule: { ...weekly, timezone: 'Mars/Olympus' } },
        'schedule.timezone: unknown time zone',
      ],
      [{ channelIds: [c.id], schedule: { ...weekly, days: [] } }, 'schedule.days: at least one day'],
      [{ channelIds: [c.id], schedule: { ...weekly, days: [1, 1] } }, 'schedule.days: days must be distinct'],
      [
        { channelIds: [c.id], schedule: { ...weekly, days: [8] } },
        'schedule.days[0]: days are 1 (Monday) to 7',
      ],
      [{ channelIds: [c.id], schedule: { ...weekly, start: '24:00' } }, 'schedule.start: expected HH:MM'],
      [{ channelIds: [c.id], schedule: { ...weekly, end: '7:5' } }, 'schedule.end: expected HH:MM'],
      [{ channelIds: [c.id], schedule: { type: 'monthly' } }, 'schedule.type: '],
      [{ channelIds: ['x'], schedule: weekly }, 'channelIds[0]: '],
    ];
    for (const [body, text] of cases) {
      const res = await t.request('POST', '/maintenance-window', {
        token: dev,
        json: { name: 'w', ...body },
      });
      expect([res.status, res.body.error, res.body.errorCode], JSON.stringify(body)).toEqual([
        400,
        'Bad Request',
        400,
      ]);
      expect(res.body.errorDescription, JSON.stringify(body)).toContain(text);
    }
  });

  it("GET, PUT and DELETE /maintenance-window/{id} answer 404 for someone else's window", async () => {
    const theirs = await makeChannel(t, otherDev);
    const w = await createWindow({ channelIds: [theirs.id], schedule: once(HOUR, HOUR) }, otherDev);
    const mine = await makeChannel(t, dev);
    for (const [method, json] of [
      ['GET', undefined],
      ['PUT', { name: 'x', channelIds: [mine.id], schedule: once(HOUR, HOUR) }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request(method, `/maintenance-window/${w.id}`, { token: dev, json });
      expect([res.status, res.body.errorDescription]).toEqual([404, 'maintenance window not found']);
    }
    expect((await t.request('GET', '/maintenance-window', { token: dev })).body).not.toContainEqual(
      expect.objectContaining({ id: w.id }),
    );
    expect((await t.request('GET', `/maintenance-window/${w.id}`, { token: otherDev })).status).toBe(200);
  });

  it('POST /maintenance-window answers 403 beyond the plan limit, counting disabled windows', async () => {
    const user = makeUser(t, { plan: 'free' });
    const tok = (await deviceToken(t, user)).token;
    const c = await makeChannel(t, tok);
    await createWindow({ channelIds: [c.id], enabled: false, schedule: once(HOUR, HOUR) }, tok);
    const res = await t.request('POST', '/maintenance-window', {
      token: tok,
      json: { name: 'second', channelIds: [c.id], schedule: once(HOUR, HOUR) },
    });
    expect([res.status, res.body.errorDescription]).toEqual([
      403,
      'plan limit reached: at most 1 maintenance windows on the free plan',
    ]);
  });

  it('POST /maintenance-window answers 403 for a read-only or too narrowly scoped API token, 403 for a channel key', async () => {
    const a = await makeChannel(t, dev);
    const b = await makeChannel(t, dev);
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    const scoped = await apiToken(t, { token: dev }, { appIds: [a.id] });
    const body = { name: 'w', channelIds: [a.id, b.id], schedule: once(HOUR, HOUR) };
    const r1 = await t.request('POST', '/maintenance-window', { token: read.token, json: body });
    expect(r1.status).toBe(403);
    const r2 = await t.request('POST', '/maintenance-window', { token: scoped.token, json: body });
    expect([r2.status, r2.body.errorDescription]).toEqual([
      403,
      `token scope does not cover channel ${b.id}`,
    ]);
    const r3 = await t.request('POST', '/maintenance-window', {
      token: scoped.token,
      json: { ...body, channelIds: [a.id] },
    });
    expect(r3.status).toBe(200);
    const r4 = await t.request('GET', '/maintenance-window', { token: read.token });
    expect(r4.body).toContainEqual(expect.objectContaining({ id: r3.body.id }));
    const key = await t.request('GET', '/maintenance-window', { token: a.token });
    expect(key.status).toBe(403);
    // A window naming a channel outside the scope is invisible to the scoped token (404, not listed).
    const wide = await createWindow({ channelIds: [b.id], schedule: once(HOUR, HOUR) });
    expect((await t.request('GET', `/maintenance-window/${wide.id}`, { token: scoped.token })).status).toBe(
      404,
    );
    await del(r3.body.id);
    await del(wide.id);
  });
});

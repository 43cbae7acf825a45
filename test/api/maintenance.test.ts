import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isChannelCovered,
  isCovered,
  maintenanceNextDue,
  windowsCovering,
} from '../../server/features/maintenance/coverage';
import { ManualClock } from '../../server/lib/clock';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { type FakeKind, fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let fake: FakeKind;
let dev: string;
let otherDev: string;

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  fake = fakeMonitorKind('fake-monitor');
  t = await startTestServer({ extraFeatures: [fake.feature] });
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
    const hb = await t.request('POST', '/heartbeat', { token: dev, json: { appid: b.id, name: 'outside' } });
    const bySource = await createWindow({
      monitors: [{ kind: 'heartbeat', id: hb.body.id }],
      schedule: once(HOUR, HOUR),
    });
    const hidden = await t.request('GET', `/maintenance-window/${bySource.id}`, { token: scoped.token });
    expect(hidden.status).toBe(404);
    const viaSource = await t.request('POST', '/maintenance-window', {
      token: scoped.token,
      json: { name: 'w', monitors: [{ kind: 'heartbeat', id: hb.body.id }], schedule: once(HOUR, HOUR) },
    });
    expect([viaSource.status, viaSource.body.errorDescription]).toEqual([
      403,
      `token scope does not cover channel ${b.id}`,
    ]);
    await del(bySource.id);
  });
});

function messagesOf(appid: number) {
  return t.server.ctx.db
    .all<{ title: string; message: string; date: number; extras: string | null }>(
      'SELECT title, message, date, extras FROM messages WHERE channel_id = ? ORDER BY id',
      [appid],
    )
    .map((m) => ({ ...m, extras: m.extras === null ? null : JSON.parse(m.extras) }));
}

let targets = 0;
function target(ok = true, error?: string) {
  const name = `t${++targets}`;
  fake.set(name, { ok, ...(error ? { error } : {}) });
  return name;
}

async function monitor(appid: number, name: string, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/fake-monitor', {
    token: dev,
    json: { appid, name: 'api', target: name, intervalSec: 60, ...extra },
  });
  if (res.status !== 200) throw new Error(`monitor: ${res.status} ${res.text}`);
  await t.server.scheduler.tick();
  return res.body as Record<string, any> & { id: number };
}

async function heartbeat(appid: number, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/heartbeat', {
    token: dev,
    json: { appid, name: 'backup', intervalSec: 3600, graceSec: 60, ...body },
  });
  if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number; token: string };
}

const get = async (path: string) => (await t.request('GET', path, { token: dev })).body;

describe('while a window is active', () => {
  it('a monitor and a heartbeat take status maintenance, keep checking and pinging, send nothing, and come back at the end', async () => {
    const c = await makeChannel(t, dev);
    const name = target(true);
    const m = await monitor(c.id, name);
    const h = await heartbeat(c.id);
    await t.request('POST', `/heartbeat/ping/${h.token}`);
    const t0 = t.clock.now();
    const w = await createWindow({ channelIds: [c.id], schedule: once(10 * MIN, HOUR) });
    const events: unknown[] = [];
    const off = t.server.ctx.bus.on('maintenance:changed', (e) => events.push(e));
    const start = t0 + 10 * MIN;
    const end = start + HOUR;
    expect((await get(`/fake-monitor/${m.id}`)).status).toBe('up');

    await advanceTo(start);
    expect(await get(`/maintenance-window/${w.id}`)).toMatchObject({
      active: true,
      nextStart: iso(start),
      nextEnd: iso(end),
    });
    expect(await get(`/fake-monitor/${m.id}`)).toMatchObject({
      status: 'maintenance',
      statusSince: iso(start),
    });
    expect(await get(`/heartbeat/${h.id}`)).toMatchObject({ status: 'maintenance', statusSince: iso(start) });
    const app = (await get('/application')).find((a: { id: number }) => a.id === c.id);
    expect(app).toMatchObject({ hbTotal: 1, hbAlerting: 0, hbStatus: 'ok' });

    // The target fails for the whole window: checks run and are logged, the monitor stays in maintenance.
    fake.set(name, { ok: false, error: 'boom' });
    for (let i = 0; i < 3; i++) await advance(MIN);
    expect(await get(`/fake-monitor/${m.id}`)).toMatchObject({ status: 'maintenance', lastError: 'boom' });
    const log = await get(`/monitor-history/fake-monitor/${m.id}/log`);
    expect(log.checks.slice(0, 3).map((x: { ok: boolean; status: string }) => [x.ok, x.status])).toEqual([
      [false, 'maintenance'],
      [false, 'maintenance'],
      [false, 'maintenance'],
    ]);
    // The heartbeat's deadline (t0 + 61 min) passes inside the window: no alert.
    await advanceTo(end - MIN);
    expect((await get(`/heartbeat/${h.id}`)).status).toBe('maintenance');
    // One created during the window is covered at once, pinged, and never alerts in it.
    const late = await heartbeat(c.id, { intervalSec: 60, graceSec: 0 });
    expect(late.status).toBe('maintenance');
    const pingRes = await t.request('POST', `/heartbeat/ping/${h.token}/log`);
    expect(pingRes.body).toEqual({ ok: true, status: 'maintenance' });
    expect(messagesOf(c.id)).toEqual([]);

    fake.set(name, { ok: true });
    await advanceTo(end);
    expect(await get(`/maintenance-window/${w.id}`)).toMatchObject({ active: false, nextStart: null });
    expect(await get(`/fake-monitor/${m.id}`)).toMatchObject({ status: 'up', statusSince: iso(end) });
    // A deadline that passed in the window moves to end + period + grace.
    expect(await get(`/heartbeat/${h.id}`)).toMatchObject({
      status: 'up',
      expectedAt: iso(end + HOUR),
      deadlineAt: iso(end + HOUR + MIN),
    });
    expect((await get(`/heartbeat/${late.id}`)).status).toBe('new');
    off();
    // (Windows of earlier tests start and end meanwhile too.)
    expect(events.filter((e) => JSON.stringify(e).includes(`[${c.id}]`))).toEqual([
      { channelIds: [c.id], sources: [], active: true },
      { channelIds: [c.id], sources: [], active: false },
    ]);
    expect(messagesOf(c.id)).toEqual([]);
    // The window's time is not counted as down although every check in it failed.
    const history = await get(`/monitor-history/fake-monitor/${m.id}`);
    expect(history.uptime['24h']).toBe(100);
    expect(history.days.at(-1)).toMatchObject({ status: 'up', downSec: 0 });
  });

  it('uptime leaves the window out; a monitor alerted down before it recovers after it', async () => {
    const c = await makeChannel(t, dev);
    const name = target(false, 'refused');
    const m = await monitor(c.id, name);
    expect(messagesOf(c.id).map((x) => x.title)).toEqual(['api is down']);
    const t0 = t.clock.now();
    await createWindow({ channelIds: [c.id], schedule: once(10 * MIN, HOUR) });
    await advanceTo(t0 + 10 * MIN);
    expect((await get(`/fake-monitor/${m.id}`)).status).toBe('maintenance');
    fake.set(name, { ok: true });
    await advance(30 * MIN);
    expect(messagesOf(c.id)).toHaveLength(1);
    await advanceTo(t0 + 70 * MIN);
    expect((await get(`/fake-monitor/${m.id}`)).status).toBe('up');
    expect(messagesOf(c.id).map((x) => [x.title, x.extras['service::silent']])).toEqual([
      ['api is down', undefined],
      ['api is up again', undefined],
    ]);
    await advance(10 * MIN);
    // 10 min up, 10 min down; the hour of maintenance counts as neither.
    expect((await get(`/monitor-history/fake-monitor/${m.id}`)).uptime['24h']).toBe(50);
  });

  it('a monitor still down at the end gets its down message then; a heartbeat failed in the window its fail message', async () => {
    const c = await makeChannel(t, dev);
    const name = target(true);
    const m = await monitor(c.id, name);
    const h = await heartbeat(c.id);
    await t.request('POST', `/heartbeat/ping/${h.token}`);
    const t0 = t.clock.now();
    await createWindow({ channelIds: [c.id], schedule: once(5 * MIN, 30 * MIN) });
    await advanceTo(t0 + 5 * MIN);
    fake.set(name, { ok: false, error: 'refused' });
    const failed = await t.request('POST', `/heartbeat/ping/${h.token}/fail`, {
      json: { fail_reason: 'disk full' },
    });
    expect(failed.body).toEqual({ ok: true, status: 'maintenance' });
    await advance(10 * MIN);
    expect(messagesOf(c.id)).toEqual([]);
    const end = t0 + 35 * MIN;
    await advanceTo(end);
    expect(await get(`/fake-monitor/${m.id}`)).toMatchObject({ status: 'down', statusSince: iso(end) });
    expect(await get(`/heartbeat/${h.id}`)).toMatchObject({ status: 'down', lastFailReason: 'disk full' });
    expect(
      messagesOf(c.id)
        .map((x) => [x.title, x.message, x.date])
        .sort(),
    ).toEqual(
      [
        ['api is down', 'fake://' + name + ': refused', end],
        ['backup failed', 'disk full', end],
      ].sort(),
    );
  });

  it("messages into a covered channel (and its subtree) carry service::silent, keeping the sender's extras; others do not", async () => {
    const parent = await makeChannel(t, dev);
    const child = await makeChannel(t, dev, { parentId: parent.id });
    const outside = await makeChannel(t, dev);
    const t0 = t.clock.now();
    await createWindow({ channelIds: [parent.id], includeSubtree: true, schedule: once(MIN, 10 * MIN) });
    const send = (token: string, extras?: Record<string, unknown>) =>
      t.request('POST', '/message', { token, json: { message: 'hi', ...(extras ? { extras } : {}) } });
    expect(
      (await send(child.token, { 'client::display': { contentType: 'text/plain' } })).body.extras,
    ).toEqual({
      'client::display': { contentType: 'text/plain' },
    });
    await advanceTo(t0 + MIN);
    const inWindow = await send(child.token, { 'client::display': { contentType: 'text/plain' } });
    expect(inWindow.status).toBe(200);
    expect(inWindow.body.extras).toEqual({
      'client::display': { contentType: 'text/plain' },
      'service::silent': true,
    });
    expect((await send(parent.token)).body.extras).toEqual({ 'service::silent': true });
    expect((await send(outside.token)).body.extras).toBeUndefined();
    const stored = await t.request('GET', `/application/${child.id}/message`, { token: dev });
    expect(stored.body.messages[0].extras).toEqual(inWindow.body.extras);
    await advanceTo(t0 + 11 * MIN);
    expect((await send(parent.token)).body.extras).toBeUndefined();
  });
});

describe('coverage', () => {
  it('a source listed in monitors is covered without its channel; windowsCovering finds windows by channel, subtree or source within the horizon', async () => {
    const c = await makeChannel(t, dev);
    const child = await makeChannel(t, dev, { parentId: c.id });
    const listed = await heartbeat(c.id);
    const other = await heartbeat(c.id);
    const name = target(true);
    const m = await monitor(child.id, name);
    const t0 = t.clock.now();
    const bySource = await createWindow({
      monitors: [{ kind: 'heartbeat', id: listed.id }],
      schedule: once(MIN, HOUR),
    });
    const bySubtree = await createWindow({
      channelIds: [c.id],
      includeSubtree: true,
      schedule: once(3 * DAY, HOUR),
    });
    const later = await createWindow({ channelIds: [child.id], schedule: once(10 * DAY, HOUR) });
    await advanceTo(t0 + MIN);
    expect((await get(`/heartbeat/${listed.id}`)).status).toBe('maintenance');
    expect((await get(`/heartbeat/${other.id}`)).status).toBe('new');
    const ctx = t.server.ctx;
    const week = 7 * DAY;
    expect(
      windowsCovering(ctx, { channelIds: [], sources: [{ kind: 'heartbeat', id: listed.id }] }, week),
    ).toEqual([
      { id: bySource.id, name: 'deploy', startsAt: t0 + MIN, endsAt: t0 + MIN + HOUR, active: true },
    ]);
    expect(
      windowsCovering(ctx, { channelIds: [child.id], sources: [{ kind: 'fake-monitor', id: m.id }] }, week),
    ).toEqual([
      {
        id: bySubtree.id,
        name: 'deploy',
        startsAt: t0 + 3 * DAY,
        endsAt: t0 + 3 * DAY + HOUR,
        active: false,
      },
    ]);
    expect(windowsCovering(ctx, { channelIds: [child.id], sources: [] }, 11 * DAY).map((w) => w.id)).toEqual([
      bySubtree.id,
      later.id,
    ]);
    expect(windowsCovering(ctx, { channelIds: [999_999], sources: [] }, 11 * DAY)).toEqual([]);
    expect(isCovered(ctx, { kind: 'heartbeat', id: listed.id, appid: c.id })).toBe(true);
    expect(isCovered(ctx, { kind: 'heartbeat', id: other.id, appid: c.id })).toBe(false);
    expect(isChannelCovered(ctx, c.id)).toBe(false);
    for (const w of [bySource, bySubtree, later]) await del(w.id);
    await t.server.scheduler.tick();
    expect((await get(`/heartbeat/${listed.id}`)).status).toBe('new');
  });
});

describe('weekly windows in a time zone (own server, clock in March 2026)', () => {
  let s: TestServer;
  let tok: string;
  beforeAll(async () => {
    s = await startTestServer({ clock: new ManualClock(Date.parse('2026-03-26T12:00:00Z')) });
    tok = (await deviceToken(s)).token;
  });
  afterAll(async () => {
    await s.close();
  });
  const at = (x: string) => Date.parse(x);
  async function moveTo(ms: number) {
    s.clock.set(ms);
    await s.server.scheduler.tick();
  }
  const read = async (id: number) =>
    (await s.request('GET', `/maintenance-window/${id}`, { token: tok })).body;

  it('GET /maintenance-window/{id} moves active, nextStart and nextEnd with the clock across both Berlin DST changes', async () => {
    const c = await makeChannel(s, tok);
    const hb = await s.request('POST', '/heartbeat', {
      token: tok,
      json: { appid: c.id, name: 'h', intervalSec: 2_592_000 },
    });
    await s.request('POST', `/heartbeat/ping/${hb.body.token}`);
    // Sundays 02:30-04:00 Berlin: on 2026-03-29 02:30 does not exist (clocks jump 02:00 → 03:00).
    const res = await s.request('POST', '/maintenance-window', {
      token: tok,
      json: {
        name: 'sunday',
        channelIds: [c.id],
        schedule: { type: 'weekly', timezone: 'Europe/Berlin', days: [7], start: '02:30', end: '04:00' },
      },
    });
    expect(res.status).toBe(200);
    const id = res.body.id;
    expect(res.body).toMatchObject({
      active: false,
      nextStart: '2026-03-29T01:00:00.000Z',
      nextEnd: '2026-03-29T02:00:00.000Z',
    });
    // The DueSource is due exactly at the start (the one timer wakes then): no polling.
    expect(maintenanceNextDue(s.server.ctx)).toBe(at('2026-03-29T01:00:00Z'));
    await moveTo(at('2026-03-29T00:59:59Z'));
    expect((await read(id)).active).toBe(false);
    await moveTo(at('2026-03-29T01:00:00Z'));
    expect(await read(id)).toMatchObject({
      active: true,
      nextStart: '2026-03-29T01:00:00.000Z',
      nextEnd: '2026-03-29T02:00:00.000Z',
    });
    expect((await s.request('GET', `/heartbeat/${hb.body.id}`, { token: tok })).body.status).toBe(
      'maintenance',
    );
    expect(maintenanceNextDue(s.server.ctx)).toBe(at('2026-03-29T02:00:00Z'));
    await moveTo(at('2026-03-29T02:00:00Z'));
    expect(await read(id)).toMatchObject({
      active: false,
      nextStart: '2026-04-05T00:30:00.000Z',
      nextEnd: '2026-04-05T02:00:00.000Z',
    });
    expect((await s.request('GET', `/heartbeat/${hb.body.id}`, { token: tok })).body.status).toBe('up');
    // Autumn: 02:30 happens twice on 2026-10-25; the first (CEST) one starts it, 04:00 CET ends it.
    await moveTo(at('2026-10-24T12:00:00Z'));
    expect(await read(id)).toMatchObject({
      active: false,
      nextStart: '2026-10-25T00:30:00.000Z',
      nextEnd: '2026-10-25T03:00:00.000Z',
    });
    await moveTo(at('2026-10-25T02:45:00Z'));
    expect((await read(id)).active).toBe(true);
    await s.request('DELETE', `/maintenance-window/${id}`, { token: tok });
  });

  it('a weekly window spanning midnight covers the next morning; end = start lasts 24 h', async () => {
    const c = await makeChannel(s, tok);
    const base = s.clock.now(); // 2026-10-25 (Sunday) 02:45Z
    expect(new Date(base).toISOString()).toBe('2026-10-25T02:45:00.000Z');
    const night = await s.request('POST', '/maintenance-window', {
      token: tok,
      json: {
        name: 'nightly',
        channelIds: [c.id],
        schedule: { type: 'weekly', timezone: 'UTC', days: [1], start: '23:00', end: '01:30' },
      },
    });
    expect(night.body).toMatchObject({
      nextStart: '2026-10-26T23:00:00.000Z',
      nextEnd: '2026-10-27T01:30:00.000Z',
    });
    await moveTo(at('2026-10-27T00:30:00Z'));
    expect(await read(night.body.id)).toMatchObject({ active: true, nextEnd: '2026-10-27T01:30:00.000Z' });
    const msg = await s.request('POST', '/message', { token: c.token, json: { message: 'tuesday early' } });
    expect(msg.body.extras).toEqual({ 'service::silent': true });
    await moveTo(at('2026-10-27T01:30:00Z'));
    expect(await read(night.body.id)).toMatchObject({ active: false, nextStart: '2026-11-02T23:00:00.000Z' });
    await s.request('DELETE', `/maintenance-window/${night.body.id}`, { token: tok });
    const day = await s.request('POST', '/maintenance-window', {
      token: tok,
      json: {
        name: 'full day',
        channelIds: [c.id],
        schedule: { type: 'weekly', timezone: 'Asia/Tokyo', days: [3], start: '09:00', end: '09:00' },
      },
    });
    // Wednesday 09:00 Tokyo = 00:00Z, until Thursday 09:00 Tokyo.
    expect(day.body).toMatchObject({
      nextStart: '2026-10-28T00:00:00.000Z',
      nextEnd: '2026-10-29T00:00:00.000Z',
    });
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONITOR_CHECK_POOL } from '../../server/features/monitors/engine';
import { MONITORS_PER_USER } from '../../server/lib/limits';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { type FakeHttp, startFakeHttp } from '../helpers/fake-http';
import { type FakeKind, fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { request, startTestServer, type TestServer } from '../helpers/test-server';
import { openWs, until } from './realtime-helpers';

let t: TestServer;
let fake: FakeKind;
let other: FakeKind;
let dev: string;
let otherDev: string;

const SEC = 1000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  fake = fakeMonitorKind('fake-monitor');
  other = fakeMonitorKind('other-monitor');
  t = await startTestServer({ extraFeatures: [fake.feature, other.feature] });
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

/** Moves the ManualClock and lets the one timer run what became due, checks included. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

async function create(body: Record<string, unknown>, token = dev, kind = 'fake-monitor') {
  const res = await t.request('POST', `/${kind}`, { token, json: { name: 'api', ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number };
}

async function mon(id: number, token = dev) {
  return (await t.request('GET', `/fake-monitor/${id}`, { token })).body;
}

function messagesOf(appid: number) {
  return t.server.ctx.db
    .all<{ title: string; message: string; priority: number; extras: string; sender_name: string }>(
      'SELECT title, message, priority, extras, sender_name FROM messages WHERE channel_id = ? ORDER BY id',
      [appid],
    )
    .map((m) => ({ ...m, extras: JSON.parse(m.extras) }));
}

const titles = (appid: number) => messagesOf(appid).map((m) => m.title);

let targets = 0;
/** A fresh target name whose behaviour the test sets. */
function target(ok = true, error?: string) {
  const name = `t${++targets}`;
  fake.set(name, { ok, ...(error ? { error } : {}) });
  return name;
}

describe('monitor management', () => {
  it('POST /{kind} creates a pending monitor with the common defaults and checks it at once', async () => {
    const c = await makeChannel(t, dev);
    const tg = target();
    const created = t.clock.now();
    const res = await t.request('POST', '/fake-monitor', {
      token: dev,
      json: { appid: c.id, name: '  Shop ', target: tg, secret: 's3cret' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      kind: 'fake-monitor',
      appid: c.id,
      name: 'Shop',
      paused: false,
      status: 'pending',
      lastCheckAt: null,
      createdAt: iso(created),
      intervalSec: 60,
      timeoutSec: 10,
      retries: 0,
      resendEverySec: 0,
      priority: 8,
      statusSince: iso(created),
      consecutiveFailures: 0,
      lastError: null,
      lastResponseMs: null,
      target: tg,
      host: 'localhost',
      secret: '********',
    });
    // The settings are sealed at rest: the secret is not in the row in clear.
    const raw = t.server.ctx.db.first<{ settings: string }>('SELECT settings FROM monitors WHERE id = ?', [
      res.body.id,
    ])!;
    expect(raw.settings).not.toContain('s3cret');
    await t.server.scheduler.tick();
    expect(await mon(res.body.id)).toMatchObject({
      status: 'up',
      lastCheckAt: iso(created),
      lastResponseMs: 5,
    });
    expect(fake.started.get(tg)).toBe(1);
  });

  it('GET /{kind} lists own monitors of that kind by id, ?appid= filters; an id under another kind is 404', async () => {
    const a = await makeChannel(t, dev);
    const b = await makeChannel(t, dev);
    const m1 = await create({ appid: a.id, target: target() });
    const m2 = await create({ appid: b.id, target: target() });
    const o = await create({ appid: a.id, target: target() }, dev, 'other-monitor');
    const all = (await t.request('GET', '/fake-monitor', { token: dev })).body.map((m: any) => m.id);
    expect(all).toEqual(expect.arrayContaining([m1.id, m2.id]));
    expect(all).not.toContain(o.id);
    expect(all).toEqual([...all].sort((x: number, y: number) => x - y));
    const filtered = await t.request('GET', `/fake-monitor?appid=${b.id}`, { token: dev });
    expect(filtered.body.map((m: any) => m.id)).toEqual([m2.id]);
    for (const [method, path] of [
      ['GET', `/fake-monitor/${o.id}`],
      ['PUT', `/fake-monitor/${o.id}`],
      ['DELETE', `/fake-monitor/${o.id}`],
      ['POST', `/fake-monitor/${o.id}/pause`],
      ['POST', `/fake-monitor/${o.id}/check-now`],
      ['GET', `/monitor-history/fake-monitor/${o.id}`],
    ] as const) {
      const res = await t.request(method, path, { token: dev, ...(method === 'GET' ? {} : { json: {} }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.errorDescription).toBe('monitor not found');
    }
    // One id sequence for every kind.
    expect(o.id).toBe(m2.id + 1);
  });

  it("someone else's monitor is 404 monitor not found on every route; their channel is 400", async () => {
    const c = await makeChannel(t, dev);
    const m = await create({ appid: c.id, target: target() });
    for (const [method, path] of [
      ['GET', `/fake-monitor/${m.id}`],
      ['PUT', `/fake-monitor/${m.id}`],
      ['DELETE', `/fake-monitor/${m.id}`],
      ['POST', `/fake-monitor/${m.id}/pause`],
      ['POST', `/fake-monitor/${m.id}/resume`],
      ['POST', `/fake-monitor/${m.id}/check-now`],
    ] as const) {
      const res = await t.request(method, path, {
        token: otherDev,
        ...(method === 'GET' ? {} : { json: {} }),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.errorDescription).toBe('monitor not found');
    }
    const res = await t.request('POST', '/fake-monitor', {
      token: otherDev,
      json: { appid: c.id, name: 'x', target: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('appid: no such channel');
    expect((await t.request('GET', '/fake-monitor', { token: otherDev })).body).toEqual([]);
  });

  it('POST /{kind} answers 400 <field>: for bad common and kind fields', async () => {
    const c = await makeChannel(t, dev);
    const cases: [Record<string, unknown>, string][] = [
      [{ appid: c.id, target: 'x' }, 'name: '],
      [{ appid: c.id, name: 'x' }, 'target: required'],
      [{ appid: c.id, name: 'x', target: 'x', intervalSec: 29 }, 'intervalSec: must be at least 30'],
      [{ appid: c.id, name: 'x', target: 'x', intervalSec: 86_401 }, 'intervalSec: '],
      [{ appid: c.id, name: 'x', target: 'x', timeoutSec: 121 }, 'timeoutSec: must be at most 120'],
      [{ appid: c.id, name: 'x', target: 'x', retries: 11 }, 'retries: '],
      [
        { appid: c.id, name: 'x', target: 'x', resendEverySec: 10 },
        'resendEverySec: must be 0 or at least 30',
      ],
      [{ appid: c.id, name: 'x', target: 'x', priority: 11 }, 'priority: '],
    ];
    for (const [json, prefix] of cases) {
      const res = await t.request('POST', '/fake-monitor', { token: dev, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription).toMatch(
        new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
    }
  });

  it('PUT /{kind}/{id} is partial, keeps a masked secret, keeps the status and re-checks at once', async () => {
    const c = await makeChannel(t, dev);
    const tg = target();
    const m = await create({ appid: c.id, target: tg, secret: 'keep-me', retries: 2 });
    await t.server.scheduler.tick();
    expect((await mon(m.id)).status).toBe('up');
    const res = await t.request('PUT', `/fake-monitor/${m.id}`, {
      token: dev,
      json: { intervalSec: 120, secret: '********' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ intervalSec: 120, retries: 2, name: 'api', target: tg, status: 'up' });
    // No time passed, yet the update's check runs.
    await t.server.scheduler.tick();
    expect(fake.started.get(tg)).toBe(2);
    const { openSettings } = await import('../../server/features/monitors/fields');
    const stored = t.server.ctx.db.first<{ settings: string }>('SELECT settings FROM monitors WHERE id = ?', [
      m.id,
    ])!;
    expect(openSettings<{ secret: string }>(t.server.ctx, stored).secret).toBe('keep-me');
  });

  it('pause stops the checks; resume is pending with an immediate check; DELETE answers {}', async () => {
    const c = await makeChannel(t, dev);
    const tg = target();
    const m = await create({ appid: c.id, target: tg, paused: true });
    expect(m).toMatchObject({ status: 'paused', paused: true });
    await advance(300 * SEC);
    expect(fake.started.get(tg)).toBeUndefined();
    const resumed = await t.request('POST', `/fake-monitor/${m.id}/resume`, { token: dev });
    expect(resumed.body).toMatchObject({ status: 'pending', paused: false, statusSince: iso(t.clock.now()) });
    await t.server.scheduler.tick();
    expect(fake.started.get(tg)).toBe(1);
    const paused = await t.request('POST', `/fake-monitor/${m.id}/pause`, { token: dev });
    expect(paused.body).toMatchObject({ status: 'paused' });
    await advance(600 * SEC);
    expect(fake.started.get(tg)).toBe(1);
    expect((await t.request('DELETE', `/fake-monitor/${m.id}`, { token: dev })).body).toEqual({});
    expect((await t.request('GET', `/fake-monitor/${m.id}`, { token: dev })).status).toBe(404);
    expect((await t.request('GET', `/monitor-history/fake-monitor/${m.id}`, { token: dev })).status).toBe(
      404,
    );
  });

  it('POST /{kind}/test runs once and saves nothing, sends nothing, spends no quota', async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'connection refused');
    const before = t.server.ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM monitors')!.n;
    const quota = (await t.request('GET', '/current/user', { token: dev })).body;
    const res = await t.request('POST', '/fake-monitor/test', {
      token: dev,
      json: { target: tg, retries: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: false,
      status: 'down',
      responseTimeMs: 5,
      error: 'connection refused',
      details: { target: tg, test: true },
    });
    const up = await t.request('POST', '/fake-monitor/test', { token: dev, json: { target: target() } });
    expect(up.body).toEqual({ ok: true, status: 'up', responseTimeMs: 5, details: expect.any(Object) });
    expect(t.server.ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM monitors')!.n).toBe(before);
    expect(messagesOf(c.id)).toEqual([]);
    expect((await t.request('GET', '/current/user', { token: dev })).body).toEqual(quota);
    const bad = await t.request('POST', '/fake-monitor/test', { token: dev, json: { timeoutSec: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toMatch(/^timeoutSec: /);
  });

  it('POST /{kind}/{id}/check-now applies one check with its state change and message and answers the test answer', async () => {
    const c = await makeChannel(t, dev);
    const tg = target();
    const m = await create({ appid: c.id, target: tg });
    await t.server.scheduler.tick();
    fake.set(tg, { ok: false, error: 'refused' });
    const res = await t.request('POST', `/fake-monitor/${m.id}/check-now`, { token: dev });
    expect(res.body).toEqual({
      ok: false,
      status: 'down',
      responseTimeMs: 5,
      error: 'refused',
      details: expect.any(Object),
    });
    expect(await mon(m.id)).toMatchObject({ status: 'down', lastError: 'refused', consecutiveFailures: 1 });
    expect(titles(c.id)).toEqual(['api is down']);
  });

  it(`POST /{kind} answers 403 at the per-user cap of ${MONITORS_PER_USER} monitors of all kinds`, async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await makeChannel(t, d);
    const ctx = t.server.ctx;
    const { sealSettings } = await import('../../server/features/monitors/fields');
    const sealed = sealSettings(ctx, { target: 'x', host: 'localhost', secret: null });
    ctx.db.transaction(() => {
      for (let i = 0; i < MONITORS_PER_USER; i++)
        ctx.db.run(
          `INSERT INTO monitors (user_id, channel_id, kind, name, settings, interval_sec, timeout_sec, status, status_since, created_at)
           VALUES (?, ?, ?, ?, ?, 60, 10, 'paused', ?, ?)`,
          [
            u.id,
            c.id,
            i % 2 ? 'fake-monitor' : 'other-monitor',
            `m ${i}`,
            sealed,
            ctx.clock.now(),
            ctx.clock.now(),
          ],
        );
    });
    const res = await t.request('POST', '/fake-monitor', {
      token: d,
      json: { appid: c.id, name: 'one more', target: 'x' },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('limit reached: at most 1000 monitors per user');
    const me = await t.request('GET', '/current/user', { token: d });
    expect(me.body.monitorCounter).toBe(MONITORS_PER_USER);
  });

  it('management auth: channel keys 403, read API token cannot write, scoped token sees only its channels', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const inside = await makeChannel(t, d);
    const outside = await makeChannel(t, d);
    const mIn = await create({ appid: inside.id, target: target() }, d);
    const mOut = await create({ appid: outside.id, target: target() }, d);
    const scoped = await apiToken(t, { token: d }, { appIds: [inside.id] });
    const list = await t.request('GET', '/fake-monitor', { token: scoped.token });
    expect(list.body.map((m: any) => m.id)).toEqual([mIn.id]);
    expect((await t.request('GET', `/fake-monitor/${mOut.id}`, { token: scoped.token })).status).toBe(404);
    const denied = await t.request('POST', '/fake-monitor', {
      token: scoped.token,
      json: { appid: outside.id, name: 'x', target: 'x' },
    });
    expect(denied.status).toBe(400);
    expect(denied.body.errorDescription).toBe('appid: no such channel');
    const read = await apiToken(t, { token: d }, { access: 'read' });
    expect((await t.request('GET', `/fake-monitor/${mIn.id}`, { token: read.token })).status).toBe(200);
    expect((await t.request('POST', `/fake-monitor/${mIn.id}/pause`, { token: read.token })).status).toBe(
      403,
    );
    const key = insertChannelKeyRow(t, inside.id, { canRead: true });
    expect((await t.request('GET', '/fake-monitor', { token: key })).status).toBe(403);
    expect(
      (await t.request('POST', '/fake-monitor/test', { token: key, json: { target: 'x' } })).status,
    ).toBe(403);
  });
  it('a share recipient who loses send has their monitor paused; resume is 400 until appid moves; channel delete takes monitors and history', async () => {
    const owner = makeUser(t);
    const ownerDev = (await deviceToken(t, owner)).token;
    const friend = makeUser(t);
    const friendDev = (await deviceToken(t, friend)).token;
    const c = await makeChannel(t, ownerDev);
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: ownerDev,
      json: { email: friend.email, permission: 'send' },
    });
    await t.request('POST', `/share/${share.body.id}/accept`, { token: friendDev });
    const m = await create({ appid: c.id, target: target() }, friendDev);
    await t.server.scheduler.tick();
    await t.request('PUT', `/share/${share.body.id}`, { token: ownerDev, json: { permission: 'view' } });
    expect((await mon(m.id, friendDev)).status).toBe('paused');
    const resume = await t.request('POST', `/fake-monitor/${m.id}/resume`, { token: friendDev });
    expect(resume.status).toBe(400);
    expect(resume.body.errorDescription).toBe('appid: no such channel');
    // The owner does not manage the recipient's monitor.
    expect((await t.request('GET', `/fake-monitor/${m.id}`, { token: ownerDev })).status).toBe(404);
    const own = await create({ appid: c.id, target: target() }, ownerDev);
    await t.server.scheduler.tick();
    const historyRows = () =>
      t.server.ctx.db.first<{ n: number }>(
        'SELECT (SELECT COUNT(*) FROM history_intervals WHERE source_id = ?) + (SELECT COUNT(*) FROM history_checks WHERE source_id = ?) AS n',
        [own.id, own.id],
      )!.n;
    expect(historyRows()).toBeGreaterThan(0);
    expect((await t.request('DELETE', `/application/${c.id}`, { token: ownerDev })).status).toBe(200);
    expect((await t.request('GET', `/fake-monitor/${own.id}`, { token: ownerDev })).status).toBe(404);
    expect(historyRows()).toBe(0);
  });
});

describe('states and messages', () => {
  it('retries: failures within retries are pending; beyond them one down message; recovery after; no repeats', async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'connection refused');
    const m = await create({ appid: c.id, name: 'Shop', target: tg, retries: 1 });
    await t.server.scheduler.tick();
    expect(await mon(m.id)).toMatchObject({
      status: 'pending',
      consecutiveFailures: 1,
      lastError: 'connection refused',
    });
    await advance(60 * SEC);
    const downAt = t.clock.now();
    expect(await mon(m.id)).toMatchObject({
      status: 'down',
      consecutiveFailures: 2,
      statusSince: iso(downAt),
    });
    await advance(60 * SEC);
    expect(await mon(m.id)).toMatchObject({ status: 'down', consecutiveFailures: 3 });
    fake.set(tg, { ok: true });
    await advance(60 * SEC);
    expect(await mon(m.id)).toMatchObject({ status: 'up', consecutiveFailures: 0, lastError: null });
    await advance(60 * SEC);
    expect(messagesOf(c.id)).toEqual([
      {
        title: 'Shop is down',
        message: `fake://${tg}: connection refused`,
        priority: 8,
        sender_name: 'Shop',
        extras: { 'service::source': { kind: 'fake-monitor', id: m.id, event: 'down' } },
      },
      {
        title: 'Shop is up again',
        message: `fake://${tg}: recovered after 2m down.`,
        priority: 2,
        sender_name: 'Shop',
        extras: { 'service::source': { kind: 'fake-monitor', id: m.id, event: 'recovery' } },
      },
    ]);
  });

  it('reminders every resendEverySec while down, from the last down/reminder message', async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'HTTP 503');
    const m = await create({ appid: c.id, name: 'Api', target: tg, intervalSec: 60, resendEverySec: 90 });
    await t.server.scheduler.tick();
    const downAt = t.clock.now();
    for (let i = 0; i < 4; i++) await advance(30 * SEC);
    // 120 s down: one reminder at 90 s.
    const msgs = messagesOf(c.id);
    expect(msgs.map((x) => x.title)).toEqual(['Api is down', 'Api is still down']);
    expect(msgs[1]).toMatchObject({
      message: `fake://${tg}: down since ${iso(downAt)} (1m 30s). Last error: HTTP 503`,
      priority: 8,
      extras: { 'service::source': { kind: 'fake-monitor', id: m.id, event: 'reminder' } },
    });
    await advance(60 * SEC);
    expect(titles(c.id)).toEqual(['Api is down', 'Api is still down', 'Api is still down']);
  });

  it('a gap (unknown) between down and the next result neither repeats nor loses the alert', async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'refused');
    const m = await create({ appid: c.id, name: 'Gap', target: tg });
    await t.server.scheduler.tick();
    expect(titles(c.id)).toEqual(['Gap is down']);
    t.clock.sleep(3_600 * SEC);
    await t.server.scheduler.tick();
    expect((await mon(m.id)).status).toBe('unknown');
    await advance(10 * SEC);
    expect((await mon(m.id)).status).toBe('down');
    expect(titles(c.id)).toEqual(['Gap is down']);
    fake.set(tg, { ok: true });
    t.clock.sleep(600 * SEC);
    await t.server.scheduler.tick();
    expect((await mon(m.id)).status).toBe('unknown');
    await advance(10 * SEC);
    expect((await mon(m.id)).status).toBe('up');
    expect(titles(c.id)).toEqual(['Gap is down', 'Gap is up again']);
  });

  it('/ws?events=1 receives monitor:status_changed with the message id', async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'refused');
    const socket = await openWs(t, '/ws?events=1', dev);
    const signals: number[] = [];
    const off = t.server.ctx.bus.on('channel:status_changed', (e) => signals.push(e.appid));
    try {
      const m = await create({ appid: c.id, name: 'Live', target: tg });
      await t.server.scheduler.tick();
      // Created, then pending → down: one SSE signal each (coalesced per stream by the SSE hub).
      expect(signals.filter((a) => a === c.id)).toHaveLength(2);
      await until(() => socket.frames.some((f: any) => f.kind === 'monitor:status_changed'));
      const frame = socket.frames.find((f: any) => f.kind === 'monitor:status_changed') as any;
      expect(frame).toEqual({
        kind: 'monitor:status_changed',
        appid: c.id,
        at: expect.any(String),
        data: {
          kind: 'fake-monitor',
          id: m.id,
          name: 'Live',
          from: 'pending',
          to: 'down',
          messageId: expect.any(Number),
        },
      });
      const status = await t.request('GET', `/application/${c.id}/status`, { token: dev });
      expect(status.body.alerting).toEqual([
        {
          kind: 'fake-monitor',
          id: m.id,
          name: 'Live',
          appid: c.id,
          status: 'down',
          since: expect.any(String),
        },
      ]);
      const sources = await t.request('GET', `/application/${c.id}/event-sources`, { token: dev });
      expect(sources.body.sources).toContainEqual(
        expect.objectContaining({ kind: 'fake-monitor', id: m.id, status: 'down', paused: false }),
      );
    } finally {
      off();
      socket.ws.close();
    }
  });
});

describe('scheduling', () => {
  it('a slow check does not delay another monitor; a check never overlaps itself; the next starts at its end', async () => {
    const c = await makeChannel(t, dev);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.set('slow', { ok: true, gate, responseTimeMs: 90_000 });
    const slow = await create({
      appid: c.id,
      name: 'slow',
      target: 'slow',
      timeoutSec: 120,
      intervalSec: 30,
    });
    const fastTarget = target();
    const fast = await create({ appid: c.id, name: 'fast', target: fastTarget, intervalSec: 30 });
    const ticking = t.server.scheduler.tick();
    await expect.poll(async () => (await mon(fast.id)).status).toBe('up');
    expect((await mon(slow.id)).status).toBe('pending');
    // The slow check is still running when its next start falls due: no second check.
    t.clock.advance(60 * SEC);
    const again = t.server.scheduler.tick();
    await expect.poll(() => fake.started.get(fastTarget)).toBe(2);
    expect(fake.started.get('slow')).toBe(1);
    release();
    await ticking;
    await again;
    expect(fake.maxInFlight.get('slow')).toBe(1);
    // Its overdue next check ran right after the previous one ended.
    expect(fake.started.get('slow')).toBe(2);
    expect((await mon(slow.id)).status).toBe('up');
  });

  it('a result applied after the due timer’s time passed, before its callback ran, keeps the overdue checks due now', async () => {
    // A busy event loop runs the due timer's callback late; a check result applied in between used to
    // re-arm the timer for that monitor's next check (up to the 60 s cap later), so every monitor due
    // meanwhile skipped a whole interval (monitors.bench.ts: 1,000 monitors checked every 120 s).
    const c = await makeChannel(t, dev);
    const ta = target();
    const a = await create({ appid: c.id, name: 'a', target: ta });
    await t.server.scheduler.tick();
    t.clock.advance(30 * SEC);
    const b = await create({ appid: c.id, name: 'b', target: target() });
    await t.server.scheduler.tick();
    const aDue = Date.parse((await mon(a.id)).lastCheckAt) + 60 * SEC;
    expect(t.server.ctx.due.armedAt!).toBeLessThanOrEqual(aDue);
    // a's check falls due; the real timer armed for it has not fired yet (its callback is late) when
    // b's check-now result is applied. No tick() from here: the real timer alone must run a's check.
    t.clock.advance(aDue - t.clock.now() + 1);
    expect(fake.started.get(ta)).toBe(1);
    const res = await t.request('POST', `/fake-monitor/${b.id}/check-now`, { token: dev, json: {} });
    expect(res.status).toBe(200);
    await expect.poll(() => fake.started.get(ta), { timeout: 2_000 }).toBe(2);
    await t.server.scheduler.tick();
  });

  it("a reminder falls due on time while the monitor's check is still running", async () => {
    const c = await makeChannel(t, dev);
    const tg = target(false, 'refused');
    await create({
      appid: c.id,
      name: 'Busy',
      target: tg,
      intervalSec: 60,
      resendEverySec: 90,
      timeoutSec: 120,
    });
    await t.server.scheduler.tick();
    expect(titles(c.id)).toEqual(['Busy is down']);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.set(tg, { ok: false, error: 'refused', gate });
    t.clock.advance(60 * SEC);
    const first = t.server.scheduler.tick();
    await expect.poll(() => fake.started.get(tg)).toBe(2);
    t.clock.advance(30 * SEC);
    const second = t.server.scheduler.tick();
    await expect.poll(() => titles(c.id)).toEqual(['Busy is down', 'Busy is still down']);
    release();
    await first;
    await second;
  });

  it(`checks run concurrently but at most ${MONITOR_CHECK_POOL} at once; the rest start as slots free`, async () => {
    const u = makeUser(t);
    const c = await makeChannel(t, (await deviceToken(t, u)).token);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.set('pool', { ok: true, gate });
    const ctx = t.server.ctx;
    const { sealSettings } = await import('../../server/features/monitors/fields');
    const sealed = sealSettings(ctx, { target: 'pool', host: 'localhost', secret: null });
    const now = ctx.clock.now();
    const n = MONITOR_CHECK_POOL + 44;
    ctx.db.transaction(() => {
      for (let i = 0; i < n; i++)
        ctx.db.run(
          `INSERT INTO monitors (user_id, channel_id, kind, name, settings, interval_sec, timeout_sec, status,
             status_since, next_check_at, due_at, created_at)
           VALUES (?, ?, 'fake-monitor', ?, ?, 60, 120, 'pending', ?, ?, ?, ?)`,
          [u.id, c.id, `p${i}`, sealed, now, now, now, now],
        );
    });
    const ticking = t.server.scheduler.tick();
    await expect.poll(() => fake.started.get('pool')).toBe(MONITOR_CHECK_POOL);
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.started.get('pool')).toBe(MONITOR_CHECK_POOL);
    release();
    await ticking;
    expect(fake.started.get('pool')).toBe(n);
    expect(fake.maxInFlight.get('pool')).toBe(MONITOR_CHECK_POOL);
    const up = ctx.db.first<{ n: number }>(
      "SELECT COUNT(*) AS n FROM monitors WHERE channel_id = ? AND status = 'up'",
      [c.id],
    )!.n;
    expect(up).toBe(n);
  });

  it('a check that outlives timeoutSec fails with `timeout after {n} s`', async () => {
    const c = await makeChannel(t, dev);
    fake.set('hang', { ok: true, gate: new Promise(() => {}) });
    const m = await create({ appid: c.id, name: 'hang', target: 'hang', timeoutSec: 1 });
    await t.server.scheduler.tick();
    expect(await mon(m.id)).toMatchObject({ status: 'down', lastError: 'timeout after 1 s' });
  });

  it('after a restart monitors are unknown and overdue checks are spread over min(intervalSec, 10) s', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-mon-'));
    const k = fakeMonitorKind('fake-monitor');
    const own = await startTestServer({ dataDir, extraFeatures: [k.feature] });
    try {
      const d = (await deviceToken(own)).token;
      const c = await makeChannel(own, d);
      const ids: number[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (
            await own.request('POST', '/fake-monitor', {
              token: d,
              json: { appid: c.id, name: `m${i}`, target: `r${i}` },
            })
          ).body.id,
        );
      await own.server.scheduler.tick();
      await own.close();
      own.clock.advance(3_600 * SEC);
      const k2 = fakeMonitorKind('fake-monitor');
      const again = await startTestServer({ dataDir, clock: own.clock, extraFeatures: [k2.feature] });
      try {
        const started = own.clock.now();
        const rows = again.server.ctx.db.all<{ status: string; next_check_at: number }>(
          'SELECT status, next_check_at FROM monitors ORDER BY id',
        );
        expect(rows.map((r) => r.status)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown']);
        expect(rows.map((r) => r.next_check_at - started)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
        await again.server.scheduler.tick();
        expect([...k2.started.values()].reduce((a, b) => a + b, 0)).toBe(1);
        own.clock.advance(10 * SEC);
        await again.server.scheduler.tick();
        expect([...k2.started.values()].reduce((a, b) => a + b, 0)).toBe(5);
        const got = await request(again.url, 'GET', `/fake-monitor/${ids[0]}`, { token: d });
        expect(got.body.status).toBe('up');
        expect(
          again.server.ctx.db.first<{ n: number }>(
            'SELECT COUNT(*) AS n FROM messages WHERE channel_id = ?',
            [c.id],
          )!.n,
        ).toBe(0);
      } finally {
        await again.close();
      }
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('history', () => {
  it('GET /monitor-history/{kind}/{id} answers uptime by time, response time avg/p95, days and the paged log', async () => {
    const c = await makeChannel(t, dev);
    const tg = target();
    fake.set(tg, { ok: true, responseTimeMs: 100 });
    const m = await create({ appid: c.id, name: 'Hist', target: tg, intervalSec: 60 });
    await t.server.scheduler.tick();
    await advance(60 * SEC);
    fake.set(tg, { ok: true, responseTimeMs: 300 });
    await advance(60 * SEC);
    fake.set(tg, { ok: false, error: 'refused' });
    await advance(60 * SEC);
    await advance(60 * SEC);
    const res = await t.request('GET', `/monitor-history/fake-monitor/${m.id}`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'fake-monitor',
      id: m.id,
      name: 'Hist',
      status: 'down',
      responseTime: { avgMs: 167, p95Ms: 300 },
    });
    // Up 180 s, down 60 s so far.
    expect(res.body.uptime['24h']).toBe(75);
    expect(res.body.days).toHaveLength(90);
    expect(res.body.days.at(-1)).toMatchObject({ status: 'down', downSec: 60 });
    const log = await t.request('GET', `/monitor-history/fake-monitor/${m.id}/log?limit=2`, { token: dev });
    expect(log.body.checks).toEqual([
      expect.objectContaining({ ok: false, status: 'down', error: 'refused', responseTimeMs: 5 }),
      expect.objectContaining({ ok: false, status: 'down', error: 'refused' }),
    ]);
    expect(log.body.paging).toMatchObject({ size: 2, limit: 2, since: expect.any(Number) });
    const rest = await t.request(
      'GET',
      `/monitor-history/fake-monitor/${m.id}/log?limit=10&since=${log.body.paging.since}`,
      {
        token: dev,
      },
    );
    expect(rest.body.checks.map((x: any) => x.responseTimeMs)).toEqual([300, 100, 100]);
  });
});

describe('real kinds against loopback targets', () => {
  let target: FakeHttp;
  let flips = 0;
  beforeAll(async () => {
    target = await startFakeHttp();
    target.on('GET', '/up', { status: 200, body: 'ok' });
    target.on('GET', '/down', { status: 503, body: 'maintenance' });
    target.on('GET', '/slow', { status: 200, body: 'late', delayMs: 1_500 });
    target.on('GET', '/flip', () =>
      ++flips % 2 === 1 ? { status: 200, body: 'ok' } : { status: 500, body: 'x' },
    );
  });
  afterAll(async () => {
    await target.close();
  });

  async function real(kind: string, body: Record<string, unknown>) {
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', `/${kind}`, { token: dev, json: { appid: c.id, ...body } });
    if (res.status !== 200) throw new Error(`create ${kind}: ${res.status} ${res.text}`);
    return { c, m: res.body as Record<string, any> & { id: number } };
  }
  const get = async (kind: string, id: number) =>
    (await t.request('GET', `/${kind}/${id}`, { token: dev })).body;

  it('monitor: up, down (with the down message) and a slow target past timeoutSec that does not delay the others', async () => {
    const up = await real('monitor', { name: 'Up', url: `${target.url}/up` });
    const down = await real('monitor', { name: 'Down', url: `${target.url}/down` });
    const slow = await real('monitor', { name: 'Slow', url: `${target.url}/slow`, timeoutSec: 1 });
    await t.server.scheduler.tick();
    expect(await get('monitor', up.m.id)).toMatchObject({ status: 'up', lastError: null });
    expect(await get('monitor', down.m.id)).toMatchObject({ status: 'down', consecutiveFailures: 1 });
    expect(await get('monitor', slow.m.id)).toMatchObject({ status: 'down', lastError: 'timeout after 1 s' });
    expect(titles(down.c.id)).toEqual(['Down is down']);
    expect(messagesOf(down.c.id)[0]!.message).toMatch(new RegExp(`^${target.url}/down: `));
    expect(titles(slow.c.id)).toEqual(['Slow is down']);
  });

  it('monitor: a flipping target alternates up and down with one message per transition', async () => {
    flips = 0;
    const { c, m } = await real('monitor', { name: 'Flip', url: `${target.url}/flip` });
    await t.server.scheduler.tick();
    for (let i = 0; i < 3; i++) await advance(60 * SEC);
    expect((await get('monitor', m.id)).status).toBe('down');
    expect(titles(c.id)).toEqual(['Flip is down', 'Flip is up again', 'Flip is down']);
    const log = await t.request('GET', `/monitor-history/monitor/${m.id}/log`, { token: dev });
    expect(log.body.checks.map((x: any) => x.status)).toEqual(['down', 'up', 'down', 'up']);
  });

  it('POST /http-monitor/test and /port-monitor/test answer the test answer and save nothing', async () => {
    const http = await t.request('POST', '/http-monitor/test', {
      token: dev,
      json: { url: `${target.url}/down` },
    });
    expect(http.body).toMatchObject({
      ok: false,
      status: 'down',
      error: expect.any(String),
      details: { statusCode: 503 },
    });
    const port = Number(new URL(target.url).port);
    const open = await t.request('POST', '/port-monitor/test', {
      token: dev,
      json: { host: '127.0.0.1', port },
    });
    expect(open.body).toMatchObject({ ok: true, status: 'up', details: { address: '127.0.0.1' } });
    expect(
      t.server.ctx.db.first<{ n: number }>(
        "SELECT COUNT(*) AS n FROM monitors WHERE kind IN ('http-monitor', 'port-monitor')",
      )!.n,
    ).toBe(0);
  });
});

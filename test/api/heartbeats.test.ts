import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSystemChannel } from '../../server/features/channels/service';
import { ping } from '../../server/features/heartbeats/service';
import { consumeEvents, remainingEvents } from '../../server/features/quota/service';
import { HEARTBEATS_PER_USER } from '../../server/lib/limits';
import { issueToken } from '../../server/lib/tokens';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { request, startTestServer, type TestServer } from '../helpers/test-server';
import { openWs, until } from './realtime-helpers';

let t: TestServer;
let dev: string;
let otherDev: string;
let userId: number;

const SEC = 1000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  userId = t.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [t.admin.email])!.id;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function channel(token = dev) {
  return makeChannel(t, token);
}

async function create(body: Record<string, unknown>, token = dev) {
  const res = await t.request('POST', '/heartbeat', { token, json: { name: 'backup', ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number; token: string };
}

function pingPath(token: string, suffix = '') {
  return `/heartbeat/ping/${token}${suffix}`;
}

async function hb(id: number, token = dev) {
  return (await t.request('GET', `/heartbeat/${id}`, { token })).body;
}

/** Moves the ManualClock and lets the one timer apply what became due. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

function messagesOf(appid: number) {
  return t.server.ctx.db.all<{
    id: number;
    title: string;
    message: string;
    priority: number;
    date: number;
    extras: string;
    sender_name: string;
  }>(
    'SELECT id, title, message, priority, date, extras, sender_name FROM messages WHERE channel_id = ? ORDER BY id',
    [appid],
  );
}

describe('heartbeat management', () => {
  it('POST /heartbeat creates a new heartbeat whose full token is shown once', async () => {
    const c = await channel();
    const res = await t.request('POST', '/heartbeat', {
      token: dev,
      json: {
        appid: c.id,
        name: '  Nightly backup ',
        intervalSec: 3600,
        graceSec: 300,
        alertMessage: 'check the NAS',
      },
    });
    expect(res.status).toBe(200);
    const token = res.body.token as string;
    expect(token).toMatch(/^H[A-Za-z0-9]{22}$/);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      name: 'Nightly backup',
      paused: false,
      status: 'new',
      lastCheckAt: null,
      createdAt: iso(t.clock.now()),
      intervalSec: 3600,
      schedule: null,
      timezone: 'UTC',
      graceSec: 300,
      alertMessage: 'check the NAS',
      manualResume: false,
      priority: 8,
      token,
      pingUrl: `${t.url}/heartbeat/ping/${token}`,
      expectedAt: null,
      deadlineAt: null,
      lastFailReason: null,
      startedAt: null,
      lastDurationMs: null,
      statusSince: iso(t.clock.now()),
    });
    const masked = `${token.slice(0, 3)}${'*'.repeat(16)}${token.slice(-4)}`;
    const one = await hb(res.body.id);
    expect(one).toEqual({ ...res.body, token: masked, pingUrl: `${t.url}/heartbeat/ping/${masked}` });
    const list = await t.request('GET', `/heartbeat?appid=${c.id}`, { token: dev });
    expect(list.body).toEqual([one]);
  });

  it('POST /heartbeat applies the defaults (300 s period, 60 s grace, priority 8) and may create paused', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, paused: true });
    expect(h).toMatchObject({ intervalSec: 300, graceSec: 60, priority: 8, paused: true, status: 'paused' });
    const cron = await create({ appid: c.id, schedule: '0 3 * * *', timezone: 'Europe/Berlin' });
    expect(cron).toMatchObject({ intervalSec: null, schedule: '0 3 * * *', timezone: 'Europe/Berlin' });
  });

  it('POST /heartbeat answers 400 with the field prefix for bad input', async () => {
    const c = await channel();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x' }, 'appid:'],
      [{ appid: c.id }, 'name:'],
      [{ appid: c.id, name: '   ' }, 'name:'],
      [{ appid: c.id, name: 'x'.repeat(201) }, 'name:'],
      [{ appid: c.id, name: 'x', intervalSec: 10 }, 'intervalSec: must be at least 30'],
      [{ appid: c.id, name: 'x', intervalSec: 31_536_001 }, 'intervalSec:'],
      [{ appid: c.id, name: 'x', intervalSec: '60' }, 'intervalSec:'],
      [{ appid: c.id, name: 'x', graceSec: -1 }, 'graceSec:'],
      [{ appid: c.id, name: 'x', priority: 11 }, 'priority:'],
      [{ appid: c.id, name: 'x', alertMessage: 'x'.repeat(1001) }, 'alertMessage:'],
      [{ appid: c.id, name: 'x', manualResume: 'yes' }, 'manualResume:'],
      [{ appid: c.id, name: 'x', schedule: 'every day' }, 'schedule: invalid cron expression'],
      [{ appid: c.id, name: 'x', schedule: '0 0 * * * *' }, 'schedule: invalid cron expression'],
      [{ appid: c.id, name: 'x', schedule: '61 * * * *' }, 'schedule: invalid cron expression'],
      [
        { appid: c.id, name: 'x', schedule: '0 * * * *', intervalSec: 60 },
        'schedule: cannot be combined with intervalSec',
      ],
      [{ appid: c.id, name: 'x', schedule: '0 * * * *', timezone: 'Mars/Olympus' }, 'timezone:'],
      [{ appid: 999_999, name: 'x' }, 'appid: no such channel'],
    ];
    for (const [json, prefix] of cases) {
      const res = await t.request('POST', '/heartbeat', { token: dev, json });
      expect({ json, status: res.status, text: res.body.errorDescription?.startsWith(prefix) }).toEqual({
        json,
        status: 400,
        text: true,
      });
    }
  });

  it("POST /heartbeat refuses someone else's channel (400), the system channel (403) and channel keys (403)", async () => {
    const theirs = await channel(otherDev);
    const res = await t.request('POST', '/heartbeat', { token: dev, json: { appid: theirs.id, name: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('appid: no such channel');
    const system = ensureSystemChannel(t.server.ctx, userId);
    const sys = await t.request('POST', '/heartbeat', { token: dev, json: { appid: system.id, name: 'x' } });
    expect(sys.status).toBe(403);
    expect(sys.body.errorDescription).toBe('the system channel cannot be changed');
    const c = await channel();
    const key = insertChannelKeyRow(t, c.id, { canRead: true });
    expect((await t.request('GET', '/heartbeat', { token: key })).status).toBe(403);
    expect((await t.request('GET', '/heartbeat')).status).toBe(401);
  });

  it("the heartbeat routes answer 404 `heartbeat not found` for someone else's heartbeat", async () => {
    const theirs = await create({ appid: (await channel(otherDev)).id }, otherDev);
    for (const [method, path] of [
      ['GET', `/heartbeat/${theirs.id}`],
      ['PUT', `/heartbeat/${theirs.id}`],
      ['DELETE', `/heartbeat/${theirs.id}`],
      ['POST', `/heartbeat/${theirs.id}/pause`],
      ['POST', `/heartbeat/${theirs.id}/resume`],
      ['POST', `/heartbeat/${theirs.id}/rotate`],
      ['POST', `/heartbeat/${theirs.id}/test-alert`],
      ['POST', `/heartbeat/${theirs.id}/test-recovery`],
    ] as const) {
      const res = await t.request(method, path, { token: dev, ...(method === 'GET' ? {} : { json: {} }) });
      expect({ path, status: res.status, error: res.body.errorDescription }).toEqual({
        path,
        status: 404,
        error: 'heartbeat not found',
      });
    }
    const list = await t.request('GET', '/heartbeat', { token: dev });
    expect(list.body.map((h: any) => h.id)).not.toContain(theirs.id);
  });

  it('a read-only API token lists but gets 403 on writes; a scoped token sees and creates only inside its scope', async () => {
    const inside = await channel();
    const outside = await channel();
    const a = await create({ appid: inside.id });
    const b = await create({ appid: outside.id });
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('GET', `/heartbeat/${a.id}`, { token: ro.token })).status).toBe(200);
    const w = await t.request('POST', `/heartbeat/${a.id}/pause`, { token: ro.token });
    expect(w.status).toBe(403);
    expect(w.body.errorDescription).toBe('token lacks the write permission');
    const scoped = await apiToken(t, { token: dev }, { appIds: [inside.id] });
    const list = await t.request('GET', '/heartbeat', { token: scoped.token });
    expect(list.body.map((h: any) => h.id)).toEqual([a.id]);
    expect((await t.request('GET', `/heartbeat/${b.id}`, { token: scoped.token })).status).toBe(404);
    expect((await t.request('DELETE', `/heartbeat/${b.id}`, { token: scoped.token })).status).toBe(404);
    const out = await t.request('POST', '/heartbeat', {
      token: scoped.token,
      json: { appid: outside.id, name: 'x' },
    });
    expect(out.status).toBe(400);
    expect(out.body.errorDescription).toBe('appid: no such channel');
    const moved = await t.request('PUT', `/heartbeat/${a.id}`, {
      token: scoped.token,
      json: { appid: outside.id },
    });
    expect(moved.status).toBe(400);
    expect(
      (await t.request('POST', '/heartbeat', { token: scoped.token, json: { appid: inside.id, name: 'ok' } }))
        .status,
    ).toBe(200);
  });

  it('POST /heartbeat answers 403 at the per-user cap of 1,000 heartbeats', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await channel(d);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => {
      for (let i = 0; i < HEARTBEATS_PER_USER; i++) {
        const { digest, hint } = issueToken('H');
        ctx.db.run(
          `INSERT INTO heartbeats (user_id, channel_id, name, interval_sec, status, status_since, token_digest, token_hint, created_at)
           VALUES (?, ?, ?, 300, 'new', ?, ?, ?, ?)`,
          [u.id, c.id, `hb ${i}`, ctx.clock.now(), digest, hint, ctx.clock.now()],
        );
      }
    });
    const res = await t.request('POST', '/heartbeat', { token: d, json: { appid: c.id, name: 'one more' } });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('limit reached: at most 1000 heartbeats per user');
    const me = await t.request('GET', '/current/user', { token: d });
    expect(me.body.heartbeatCounter).toBe(HEARTBEATS_PER_USER);
  });

  it('DELETE /heartbeat/{id} answers {} and its ping URL is 404 at once; POST /rotate kills the old token', async () => {
    const c = await channel();
    const h = await create({ appid: c.id });
    const rotated = await t.request('POST', `/heartbeat/${h.id}/rotate`, { token: dev });
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).toMatch(/^H[A-Za-z0-9]{22}$/);
    expect(rotated.body.token).not.toBe(h.token);
    expect(rotated.body.pingUrl).toBe(`${t.url}/heartbeat/ping/${rotated.body.token}`);
    const old = await t.request('GET', pingPath(h.token));
    expect(old.status).toBe(404);
    expect(old.body.errorDescription).toBe('heartbeat not found');
    expect((await t.request('GET', pingPath(rotated.body.token))).status).toBe(200);
    const del = await t.request('DELETE', `/heartbeat/${h.id}`, { token: dev });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect((await t.request('GET', pingPath(rotated.body.token))).status).toBe(404);
    expect((await t.request('GET', `/heartbeat/${h.id}`, { token: dev })).status).toBe(404);
  });

  it('deleting a channel deletes its heartbeats and their history', async () => {
    const c = await channel();
    const h = await create({ appid: c.id });
    await t.request('GET', pingPath(h.token));
    const historyRows = () =>
      t.server.ctx.db.first<{ n: number }>(
        `SELECT (SELECT COUNT(*) FROM history_intervals WHERE kind = 'heartbeat' AND source_id = ?)
              + (SELECT COUNT(*) FROM history_checks WHERE kind = 'heartbeat' AND source_id = ?) AS n`,
        [h.id, h.id],
      )!.n;
    expect(historyRows()).toBeGreaterThan(0);
    expect((await t.request('DELETE', `/application/${c.id}`, { token: dev })).status).toBe(200);
    expect((await t.request('GET', `/heartbeat/${h.id}`, { token: dev })).status).toBe(404);
    expect((await t.request('GET', pingPath(h.token))).status).toBe(404);
    expect(historyRows()).toBe(0);
  });
});

describe('the ping endpoint', () => {
  it('GET, HEAD and POST /heartbeat/ping/{token} are successes with CORS * and Ping-Body-Limit', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 600, graceSec: 60 });
    const get = await t.request('GET', pingPath(h.token), {
      headers: { Origin: 'https://elsewhere.example' },
    });
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ ok: true, status: 'up' });
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
    expect(get.headers.get('ping-body-limit')).toBe('10000');
    const head = await t.request('HEAD', pingPath(h.token));
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const post = await t.request('POST', pingPath(h.token), {
      body: 'log line\n',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(post.body).toEqual({ ok: true, status: 'up' });
    const pre = await t.request('OPTIONS', pingPath(h.token), {
      headers: { Origin: 'https://x.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const now = t.clock.now();
    expect(await hb(h.id)).toMatchObject({
      status: 'up',
      lastCheckAt: iso(now),
      expectedAt: iso(now + 600 * SEC),
      deadlineAt: iso(now + 660 * SEC),
      statusSince: iso(now),
    });
  });

  it('a ping answers alike on the lean lane (GET, JSON POST) and through express (HEAD, gzip, text, form)', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 600 });
    const lean = await t.request('POST', pingPath(h.token, '/log'), { json: { note: 'lean' } });
    const gz = gzipSync(JSON.stringify({ note: 'express' }));
    const express = await t.request('POST', pingPath(h.token, '/log'), {
      body: gz,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    for (const res of [lean, express]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, status: 'new' });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('ping-body-limit')).toBe('10000');
    }
    const failLean = await t.request('POST', pingPath(h.token, '/7'), {
      json: { fail_reason: 'lean reason' },
    });
    expect(failLean.body).toEqual({ ok: true, status: 'down' });
    expect((await hb(h.id)).lastFailReason).toBe('lean reason');
    const failExpress = await t.request('POST', pingPath(h.token), {
      body: gzipSync(JSON.stringify({ fail_reason: 'express reason' })),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(failExpress.body).toEqual({ ok: true, status: 'down' });
    for (const [method, suffix] of [
      ['GET', '/x/y'],
      ['POST', '/x/y'],
      ['HEAD', '/x/y'],
    ] as const) {
      const res = await t.request(method, pingPath(h.token, suffix));
      expect({ method, status: res.status }).toEqual({ method, status: 404 });
    }
    for (const res of [
      await t.request('GET', pingPath(`H${'b'.repeat(22)}`)),
      await t.request('POST', pingPath(`H${'b'.repeat(22)}`), { form: { a: 'b' } }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.errorDescription).toBe('heartbeat not found');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect((await t.request('GET', pingPath(h.token, '/'))).body).toEqual({ ok: true, status: 'up' });
  });

  it('a ping ignores credentials and answers 404 for unknown tokens, other token kinds and other suffixes', async () => {
    const c = await channel();
    const h = await create({ appid: c.id });
    const withCreds = await t.request('GET', pingPath(h.token), { token: 'Cbogusbogusbogusbogusbo' });
    expect(withCreds.status).toBe(200);
    expect((await t.request('GET', pingPath(`H${'a'.repeat(22)}`))).status).toBe(404);
    expect((await t.request('GET', pingPath(c.token))).body.errorDescription).toBe('heartbeat not found');
    expect((await t.request('GET', pingPath(h.token, '/stop'))).status).toBe(404);
    expect((await t.request('GET', pingPath(h.token, '/start/x'))).status).toBe(404);
  });

  it('/fail, fail_reason (JSON, form, query) and /{exitCode} are failures with their reasons', async () => {
    const c = await channel();
    const cases: [string, Parameters<TestServer['request']>[2], string][] = [
      ['/fail', {}, 'failure signalled'],
      ['/fail', { json: { fail_reason: 'disk full' } }, 'disk full'],
      ['', { json: { fail_reason: 'json reason' } }, 'json reason'],
      ['', { form: { fail_reason: 'form reason' } }, 'form reason'],
      ['?fail_reason=query%20reason', {}, 'query reason'],
      ['/3', {}, 'exit status 3'],
      ['/255', { json: { fail_reason: 'with code' } }, 'with code'],
    ];
    for (const [suffix, opts, reason] of cases) {
      const h = await create({ appid: c.id });
      const res = await t.request('POST', pingPath(h.token, suffix), opts);
      expect({ suffix, body: res.body }).toEqual({ suffix, body: { ok: true, status: 'down' } });
      expect((await hb(h.id)).lastFailReason).toBe(reason);
    }
    const h = await create({ appid: c.id });
    expect((await t.request('GET', pingPath(h.token, '/0'))).body).toEqual({ ok: true, status: 'up' });
    const long = await t.request('POST', pingPath(h.token), { json: { fail_reason: 'x'.repeat(1500) } });
    expect(long.body.status).toBe('down');
    expect((await hb(h.id)).lastFailReason).toBe('x'.repeat(1000));
  });

  it('a ping answers 400 for exit codes beyond 255, a non-string fail_reason and malformed JSON', async () => {
    const c = await channel();
    const h = await create({ appid: c.id });
    const code = await t.request('GET', pingPath(h.token, '/256'));
    expect(code.status).toBe(400);
    expect(code.body.errorDescription).toBe('exit status must be 0-255');
    expect((await t.request('GET', pingPath(h.token, '/-1'))).status).toBe(400);
    const notString = await t.request('POST', pingPath(h.token), { json: { fail_reason: 42 } });
    expect(notString.status).toBe(400);
    expect(notString.body.errorDescription).toMatch(/^fail_reason:/);
    const bad = await t.request('POST', pingPath(h.token), {
      body: '{"fail_reason":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect((await hb(h.id)).status).toBe('new');
  });

  it('/start sets startedAt; the next success reports lastDurationMs; /log changes nothing', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 3600 });
    expect((await t.request('GET', pingPath(h.token, '/start'))).body).toEqual({ ok: true, status: 'new' });
    const started = t.clock.now();
    expect(await hb(h.id)).toMatchObject({ status: 'new', startedAt: iso(started), expectedAt: null });
    t.clock.advance(42 * SEC);
    expect((await t.request('POST', pingPath(h.token), { body: 'done' })).body).toEqual({
      ok: true,
      status: 'up',
    });
    expect(await hb(h.id)).toMatchObject({ startedAt: null, lastDurationMs: 42_000 });
    const before = await hb(h.id);
    t.clock.advance(5 * SEC);
    expect((await t.request('POST', pingPath(h.token, '/log'), { body: 'progress 50%' })).body).toEqual({
      ok: true,
      status: 'up',
    });
    expect(await hb(h.id)).toEqual({ ...before, lastCheckAt: iso(t.clock.now()) });
  });

  it('a ping answers 429 with Retry-After after 600 pings a minute per token', async () => {
    const c = await channel();
    const h = await create({ appid: c.id });
    const other = await create({ appid: c.id });
    for (let i = 0; i < 599; i++) ping(t.server.ctx, h.token, { kind: 'log' });
    expect((await t.request('GET', pingPath(h.token, '/log'))).status).toBe(200);
    const limited = await t.request('GET', pingPath(h.token));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(limited.body).toEqual({
      error: 'Too Many Requests',
      errorCode: 429,
      errorDescription: 'too many pings; try again in 60 s',
      retryAfter: 60,
    });
    expect((await t.request('GET', pingPath(other.token))).status).toBe(200);
    t.clock.advance(60 * SEC);
    expect((await t.request('GET', pingPath(h.token))).status).toBe(200);
  });
});

describe('the state machine', () => {
  it('new → up → late → up → down (dated at the deadline) → up with a recovery message', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, name: 'Backup', intervalSec: 300, graceSec: 60 });
    await advance(3_600 * SEC);
    expect((await hb(h.id)).status).toBe('new'); // new never times out
    await t.request('GET', pingPath(h.token));
    const firstPing = t.clock.now();
    await advance(301 * SEC);
    expect(await hb(h.id)).toMatchObject({ status: 'late', statusSince: iso(firstPing + 300 * SEC) });
    expect(messagesOf(c.id)).toEqual([]);
    await t.request('GET', pingPath(h.token));
    const secondPing = t.clock.now();
    expect((await hb(h.id)).status).toBe('up');
    await advance(370 * SEC);
    const deadline = secondPing + 360 * SEC;
    expect(await hb(h.id)).toMatchObject({
      status: 'down',
      statusSince: iso(deadline),
      expectedAt: null,
      deadlineAt: null,
    });
    const [down] = messagesOf(c.id);
    expect(down).toMatchObject({
      title: 'Backup is down',
      message: `No ping since ${iso(secondPing)}; expected by ${iso(secondPing + 300 * SEC)} (grace 60 s).`,
      priority: 8,
      date: deadline,
      sender_name: 'Backup',
    });
    expect(JSON.parse(down!.extras)).toEqual({
      'service::source': { kind: 'heartbeat', id: h.id, event: 'down' },
    });
    await advance(300 * SEC); // stays down, no second message
    expect(messagesOf(c.id)).toHaveLength(1);
    await t.request('GET', pingPath(h.token));
    const [, recovery] = messagesOf(c.id);
    expect(recovery).toMatchObject({
      title: 'Backup is up again',
      message: 'Ping received after 5m 10s down.',
      priority: 2,
    });
    expect(JSON.parse(recovery!.extras)['service::source'].event).toBe('recovery');
  });

  it('with graceSec 0 an overdue heartbeat goes straight from up to down; alertMessage is the down text', async () => {
    const c = await channel();
    const h = await create({
      appid: c.id,
      intervalSec: 60,
      graceSec: 0,
      alertMessage: 'Call Bob',
      priority: 10,
    });
    await t.request('GET', pingPath(h.token));
    await advance(59 * SEC);
    expect((await hb(h.id)).status).toBe('up');
    await advance(2 * SEC);
    expect((await hb(h.id)).status).toBe('down');
    expect(messagesOf(c.id)).toEqual([expect.objectContaining({ message: 'Call Bob', priority: 10 })]);
  });

  it('a failure sends one fail message; further failures while down send none', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, name: 'Job', alertMessage: 'Restart it' });
    await t.request('POST', pingPath(h.token, '/fail'), { json: { fail_reason: 'disk full' } });
    await t.request('POST', pingPath(h.token, '/1'));
    const msgs = messagesOf(c.id);
    expect(msgs).toEqual([
      expect.objectContaining({
        title: 'Job failed',
        message: 'Restart it\n\nReason: disk full',
        priority: 8,
      }),
    ]);
    expect(JSON.parse(msgs[0]!.extras)['service::source'].event).toBe('fail');
    expect((await hb(h.id)).lastFailReason).toBe('exit status 1');
  });

  it('pause, resume and manualResume follow the table; repeating is a no-op', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 120 });
    const paused = await t.request('POST', `/heartbeat/${h.id}/pause`, { token: dev });
    expect(paused.body).toMatchObject({ status: 'paused', paused: true, expectedAt: null });
    expect((await t.request('POST', `/heartbeat/${h.id}/pause`, { token: dev })).body.status).toBe('paused');
    const resumed = await t.request('POST', `/heartbeat/${h.id}/resume`, { token: dev });
    expect(resumed.body).toMatchObject({ status: 'new', paused: false }); // never pinged
    await t.request('GET', pingPath(h.token));
    await t.request('POST', `/heartbeat/${h.id}/pause`, { token: dev });
    await advance(3_600 * SEC);
    expect((await hb(h.id)).status).toBe('paused');
    expect(messagesOf(c.id)).toEqual([]);
    const again = await t.request('POST', `/heartbeat/${h.id}/resume`, { token: dev });
    expect(again.body).toMatchObject({ status: 'up', expectedAt: iso(t.clock.now() + 120 * SEC) });
    expect((await t.request('POST', `/heartbeat/${h.id}/resume`, { token: dev })).body.status).toBe('up');
    // A ping to a paused heartbeat without manualResume resumes it; a failure sends the fail message.
    await t.request('POST', `/heartbeat/${h.id}/pause`, { token: dev });
    expect((await t.request('GET', pingPath(h.token))).body).toEqual({ ok: true, status: 'up' });
    await t.request('POST', `/heartbeat/${h.id}/pause`, { token: dev });
    expect((await t.request('GET', pingPath(h.token, '/fail'))).body).toEqual({ ok: true, status: 'down' });
    expect(messagesOf(c.id).map((m) => m.title)).toEqual(['backup failed']);
    // manualResume: pings to a paused heartbeat are ignored.
    const m = await create({ appid: c.id, manualResume: true, paused: true });
    expect((await t.request('GET', pingPath(m.token))).body).toEqual({
      ok: true,
      status: 'paused',
      ignored: true,
    });
    expect((await t.request('GET', pingPath(m.token, '/fail'))).body).toEqual({
      ok: true,
      status: 'paused',
      ignored: true,
    });
    expect((await hb(m.id)).status).toBe('paused');
    const log = await t.request('GET', `/monitor-history/heartbeat/${m.id}/log`, { token: dev });
    expect(log.body.checks.map((x: any) => [x.status, x.pingKind])).toEqual([
      ['paused', 'ignored'],
      ['paused', 'ignored'],
    ]);
  });

  it('PUT /heartbeat/{id} recomputes the deadline from the last ping; a passed deadline is down at once', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 3600, graceSec: 60 });
    await t.request('GET', pingPath(h.token));
    const pinged = t.clock.now();
    await advance(600 * SEC);
    const longer = await t.request('PUT', `/heartbeat/${h.id}`, {
      token: dev,
      json: { intervalSec: 7200, name: 'renamed' },
    });
    expect(longer.body).toMatchObject({
      name: 'renamed',
      status: 'up',
      expectedAt: iso(pinged + 7200 * SEC),
      deadlineAt: iso(pinged + 7260 * SEC),
      alertMessage: '',
    });
    const cron = await t.request('PUT', `/heartbeat/${h.id}`, { token: dev, json: { schedule: '@hourly' } });
    expect(cron.body).toMatchObject({ intervalSec: null, schedule: '@hourly' });
    const both = await t.request('PUT', `/heartbeat/${h.id}`, {
      token: dev,
      json: { schedule: '@daily', intervalSec: 60 },
    });
    expect(both.status).toBe(400);
    const shorter = await t.request('PUT', `/heartbeat/${h.id}`, {
      token: dev,
      json: { intervalSec: 300, graceSec: 0 },
    });
    expect(shorter.body).toMatchObject({
      status: 'down',
      schedule: null,
      intervalSec: 300,
      statusSince: iso(t.clock.now()),
    });
    expect(messagesOf(c.id)).toEqual([
      expect.objectContaining({ title: 'renamed is down', date: t.clock.now() }),
    ]);
  });

  it('a cron schedule in a DST time zone: the 02:30 fire skipped by spring-forward comes at the jump', async () => {
    const c = await channel();
    // Sat 2026-03-28 12:00 UTC; Europe/Berlin springs forward on Sun 2026-03-29 at 02:00 → 03:00.
    t.clock.set(Date.UTC(2026, 2, 28, 12, 0, 0));
    const h = await create({ appid: c.id, schedule: '30 2 * * *', timezone: 'Europe/Berlin', graceSec: 600 });
    await t.request('GET', pingPath(h.token));
    const jump = Date.UTC(2026, 2, 29, 1, 0, 0); // 03:00 CEST
    expect(await hb(h.id)).toMatchObject({ expectedAt: iso(jump), deadlineAt: iso(jump + 600 * SEC) });
    await advance(jump - t.clock.now() + SEC);
    expect((await hb(h.id)).status).toBe('late');
    await t.request('GET', pingPath(h.token));
    // The next day 02:30 CEST = 00:30 UTC.
    expect((await hb(h.id)).expectedAt).toBe(iso(Date.UTC(2026, 2, 30, 0, 30, 0)));
    await advance(Date.UTC(2026, 2, 30, 0, 40, 1) - t.clock.now());
    expect((await hb(h.id)).status).toBe('down');
    expect(messagesOf(c.id)[0]!.date).toBe(Date.UTC(2026, 2, 30, 0, 40, 0));
  });

  it('test-alert and test-recovery send [Test] messages and change no state, also when paused', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, name: 'Sync', paused: true, priority: 6 });
    const alert = await t.request('POST', `/heartbeat/${h.id}/test-alert`, { token: dev });
    expect(alert.status).toBe(200);
    expect(alert.body).toMatchObject({
      id: expect.any(Number),
      appid: c.id,
      title: '[Test] Sync is down',
      message: 'No ping since never; expected by never (grace 60 s).',
      priority: 6,
      extras: { 'service::source': { kind: 'heartbeat', id: h.id, event: 'test-alert' } },
    });
    const rec = await t.request('POST', `/heartbeat/${h.id}/test-recovery`, { token: dev });
    expect(rec.body).toMatchObject({
      title: '[Test] Sync is up again',
      message: 'Ping received after 0s down.',
      priority: 2,
      extras: { 'service::source': { kind: 'heartbeat', id: h.id, event: 'test-recovery' } },
    });
    expect((await hb(h.id)).status).toBe('paused');
  });

  it('with the daily quota spent the state still changes but no message is created', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await channel(d);
    const h = await create({ appid: c.id, intervalSec: 60, graceSec: 0 }, d);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.id, remainingEvents(ctx, u.id)));
    expect((await t.request('GET', pingPath(h.token, '/fail'))).body).toEqual({ ok: true, status: 'down' });
    await t.request('GET', pingPath(h.token));
    await advance(61 * SEC);
    expect((await hb(h.id, d)).status).toBe('down');
    expect(messagesOf(c.id)).toEqual([]);
  });

  it('a share recipient with send creates a heartbeat on the shared channel; losing send pauses it', async () => {
    const owner = makeUser(t);
    const ownerDev = (await deviceToken(t, owner)).token;
    const friend = makeUser(t);
    const friendDev = (await deviceToken(t, friend)).token;
    const c = await channel(ownerDev);
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: ownerDev,
      json: { email: friend.email, permission: 'send' },
    });
    await t.request('POST', `/share/${share.body.id}/accept`, { token: friendDev });
    const h = await create({ appid: c.id }, friendDev);
    await t.request('GET', pingPath(h.token, '/fail'));
    expect(messagesOf(c.id)).toHaveLength(1);
    await t.request('PUT', `/share/${share.body.id}`, { token: ownerDev, json: { permission: 'view' } });
    expect((await hb(h.id, friendDev)).status).toBe('paused');
    const resume = await t.request('POST', `/heartbeat/${h.id}/resume`, { token: friendDev });
    expect(resume.status).toBe(400);
    expect(resume.body.errorDescription).toBe('appid: no such channel');
    const viaPut = await t.request('PUT', `/heartbeat/${h.id}`, {
      token: friendDev,
      json: { paused: false },
    });
    expect(viaPut.status).toBe(400);
    expect((await hb(h.id, friendDev)).status).toBe('paused');
    const mine = await channel(friendDev);
    const moved = await t.request('PUT', `/heartbeat/${h.id}`, {
      token: friendDev,
      json: { appid: mine.id, paused: false },
    });
    expect(moved.body).toMatchObject({ appid: mine.id, status: 'up', paused: false });
    // The owner does not manage the recipient's heartbeat.
    expect((await t.request('GET', `/heartbeat/${h.id}`, { token: ownerDev })).status).toBe(404);
  });
});

describe('channel health, history and live frames', () => {
  it('channel objects, /status and /event-sources count the heartbeats; every change is a status_changed signal', async () => {
    const c = await channel();
    const signals: number[] = [];
    const off = t.server.ctx.bus.on('channel:status_changed', (e) => signals.push(e.appid));
    const health = async () => {
      const list = (await t.request('GET', '/application', { token: dev })).body;
      const ch = list.find((x: any) => x.id === c.id);
      return [ch.hbTotal, ch.hbAlerting, ch.hbAlertingInfo, ch.hbPending, ch.hbStatus];
    };
    expect(await health()).toEqual([0, 0, 0, 0, 'none']);
    const a = await create({ appid: c.id, name: 'a', intervalSec: 300, graceSec: 60 });
    const b = await create({ appid: c.id, name: 'b', intervalSec: 300, graceSec: 60 });
    await create({ appid: c.id, name: 'p', paused: true });
    expect(await health()).toEqual([2, 0, 0, 2, 'pending']);
    await t.request('GET', pingPath(a.token));
    await t.request('GET', pingPath(b.token));
    expect(await health()).toEqual([2, 0, 0, 0, 'ok']);
    await advance(301 * SEC);
    expect(await health()).toEqual([2, 0, 2, 0, 'degraded']);
    await t.request('GET', pingPath(b.token, '/fail'));
    expect(await health()).toEqual([2, 1, 1, 0, 'alerting']);
    const status = (await t.request('GET', `/application/${c.id}/status`, { token: dev })).body;
    expect(status).toMatchObject({ hbTotal: 2, hbAlerting: 1, hbAlertingInfo: 1, hbStatus: 'alerting' });
    expect(status.alerting.map((x: any) => [x.kind, x.id, x.status])).toEqual([
      ['heartbeat', a.id, 'late'],
      ['heartbeat', b.id, 'down'],
    ]);
    const sources = (await t.request('GET', `/application/${c.id}/event-sources`, { token: dev })).body;
    expect(sources.sources.map((x: any) => [x.kind, x.name, x.status, x.paused])).toEqual([
      ['heartbeat', 'a', 'late', false],
      ['heartbeat', 'b', 'down', false],
      ['heartbeat', 'p', 'paused', true],
    ]);
    expect(JSON.stringify(sources)).not.toContain(a.token.slice(3, 10));
    off();
    expect(signals.filter((id) => id === c.id).length).toBeGreaterThanOrEqual(7);
  });

  it('GET /monitor-history/heartbeat/{id} has the status history; /log lists pings with pingKind, exitCode and body', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 300, graceSec: 0 });
    const created = t.clock.now();
    await advance(60 * SEC);
    await t.request('POST', pingPath(h.token, '/start'));
    await t.request('POST', pingPath(h.token), {
      body: 'all good',
      headers: { 'Content-Type': 'text/plain' },
    });
    await advance(60 * SEC);
    await t.request('POST', pingPath(h.token, '/2'), { json: { fail_reason: 'disk full' } });
    const log = await t.request('GET', `/monitor-history/heartbeat/${h.id}/log`, { token: dev });
    expect(log.status).toBe(200);
    expect(log.body.checks).toEqual([
      {
        id: expect.any(Number),
        at: iso(t.clock.now()),
        ok: false,
        status: 'down',
        responseTimeMs: null,
        error: 'disk full',
        pingKind: 'fail',
        exitCode: 2,
        body: '{"fail_reason":"disk full"}',
      },
      {
        id: expect.any(Number),
        at: iso(created + 60 * SEC),
        ok: true,
        status: 'up',
        responseTimeMs: null,
        pingKind: 'success',
        body: 'all good',
      },
      {
        id: expect.any(Number),
        at: iso(created + 60 * SEC),
        ok: true,
        status: 'new',
        responseTimeMs: null,
        pingKind: 'start',
      },
    ]);
    const failed = t.clock.now();
    await advance(60 * SEC);
    const history = await t.request('GET', `/monitor-history/heartbeat/${h.id}`, { token: dev });
    expect(history.body).toMatchObject({
      kind: 'heartbeat',
      id: h.id,
      name: 'backup',
      status: 'down',
      statusSince: iso(failed),
      uptime: { '24h': 50 },
      responseTime: { avgMs: null, p95Ms: null },
    });
    expect((await t.request('GET', `/monitor-history/heartbeat/${h.id}`, { token: otherDev })).status).toBe(
      404,
    );
  });

  it('/ws?events=1 receives heartbeat:ping, heartbeat:alert and channel:status_changed frames', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, name: 'Live', intervalSec: 300, graceSec: 0 });
    const socket = await openWs(t, '/ws?events=1', dev);
    try {
      await t.request('GET', pingPath(h.token, '/fail'));
      const want = [
        { kind: 'heartbeat:ping', data: { id: h.id, name: 'Live', status: 'down', pingKind: 'fail' } },
        {
          kind: 'heartbeat:alert',
          data: { id: h.id, name: 'Live', event: 'fail', status: 'down', messageId: expect.any(Number) },
        },
        {
          kind: 'channel:status_changed',
          data: expect.objectContaining({ hbAlerting: 1, hbStatus: 'alerting' }),
        },
      ];
      await until(() => socket.frames.filter((f: any) => f.kind !== undefined).length >= 3);
      const frames = socket.frames.filter((f: any) => f.kind !== undefined);
      for (const w of want) expect(frames).toContainEqual({ ...w, appid: c.id, at: expect.any(String) });
      expect(socket.frames).toContainEqual(expect.objectContaining({ title: 'Live failed', appid: c.id }));
    } finally {
      socket.ws.close();
    }
  });
});

describe('sleep and restarts', () => {
  it('a deadline that passed while the host slept gets resume + period + grace instead of an alert', async () => {
    const c = await channel();
    const h = await create({ appid: c.id, intervalSec: 300, graceSec: 60 });
    const down = await create({ appid: c.id, intervalSec: 300, graceSec: 60 });
    await t.request('GET', pingPath(h.token));
    await t.request('GET', pingPath(down.token, '/fail'));
    const from = t.clock.now();
    const gaps: unknown[] = [];
    const off = t.server.ctx.bus.on('clock:gap', (g) => gaps.push(g));
    t.clock.sleep(3_600 * SEC); // the wall clock jumps, the monotonic clock stands still
    await t.server.scheduler.tick();
    off();
    expect(gaps).toEqual([{ from, to: t.clock.now(), reason: 'sleep' }]);
    const resumed = t.clock.now();
    expect(await hb(h.id)).toMatchObject({
      status: 'up',
      expectedAt: iso(resumed + 300 * SEC),
      deadlineAt: iso(resumed + 360 * SEC),
    });
    expect((await hb(down.id)).status).toBe('down');
    expect(messagesOf(c.id).map((m) => m.title)).toEqual(['backup failed']);
    await advance(361 * SEC);
    expect((await hb(h.id)).status).toBe('down');
  });

  it('deadlines live in the database: a restart resumes them; a deadline that passed while the server was down is pushed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-hb-'));
    const own = await startTestServer({ dataDir });
    try {
      const d = (await deviceToken(own)).token;
      const c = await makeChannel(own, d);
      const make = async (name: string) =>
        (
          await own.request('POST', '/heartbeat', {
            token: d,
            json: { appid: c.id, name, intervalSec: 60, graceSec: 0 },
          })
        ).body;
      const kept = await make('kept');
      const pushed = await make('pushed');
      await own.request('GET', pingPath(kept.token));
      const pinged = own.clock.now();
      await own.close();
      // Restart at once: the deadline is still ahead and fires from the database.
      let again = await startTestServer({ dataDir, clock: own.clock });
      try {
        own.clock.advance(61 * SEC);
        await again.server.scheduler.tick();
        const got = await request(again.url, 'GET', `/heartbeat/${kept.id}`, { token: d });
        expect(got.body).toMatchObject({ status: 'down', statusSince: iso(pinged + 60 * SEC) });
        await request(again.url, 'GET', pingPath(pushed.token));
      } finally {
        await again.close();
      }
      // Down for an hour across the deadline: at start the gap pushes it instead of alerting.
      own.clock.advance(3_600 * SEC);
      again = await startTestServer({ dataDir, clock: own.clock });
      try {
        await again.server.scheduler.tick();
        const started = own.clock.now();
        const got = await request(again.url, 'GET', `/heartbeat/${pushed.id}`, { token: d });
        expect(got.body).toMatchObject({
          status: 'up',
          expectedAt: iso(started + 60 * SEC),
          deadlineAt: iso(started + 60 * SEC),
        });
        const titles = again.server.ctx.db
          .all<{ title: string }>('SELECT title FROM messages WHERE channel_id = ? ORDER BY id', [c.id])
          .map((m) => m.title);
        expect(titles).toEqual(['kept is down']);
      } finally {
        await again.close();
      }
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

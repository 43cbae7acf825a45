import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs, until } from './realtime-helpers';

let t: TestServer;
let dev: string;
let otherDev: string;

const SEC = 1000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer({ config: { minIntervalSec: 1 } });
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function source(name = 'web-1') {
  const c = await makeChannel(t, dev);
  const res = await t.request('POST', '/metric-source', { token: dev, json: { name, appid: c.id } });
  return res.body as { id: number; token: string; appid: number };
}

async function alert(sourceId: number, body: Record<string, unknown>) {
  const res = await t.request('POST', `/metric-source/${sourceId}/alerts`, { token: dev, json: body });
  if (res.status !== 200) throw new Error(`alert: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number };
}

async function point(token: string, value: number, tags: Record<string, string> = {}, name = 'cpu') {
  const res = await t.request('POST', `/metric/${token}`, { json: { name, value, tags } });
  expect(res.status).toBe(200);
}

async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

/** A maintenance window over the channel from a second ago for an hour, already in force. */
async function maintenance(appid: number) {
  const now = t.clock.now();
  const w = await t.request('POST', '/maintenance-window', {
    token: dev,
    json: {
      name: 'deploy',
      channelIds: [appid],
      schedule: { type: 'once', startsAt: iso(now - SEC), endsAt: iso(now + 3_600_000) },
    },
  });
  expect(w.status).toBe(200);
  await advance(0);
  return w.body as { id: number };
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

async function sourceStatus(id: number) {
  return (await t.request('GET', `/metric-source/${id}`, { token: dev })).body.status as string;
}

async function alertState(sourceId: number, id: number) {
  return (await t.request('GET', `/metric-source/${sourceId}/alerts/${id}`, { token: dev })).body;
}

describe('alert records', () => {
  it('POST …/alerts creates an alert with its defaults', async () => {
    const s = await source();
    const now = t.clock.now();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90 });
    expect(a).toEqual({
      id: expect.any(Number),
      sourceId: s.id,
      metric: 'cpu',
      tags: {},
      condition: 'above',
      threshold: 90,
      forSec: 0,
      priority: 8,
      message: '',
      enabled: true,
      state: 'ok',
      since: iso(now),
      lastValue: null,
      createdAt: iso(now),
    });
    const list = await t.request('GET', `/metric-source/${s.id}/alerts`, { token: dev });
    expect(list.body).toEqual([a]);
  });

  it('POST …/alerts answers 400 for a missing threshold, a bad condition, and an absent alert without forSec', async () => {
    const s = await source();
    const post = (json: unknown) => t.request('POST', `/metric-source/${s.id}/alerts`, { token: dev, json });
    expect((await post({ metric: 'cpu', condition: 'above' })).body.errorDescription).toBe(
      'threshold: required',
    );
    expect((await post({ metric: 'cpu', condition: 'over', threshold: 1 })).body.errorDescription).toMatch(
      /^condition: /,
    );
    expect((await post({ metric: 'cpu', condition: 'absent' })).body.errorDescription).toBe(
      'forSec: required',
    );
    expect(
      (await post({ metric: 'cpu', condition: 'above', threshold: 1, forSec: 86_401 })).body.errorDescription,
    ).toMatch(/^forSec: /);
    expect((await post({ metric: '1cpu', condition: 'above', threshold: 1 })).body.errorDescription).toMatch(
      /^metric: /,
    );
    expect(
      (await post({ metric: 'cpu', condition: 'above', threshold: 1, message: 'x'.repeat(1001) })).status,
    ).toBe(400);
  });

  it('PUT …/alerts/{aid} changes fields partially; DELETE answers {}; someone else gets 404', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'below', threshold: 1 });
    const put = await t.request('PUT', `/metric-source/${s.id}/alerts/${a.id}`, {
      token: dev,
      json: { priority: 5, message: 'low {{value}}' },
    });
    expect(put.body).toMatchObject({
      condition: 'below',
      threshold: 1,
      priority: 5,
      message: 'low {{value}}',
    });
    const theirs = await t.request('PUT', `/metric-source/${s.id}/alerts/${a.id}`, {
      token: otherDev,
      json: { priority: 5 },
    });
    expect(theirs.status).toBe(404);
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    expect(
      (await t.request('DELETE', `/metric-source/${s.id}/alerts/${a.id}`, { token: read.token })).status,
    ).toBe(403);
    const del = await t.request('DELETE', `/metric-source/${s.id}/alerts/${a.id}`, { token: dev });
    expect(del.body).toEqual({});
    const gone = await t.request('GET', `/metric-source/${s.id}/alerts/${a.id}`, { token: dev });
    expect(gone.status).toBe(404);
    expect(gone.body.errorDescription).toBe('alert not found');
  });
});

describe('alert evaluation', () => {
  it('an above alert with forSec fires after the breach lasts forSec (on the clock) and resolves at a normal point', async () => {
    const s = await source();
    const a = await alert(s.id, {
      metric: 'cpu',
      tags: { host: 'a' },
      condition: 'above',
      threshold: 90,
      forSec: 60,
    });
    await point(s.token, 95, { host: 'b' }); // another series: not this alert's
    await point(s.token, 95, { host: 'a', dc: 'x' });
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    await advance(30 * SEC);
    await point(s.token, 97, { host: 'a', dc: 'x' });
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    const breachStart = t.clock.now() - 30 * SEC;
    await advance(30 * SEC);
    const firing = await alertState(s.id, a.id);
    expect(firing).toMatchObject({ state: 'firing', since: iso(breachStart + 60 * SEC), lastValue: 97 });
    expect(await sourceStatus(s.id)).toBe('firing');
    await advance(10 * SEC);
    await point(s.token, 50, { host: 'a', dc: 'x' });
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    expect(await sourceStatus(s.id)).toBe('ok');
    const msgs = messagesOf(s.appid);
    expect(msgs).toEqual([
      {
        title: 'web-1: cpu above 90',
        message: 'cpu{dc="x",host="a"} is 97 (above 90 for 60 s)',
        priority: 8,
        date: breachStart + 60 * SEC,
        extras: { 'service::source': { kind: 'metric-source', id: s.id, event: 'firing', alertId: a.id } },
        sender_name: 'web-1',
      },
      {
        title: 'web-1: cpu is back to normal',
        message: 'cpu{dc="x",host="a"} is 50',
        priority: 2,
        date: t.clock.now(),
        extras: { 'service::source': { kind: 'metric-source', id: s.id, event: 'resolved', alertId: a.id } },
        sender_name: 'web-1',
      },
    ]);
  });

  it('a below alert without forSec fires at the breaching point with its message template', async () => {
    const s = await source('disk');
    await alert(s.id, {
      metric: 'free',
      condition: 'below',
      threshold: 10,
      priority: 9,
      message: '{{metric}}{{tags}} at {{value}} (< {{threshold}})',
    });
    await point(s.token, 12, { vol: '/' }, 'free');
    await point(s.token, 4.5, { vol: '/' }, 'free');
    await point(s.token, 3, { vol: '/' }, 'free'); // still firing: no second message
    await point(s.token, 11, { vol: '/' }, 'free');
    expect(messagesOf(s.appid).map((m) => [m.title, m.message, m.priority])).toEqual([
      ['disk: free below 10', 'free{vol="/"} at 4.5 (< 10)', 9],
      ['disk: free is back to normal', 'free{vol="/"} is 11', 2],
    ]);
  });

  it('a breach that ends before forSec sends nothing, and a firing alert resolves only when no series breaches', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90, forSec: 60 });
    await point(s.token, 95, { host: 'a' });
    await advance(30 * SEC);
    await point(s.token, 10, { host: 'a' });
    await advance(60 * SEC);
    expect(messagesOf(s.appid)).toEqual([]);
    await point(s.token, 95, { host: 'a' });
    await point(s.token, 96, { host: 'b' });
    await advance(60 * SEC);
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    await point(s.token, 10, { host: 'a' });
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    await point(s.token, 10, { host: 'b' });
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    expect(messagesOf(s.appid).map((m) => m.title)).toEqual([
      'web-1: cpu above 90',
      'web-1: cpu is back to normal',
    ]);
  });

  it('an absent alert fires forSec after the last point (at the deadline) and resolves at the next point', async () => {
    const s = await source('cron');
    const a = await alert(s.id, { metric: 'jobs', condition: 'absent', forSec: 120 });
    await advance(60 * SEC);
    await point(s.token, 1, {}, 'jobs');
    const last = t.clock.now();
    await advance(119 * SEC);
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    await advance(2 * SEC);
    expect(await alertState(s.id, a.id)).toMatchObject({ state: 'firing', since: iso(last + 120 * SEC) });
    expect(await sourceStatus(s.id)).toBe('firing');
    await point(s.token, 2, { q: 'x' }, 'jobs');
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    expect(messagesOf(s.appid).map((m) => [m.title, m.message, m.date])).toEqual([
      ['cron: no data for jobs', 'jobs sent no data for 120 s', last + 120 * SEC],
      ['cron: jobs is back to normal', 'jobs{q="x"} is 2', t.clock.now()],
    ]);
  });

  it('an absent alert counts from its creation when no point ever came, and not while the source is paused', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'beat', condition: 'absent', forSec: 60 });
    await t.request('PUT', `/metric-source/${s.id}`, { token: dev, json: { paused: true } });
    await advance(120 * SEC);
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    await t.request('PUT', `/metric-source/${s.id}`, { token: dev, json: { paused: false } });
    await advance(59 * SEC);
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    await advance(2 * SEC);
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    expect(messagesOf(s.appid).map((m) => m.title)).toEqual(['web-1: no data for beat']);
  });

  it('a disabled alert is not evaluated; enabling starts it over', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 1, enabled: false });
    await point(s.token, 5);
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    await t.request('PUT', `/metric-source/${s.id}/alerts/${a.id}`, { token: dev, json: { enabled: true } });
    await point(s.token, 5);
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    expect(messagesOf(s.appid)).toHaveLength(1);
  });

  it('under a maintenance window an alert fires and resolves without messages', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90 });
    const w = await maintenance(s.appid);
    await point(s.token, 95);
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    await point(s.token, 10);
    expect((await alertState(s.id, a.id)).state).toBe('ok');
    expect(messagesOf(s.appid)).toEqual([]);
    await t.request('DELETE', `/maintenance-window/${w.id}`, { token: dev });
  });

  it('a spent daily quota skips the firing message but the alert still fires', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90 });
    const { consumeEvents, remainingEvents } = await import('../../server/features/quota/service');
    const userId = t.server.ctx.db.first<{ user_id: number }>(
      'SELECT user_id FROM metric_sources WHERE id = ?',
      [s.id],
    )!.user_id;
    t.server.ctx.db.transaction(() =>
      consumeEvents(t.server.ctx, userId, remainingEvents(t.server.ctx, userId)),
    );
    await point(s.token, 95);
    expect((await alertState(s.id, a.id)).state).toBe('firing');
    expect(messagesOf(s.appid)).toEqual([]);
    await advance(86_400_000);
  });
});

describe('live frames', () => {
  it('/ws?events=1 receives metric:alert frames for firing (on a point and on the clock) and resolved; /ws without the flag none', async () => {
    const s = await source('live');
    const now = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90 });
    const later = await alert(s.id, { metric: 'mem', condition: 'above', threshold: 50, forSec: 60 });
    const flagged = await openWs(t, '/ws?events=1', dev);
    const plain = await openWs(t, '/ws', dev);
    try {
      const alertFrames = () => flagged.frames.filter((f: any) => f.kind === 'metric:alert');
      await point(s.token, 95, { host: 'a' });
      await until(() => alertFrames().length >= 1);
      const fired = messagesOf(s.appid);
      expect(alertFrames()[0]).toEqual({
        kind: 'metric:alert',
        appid: s.appid,
        at: iso(t.clock.now()),
        data: {
          id: s.id,
          name: 'live',
          alertId: now.id,
          metric: 'cpu',
          event: 'firing',
          state: 'firing',
          value: 95,
          messageId: expect.any(Number),
        },
      });
      // The frame names the message it follows, and leaves after it on the same socket.
      const messageId = (alertFrames()[0] as { data: { messageId: number } }).data.messageId;
      expect(fired.map((m) => m.title)).toEqual(['live: cpu above 90']);
      const order = flagged.frames.map((f: any) => (f.kind === undefined ? `m${f.id}` : f.kind));
      expect(order.indexOf(`m${messageId}`)).toBeLessThan(order.indexOf('metric:alert'));

      await point(s.token, 60, {}, 'mem');
      await advance(60 * SEC); // the DueSource fires `mem`, dated at breach start + forSec
      await until(() => alertFrames().length >= 2);
      expect(alertFrames()[1]).toMatchObject({
        appid: s.appid,
        at: iso(t.clock.now()),
        data: { alertId: later.id, metric: 'mem', event: 'firing', state: 'firing', value: 60 },
      });

      await point(s.token, 10, { host: 'a' });
      await until(() => alertFrames().length >= 3);
      expect(alertFrames()[2]).toMatchObject({
        data: { alertId: now.id, event: 'resolved', state: 'ok', value: 10, messageId: expect.any(Number) },
      });
      // No frame for points that change nothing.
      await point(s.token, 20, { host: 'a' });
      await point(s.token, 70, {}, 'mem');
      expect(alertFrames()).toHaveLength(3);
      expect(plain.frames.some((f: any) => f.kind !== undefined)).toBe(false);
      expect(plain.frames.length).toBe(3); // the three messages
    } finally {
      flagged.ws.close();
      plain.ws.close();
    }
  });

  it('a transition under a maintenance window is a frame with messageId null; other users see nothing', async () => {
    const s = await source();
    const a = await alert(s.id, { metric: 'cpu', condition: 'above', threshold: 90 });
    const w = await maintenance(s.appid);
    const mine = await openWs(t, '/ws?events=1', dev);
    const other = await openWs(t, '/ws?events=1', otherDev);
    try {
      await point(s.token, 95);
      await until(() => mine.frames.some((f: any) => f.kind === 'metric:alert'));
      expect(mine.frames.filter((f: any) => f.kind === 'metric:alert')).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({ alertId: a.id, event: 'firing', messageId: null }),
        }),
      ]);
      expect(other.frames.some((f: any) => f.kind === 'metric:alert')).toBe(false);
    } finally {
      mine.ws.close();
      other.ws.close();
      await t.request('DELETE', `/maintenance-window/${w.id}`, { token: dev });
    }
  });
});

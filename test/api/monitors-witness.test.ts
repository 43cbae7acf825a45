import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitorNet } from '../../server/features/monitors/kind';
import { OFFLINE_TITLE, ONLINE_TITLE, WITNESS_CACHE_MS } from '../../server/features/monitors/witness';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startFakeHttp } from '../helpers/fake-http';
import { type FakeKind, fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let fake: FakeKind;
let dev: string;
let userId: number;
let online = true;
let probes = 0;

const SEC = 1000;

beforeAll(async () => {
  fake = fakeMonitorKind('fake-monitor');
  t = await startTestServer({ extraFeatures: [fake.feature] });
  dev = (await deviceToken(t)).token;
  userId = t.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [t.admin.email])!.id;
  monitorNet(t.server.ctx).online = async () => {
    probes++;
    return online;
  };
});
afterAll(async () => {
  await t.close();
});

async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

function systemTitles() {
  return t.server.ctx.db
    .all<{ title: string }>(
      'SELECT m.title FROM messages m JOIN channels c ON c.id = m.channel_id WHERE c.user_id = ? AND c.internal = 1 ORDER BY m.id',
      [userId],
    )
    .map((m) => m.title);
}

function titlesOf(appid: number) {
  return t.server.ctx.db
    .all<{ title: string }>('SELECT title FROM messages WHERE channel_id = ? ORDER BY id', [appid])
    .map((m) => m.title);
}

async function statuses(ids: number[]) {
  const out: string[] = [];
  for (const id of ids) out.push((await t.request('GET', `/fake-monitor/${id}`, { token: dev })).body.status);
  return out;
}

describe('connectivity witness', () => {
  it('offline: failing checks of other hosts are unknown with one offline message; online again: one back-online message', async () => {
    const c = await makeChannel(t, dev);
    fake.set('remote', { ok: false, error: 'getaddrinfo ENOTFOUND monitored.test' });
    fake.set('local', { ok: false, error: 'connection refused' });
    online = false;
    const ids: number[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(
        (
          await t.request('POST', '/fake-monitor', {
            token: dev,
            json: { appid: c.id, name: `remote ${i}`, target: 'remote', host: 'monitored.test' },
          })
        ).body.id,
      );
    const local = (
      await t.request('POST', '/fake-monitor', {
        token: dev,
        json: { appid: c.id, name: 'local', target: 'local', host: '127.0.0.1' },
      })
    ).body.id;
    await t.server.scheduler.tick();
    expect(await statuses(ids)).toEqual(ids.map(() => 'unknown'));
    const first = (await t.request('GET', `/fake-monitor/${ids[0]}`, { token: dev })).body;
    expect(first).toMatchObject({
      consecutiveFailures: 0,
      lastError: 'getaddrinfo ENOTFOUND monitored.test',
    });
    // A loopback target is judged whatever the network: down, with its message.
    expect((await statuses([local]))[0]).toBe('down');
    expect(titlesOf(c.id)).toEqual(['local is down']);
    expect(systemTitles()).toEqual([OFFLINE_TITLE]);
    // Twenty failing checks asked the network once (cached).
    expect(probes).toBe(1);
    // Still offline an hour later: no storm, no second notice.
    for (let i = 0; i < 60; i++) await advance(60 * SEC);
    expect(await statuses(ids)).toEqual(ids.map(() => 'unknown'));
    expect(systemTitles()).toEqual([OFFLINE_TITLE]);
    expect(titlesOf(c.id)).toEqual(['local is down']);
    expect(probes).toBeLessThanOrEqual((60 * 60 * SEC) / WITNESS_CACHE_MS + 1);
    // Back online and the target answers: up, one back-online notice, no recovery (nothing was alerted).
    online = true;
    fake.set('remote', { ok: true });
    await advance(60 * SEC);
    expect(await statuses(ids)).toEqual(ids.map(() => 'up'));
    expect(systemTitles()).toEqual([OFFLINE_TITLE, ONLINE_TITLE]);
    expect(titlesOf(c.id)).toEqual(['local is down']);
    for (const id of ids) await t.request('DELETE', `/fake-monitor/${id}`, { token: dev });
  });

  it('online again while the target still fails: the failure counts once the witness says online', async () => {
    const c = await makeChannel(t, dev);
    fake.set('dead', { ok: false, error: 'HTTP 503' });
    online = false;
    // The last verdict (online) is cached for WITNESS_CACHE_MS: let it expire first.
    await advance(WITNESS_CACHE_MS);
    const id = (
      await t.request('POST', '/fake-monitor', {
        token: dev,
        json: { appid: c.id, name: 'dead', target: 'dead', host: 'monitored.test' },
      })
    ).body.id;
    await t.server.scheduler.tick();
    expect((await statuses([id]))[0]).toBe('unknown');
    const notices = systemTitles().length;
    online = true;
    await advance(WITNESS_CACHE_MS);
    await advance(60 * SEC);
    expect((await statuses([id]))[0]).toBe('down');
    expect(titlesOf(c.id)).toEqual(['dead is down']);
    expect(systemTitles().slice(notices)).toEqual([ONLINE_TITLE]);
  });
});

describe('connectivity witness with a real kind', () => {
  it('an http-monitor of a non-loopback name is unknown while offline and down once online', async () => {
    const site = await startFakeHttp();
    try {
      site.on('GET', '/', { status: 500, body: 'broken' });
      monitorNet(t.server.ctx).hosts = new Map([['monitored.test', '127.0.0.1']]);
      const c = await makeChannel(t, dev);
      online = false;
      await advance(WITNESS_CACHE_MS);
      const port = new URL(site.url).port;
      const res = await t.request('POST', '/http-monitor', {
        token: dev,
        json: { appid: c.id, name: 'site', url: `http://monitored.test:${port}/` },
      });
      expect(res.status).toBe(200);
      await t.server.scheduler.tick();
      expect((await t.request('GET', `/http-monitor/${res.body.id}`, { token: dev })).body.status).toBe(
        'unknown',
      );
      expect(titlesOf(c.id)).toEqual([]);
      online = true;
      await advance(WITNESS_CACHE_MS);
      await advance(60 * SEC);
      expect((await t.request('GET', `/http-monitor/${res.body.id}`, { token: dev })).body.status).toBe(
        'down',
      );
      expect(titlesOf(c.id)).toEqual(['site is down']);
    } finally {
      await site.close();
    }
  });
});

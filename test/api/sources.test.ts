import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../server/context';
import { recordCheck, recordStatus, registerHistoryKind } from '../../server/features/history/service';
import type { Feature } from '../../server/features/index';
import {
  hbStatusOf,
  registerChannelHealth,
  registerSourceKind,
  type SourceSummary,
} from '../../server/features/sources/registry';
import { apiToken, deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { makeChannelKey, openWs, until, type WsClient } from './realtime-helpers';

/**
 * A source family that exists only in this test: two kinds (`fake`, `beacon`) kept in memory and
 * registered through the event-sources registry, the history module and a channel health provider,
 * exactly as heartbeats and monitors register. Nothing here knows about heartbeats.
 */
const sources: SourceSummary[] = [];
let summarizeCalls = 0;
const fakeFamily: Feature = {
  name: 'fake-source-family',
  init(ctx) {
    for (const kind of ['fake', 'beacon']) {
      registerHistoryKind(ctx, { kind, upStatuses: ['up', 'late'], downStatuses: ['down'] });
      registerSourceKind(ctx, {
        kind,
        listForChannels: (_ctx, ids) => sources.filter((s) => s.kind === kind && ids.includes(s.appid)),
        find: (_ctx, id) => sources.find((s) => s.kind === kind && s.id === id),
      });
    }
    registerChannelHealth(ctx, {
      summarize(_ctx, ids) {
        summarizeCalls++;
        const out = new Map<number, Record<string, unknown>>();
        for (const id of ids) {
          const mine = sources.filter((s) => s.appid === id && !s.paused);
          const c = {
            hbTotal: mine.length,
            hbAlerting: mine.filter((s) => s.status === 'down').length,
            hbAlertingInfo: mine.filter((s) => s.status === 'late').length,
            hbPending: mine.filter((s) => s.status === 'new').length,
          };
          out.set(id, { ...c, hbStatus: hbStatusOf(c) });
        }
        return out;
      },
    });
  },
};

let t: TestServer;
let ctx: AppContext;
let nextId = 1;

beforeAll(async () => {
  t = await startTestServer({ extraFeatures: [fakeFamily] });
  ctx = t.server.ctx;
});
afterAll(() => t.close());
beforeEach(() => {
  sources.length = 0;
});

function addSource(over: Partial<SourceSummary> & { appid: number; userId: number }): SourceSummary {
  const s: SourceSummary = {
    kind: 'fake',
    id: nextId++,
    name: `source ${nextId}`,
    status: 'up',
    paused: false,
    lastCheckAt: null,
    statusSince: t.clock.now(),
    ...over,
  };
  sources.push(s);
  return s;
}

/** An accepted share of `channelId` with `recipientId`, as the share flow leaves it. */
function shareWith(channelId: number, ownerId: number, recipient: { id: number; email: string }): void {
  ctx.db.transaction(() =>
    ctx.db.run(
      "INSERT INTO shares (channel_id, granted_by, email, recipient_id, permission, status, created_at) VALUES (?, ?, ?, ?, 'send', 'accepted', ?)",
      [channelId, ownerId, recipient.email, recipient.id, t.clock.now()],
    ),
  );
}

async function person() {
  const u = makeUser(t);
  const d = await deviceToken(t, u);
  return { ...u, dev: d.token, deviceId: d.id };
}

/** An owner with a channel tree (parent → child), a recipient of the parent, and a stranger. */
async function world() {
  const owner = await person();
  const friend = await person();
  const stranger = await person();
  const parent = await makeChannel(t, owner.dev, { name: 'parent' });
  const child = await makeChannel(t, owner.dev, { name: 'child', parentId: parent.id });
  shareWith(parent.id, owner.id, friend);
  return { owner, friend, stranger, parent, child };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('GET /application/{id}/status and /event-sources with a registered source family', () => {
  it('GET /application/{id}/status gives the owner health, counts and every alerting source, oldest first', async () => {
    const w = await world();
    const now = t.clock.now();
    const down = addSource({
      appid: w.parent.id,
      userId: w.owner.id,
      status: 'down',
      statusSince: now - 1000,
    });
    const late = addSource({
      appid: w.parent.id,
      userId: w.friend.id,
      status: 'late',
      statusSince: now - 5000,
    });
    addSource({ appid: w.parent.id, userId: w.owner.id, status: 'up' });
    addSource({ appid: w.parent.id, userId: w.owner.id, status: 'paused', paused: true });
    const deep = addSource({
      kind: 'beacon',
      appid: w.child.id,
      userId: w.owner.id,
      status: 'down',
      statusSince: now - 9000,
    });
    const res = await t.request('GET', `/application/${w.parent.id}/status`, { token: w.owner.dev });
    expect(res.status).toBe(200);
    const entry = (s: SourceSummary) => ({
      kind: s.kind,
      id: s.id,
      name: s.name,
      appid: s.appid,
      status: s.status,
      since: iso(s.statusSince),
    });
    expect(res.body).toEqual({
      appid: w.parent.id,
      hbTotal: 3,
      hbAlerting: 1,
      hbAlertingInfo: 1,
      hbPending: 0,
      hbStatus: 'alerting',
      lastActivity: null,
      messageCount: 0,
      channelIds: [w.parent.id],
      alerting: [entry(late), entry(down)],
    });
    const rec = await t.request('GET', `/application/${w.parent.id}/status?recursive=1`, {
      token: w.owner.dev,
    });
    expect(rec.body).toMatchObject({
      hbTotal: 4,
      hbAlerting: 2,
      hbAlertingInfo: 1,
      hbStatus: 'alerting',
      channelIds: [w.parent.id, w.child.id],
      alerting: [entry(deep), entry(late), entry(down)],
    });
  });

  it('GET /application/{id}/event-sources lists every source for the owner by kind then name, without settings', async () => {
    const w = await world();
    const b = addSource({ appid: w.parent.id, userId: w.owner.id, name: 'b', lastCheckAt: t.clock.now() });
    const a = addSource({ appid: w.parent.id, userId: w.friend.id, name: 'a', status: 'new' });
    const beacon = addSource({ kind: 'beacon', appid: w.parent.id, userId: w.owner.id, name: 'z' });
    const deep = addSource({
      appid: w.child.id,
      userId: w.owner.id,
      name: 'c',
      paused: true,
      status: 'paused',
    });
    const entry = (s: SourceSummary) => ({
      kind: s.kind,
      id: s.id,
      name: s.name,
      appid: s.appid,
      status: s.status,
      paused: s.paused,
      lastCheckAt: iso(s.lastCheckAt),
    });
    const res = await t.request('GET', `/application/${w.parent.id}/event-sources`, { token: w.owner.dev });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ appid: w.parent.id, sources: [entry(beacon), entry(a), entry(b)] });
    const rec = await t.request('GET', `/application/${w.parent.id}/event-sources?recursive=1`, {
      token: w.owner.dev,
    });
    expect(rec.body.sources).toEqual([entry(beacon), entry(a), entry(b), entry(deep)]);
  });

  it('GET /application/{id}/status and /event-sources show a share recipient only their own sources', async () => {
    const w = await world();
    addSource({ appid: w.parent.id, userId: w.owner.id, status: 'down' });
    const mine = addSource({ appid: w.parent.id, userId: w.friend.id, status: 'down', name: 'mine' });
    addSource({ appid: w.child.id, userId: w.owner.id, status: 'down' });
    const list = await t.request('GET', `/application/${w.parent.id}/event-sources?recursive=1`, {
      token: w.friend.dev,
    });
    expect(list.body.sources.map((s: { id: number }) => s.id)).toEqual([mine.id]);
    const status = await t.request('GET', `/application/${w.parent.id}/status?recursive=1`, {
      token: w.friend.dev,
    });
    // The channel's health counts every source on it; the list names only the recipient's own.
    expect(status.body).toMatchObject({ hbTotal: 2, hbAlerting: 2, channelIds: [w.parent.id] });
    expect(status.body.alerting.map((s: { id: number }) => s.id)).toEqual([mine.id]);
    for (const path of ['status', 'event-sources'])
      expect(
        (await t.request('GET', `/application/${w.parent.id}/${path}`, { token: w.stranger.dev })).body,
      ).toMatchObject({ errorCode: 404, errorDescription: 'channel not found' });
  });

  it('GET /application/{id}/event-sources with a scoped API token stays inside its scope', async () => {
    const w = await world();
    addSource({ appid: w.parent.id, userId: w.owner.id });
    const deep = addSource({ appid: w.child.id, userId: w.owner.id });
    const scoped = await apiToken(t, { token: w.owner.dev }, { access: 'read', appIds: [w.child.id] });
    expect(
      (await t.request('GET', `/application/${w.parent.id}/event-sources`, { token: scoped.token })).status,
    ).toBe(404);
    const res = await t.request('GET', `/application/${w.child.id}/event-sources?recursive=1`, {
      token: scoped.token,
    });
    expect(res.body.sources.map((s: { id: number }) => s.id)).toEqual([deep.id]);
    const parentOnly = await apiToken(t, { token: w.owner.dev }, { access: 'read', appIds: [w.parent.id] });
    const rec = await t.request('GET', `/application/${w.parent.id}/status?recursive=1`, {
      token: parentOnly.token,
    });
    expect(rec.body).toMatchObject({ channelIds: [w.parent.id], hbTotal: 1 });
  });

  it('GET /application fills hb* of every channel from one provider query per list', async () => {
    const w = await world();
    addSource({ appid: w.child.id, userId: w.owner.id, status: 'new' });
    addSource({ appid: w.parent.id, userId: w.owner.id, status: 'late' });
    summarizeCalls = 0;
    const res = await t.request('GET', '/application', { token: w.owner.dev });
    expect(summarizeCalls).toBe(1);
    const byId = new Map(res.body.map((c: { id: number }) => [c.id, c]));
    expect(byId.get(w.parent.id)).toMatchObject({
      hbTotal: 1,
      hbAlerting: 0,
      hbAlertingInfo: 1,
      hbPending: 0,
      hbStatus: 'degraded',
    });
    expect(byId.get(w.child.id)).toMatchObject({ hbTotal: 1, hbPending: 1, hbStatus: 'pending' });
    const shared = await t.request('GET', '/application', { token: w.friend.dev });
    expect(shared.body.find((c: { id: number }) => c.id === w.parent.id)).toMatchObject({
      hbStatus: 'degraded',
    });
    const put = await t.request('PUT', `/application/${w.child.id}`, {
      token: w.owner.dev,
      json: { description: 'x' },
    });
    expect(put.body).toMatchObject({ hbTotal: 1, hbStatus: 'pending' });
  });
});

describe('GET /monitor-history/{kind}/{id}', () => {
  it('GET /monitor-history/{kind}/{id} answers uptime from time, response times and 90 days', async () => {
    const w = await world();
    const now = t.clock.now();
    const s = addSource({
      appid: w.parent.id,
      userId: w.owner.id,
      status: 'down',
      statusSince: now - 3_600_000,
    });
    recordStatus(ctx, 'fake', s.id, 'up', now - 3 * 3_600_000);
    recordStatus(ctx, 'fake', s.id, 'down', now - 3_600_000);
    recordCheck(ctx, 'fake', s.id, { at: now - 60_000, ok: true, status: 'up', responseTimeMs: 40 });
    recordCheck(ctx, 'fake', s.id, { at: now - 30_000, ok: true, status: 'up', responseTimeMs: 20 });
    const res = await t.request('GET', `/monitor-history/fake/${s.id}`, { token: w.owner.dev });
    expect(res.status).toBe(200);
    const today = new Date(now).toISOString().slice(0, 10);
    expect(res.body).toMatchObject({
      kind: 'fake',
      id: s.id,
      name: s.name,
      status: 'down',
      statusSince: iso(now - 3_600_000),
      uptime: { '24h': 66.666, '7d': 66.666, '30d': 66.666, '90d': 66.666 },
      responseTime: { avgMs: 30, p95Ms: 40 },
    });
    expect(res.body.days).toHaveLength(90);
    expect(res.body.days[89]).toEqual({
      date: today,
      uptime: 66.666,
      status: 'down',
      downSec: 3600,
      avgMs: 30,
    });
    expect(res.body.days[88]).toMatchObject({ uptime: null, status: 'none', downSec: 0, avgMs: null });
    // The open interval counts up to now.
    t.clock.advance(3_600_000);
    const later = await t.request('GET', `/monitor-history/fake/${s.id}`, { token: w.owner.dev });
    expect(later.body.uptime['24h']).toBe(50);
  });

  it('GET /monitor-history/{kind}/{id} answers 404 with the kind noun for others, out of scope and unknown kinds', async () => {
    const w = await world();
    const owners = addSource({ appid: w.parent.id, userId: w.owner.id });
    const friends = addSource({ appid: w.parent.id, userId: w.friend.id });
    const deep = addSource({ kind: 'beacon', appid: w.child.id, userId: w.owner.id });
    const scoped = await apiToken(t, { token: w.owner.dev }, { access: 'read', appIds: [w.parent.id] });
    const get = (path: string, token: string) => t.request('GET', path, { token });
    const notFound = (noun: string) => ({
      error: 'Not Found',
      errorCode: 404,
      errorDescription: `${noun} not found`,
    });
    expect((await get(`/monitor-history/fake/${friends.id}`, w.friend.dev)).status).toBe(200);
    expect((await get(`/monitor-history/fake/${friends.id}/log`, w.owner.dev)).status).toBe(200);
    for (const [path, token] of [
      [`/monitor-history/fake/${owners.id}`, w.friend.dev],
      [`/monitor-history/fake/${owners.id}/log`, w.friend.dev],
      [`/monitor-history/fake/${owners.id}`, w.stranger.dev],
      [`/monitor-history/beacon/${deep.id}`, scoped.token],
      [`/monitor-history/fake/${deep.id}`, w.owner.dev],
      [`/monitor-history/nope/${owners.id}`, w.owner.dev],
      [`/monitor-history/fake/999999`, w.owner.dev],
    ] as const)
      expect((await get(path, token)).body, path).toEqual(notFound('monitor'));
    expect((await get(`/monitor-history/heartbeat/${owners.id}`, w.owner.dev)).body).toEqual(
      notFound('heartbeat'),
    );
    expect((await get(`/monitor-history/beacon/${deep.id}`, w.owner.dev)).status).toBe(200);
    const key = makeChannelKey(t, w.parent.id, { canRead: true });
    expect((await get(`/monitor-history/fake/${owners.id}`, key.token)).status).toBe(403);
  });

  it('GET /monitor-history/{kind}/{id}/log pages newest first exactly like GET /message', async () => {
    const w = await world();
    const s = addSource({ appid: w.parent.id, userId: w.owner.id });
    const now = t.clock.now();
    recordCheck(ctx, 'fake', s.id, { at: now - 3000, ok: true, status: 'up', responseTimeMs: 12 });
    recordCheck(ctx, 'fake', s.id, {
      at: now - 2000,
      ok: false,
      status: 'down',
      error: 'timeout',
      extra: { pingKind: 'fail', exitCode: 3 },
    });
    recordCheck(ctx, 'fake', s.id, { at: now - 1000, ok: true, status: 'up' });
    const first = await t.request('GET', `/monitor-history/fake/${s.id}/log?limit=2`, { token: w.owner.dev });
    expect(first.status).toBe(200);
    const [newest, failed] = first.body.checks;
    expect(newest).toEqual({
      id: expect.any(Number),
      at: iso(now - 1000),
      ok: true,
      status: 'up',
      responseTimeMs: null,
    });
    expect(failed).toEqual({
      id: newest.id - 1,
      at: iso(now - 2000),
      ok: false,
      status: 'down',
      responseTimeMs: null,
      error: 'timeout',
      pingKind: 'fail',
      exitCode: 3,
    });
    expect(first.body.paging).toEqual({
      size: 2,
      limit: 2,
      since: failed.id,
      next: `${t.url}/monitor-history/fake/${s.id}/log?limit=2&since=${failed.id}`,
    });
    const second = await t.request('GET', first.body.paging.next.slice(t.url.length), { token: w.owner.dev });
    expect(second.body).toEqual({
      paging: { size: 1, limit: 2 },
      checks: [{ id: failed.id - 1, at: iso(now - 3000), ok: true, status: 'up', responseTimeMs: 12 }],
    });
    for (const q of ['limit=0', 'limit=201', 'since=-1', 'limit=x'])
      expect(
        (await t.request('GET', `/monitor-history/fake/${s.id}/log?${q}`, { token: w.owner.dev })).status,
      ).toBe(400);
  });
});

describe('live service frames and status signals', () => {
  const sockets: WsClient[] = [];
  const ws = async (path: string, token: string) => {
    const c = await openWs(t, path, token);
    sockets.push(c);
    return c;
  };
  afterAll(() => {
    for (const c of sockets) c.ws.terminate();
  });

  it('/ws?events=1 gets {kind, appid, at, data} service frames; /ws without the flag and /stream never do', async () => {
    const w = await world();
    const muted = await deviceToken(t, w.owner, 'muted');
    ctx.db.transaction(() =>
      ctx.db.run('INSERT INTO device_mutes (device_id, channel_id, created_at) VALUES (?, ?, ?)', [
        muted.id,
        w.parent.id,
        t.clock.now(),
      ]),
    );
    const flagged = await ws('/ws?events=1', w.owner.dev);
    const plain = await ws('/ws', w.owner.dev);
    const other = await ws('/ws?events=true', w.owner.dev);
    const legacy = await ws('/stream?events=1', w.owner.dev);
    const friend = await ws('/ws?events=1', w.friend.dev);
    const stranger = await ws('/ws?events=1', w.stranger.dev);
    const mutedWs = await ws('/ws?events=1', muted.token);
    const at = t.clock.now() - 5000;
    ctx.bus.emit('source:event', {
      appid: w.parent.id,
      kind: 'heartbeat:ping',
      data: { id: 4, name: 'backup', status: 'up', pingKind: 'success' },
      at,
    });
    // A message after it: every socket that may see the channel gets it, in order after any frame.
    const m = await sendMessage(t, w.parent.token, { message: 'after' });
    const receivers = [flagged, plain, other, legacy, friend];
    await until(() => receivers.every((c) => c.frames.some((f) => (f as { id?: number }).id === m.id)));
    expect(flagged.frames[0]).toEqual({
      kind: 'heartbeat:ping',
      appid: w.parent.id,
      at: iso(at),
      data: { id: 4, name: 'backup', status: 'up', pingKind: 'success' },
    });
    expect(friend.frames[0]).toEqual(flagged.frames[0]);
    expect(flagged.frames).toHaveLength(2);
    for (const c of [plain, other, legacy]) {
      expect(c.frames).toHaveLength(1);
      expect(c.frames[0]).toMatchObject({ id: m.id, message: 'after' });
      expect(c.frames[0]).not.toHaveProperty('kind');
    }
    expect(await stranger.silentFor(50)).toBe(true);
    expect(stranger.frames).toEqual([]);
    expect(mutedWs.frames).toEqual([]);
  });

  it('/ws?events=1 gets channel:status_changed with the health fields; a channel key socket with the flag too', async () => {
    const w = await world();
    addSource({ appid: w.parent.id, userId: w.owner.id, status: 'down' });
    const flagged = await ws('/ws?events=1', w.owner.dev);
    const key = makeChannelKey(t, w.parent.id, { canRead: true });
    const keyWs = await ws('/ws?events=1', key.token);
    const plain = await ws('/ws', w.owner.dev);
    ctx.bus.emit('channel:status_changed', { appid: w.parent.id, userIds: [w.owner.id] });
    const frame = {
      kind: 'channel:status_changed',
      appid: w.parent.id,
      at: iso(t.clock.now()),
      data: { hbTotal: 1, hbAlerting: 1, hbAlertingInfo: 0, hbPending: 0, hbStatus: 'alerting' },
    };
    expect(await flagged.next()).toEqual(frame);
    expect(await keyWs.next()).toEqual(frame);
    expect(await plain.silentFor(50)).toBe(true);
  });
});

/** An SSE stream whose text accumulates as it arrives. */
async function openSse(token: string) {
  const ac = new AbortController();
  const res = await fetch(`${t.url}/stream?token=${token}`, { signal: ac.signal });
  let text = '';
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {
      // aborted
    }
  })();
  await until(() => text.includes('event: connected'));
  return { text: () => text, abort: () => ac.abort() };
}

describe('GET /stream channel:status_changed coalescing', () => {
  it('GET /stream sends channel:status_changed at most once per channel per second, the rest as one when the second is up', async () => {
    const w = await world();
    const s = await openSse(w.owner.dev);
    try {
      const status = (appid: number) =>
        s.text().split(`event: channel:status_changed\ndata: {"appid":${appid}}\n\n`).length - 1;
      let marks = 0;
      /** share:changed is never coalesced: once it arrived, everything emitted before it has too. */
      const settle = async () => {
        marks++;
        ctx.bus.emit('share:changed', { appid: -marks, userIds: [w.owner.id] });
        await until(() => s.text().includes(`data: {"appid":${-marks}}`));
      };
      const emit = (appid: number) =>
        ctx.bus.emit('channel:status_changed', { appid, userIds: [w.owner.id] });
      emit(w.parent.id);
      emit(w.parent.id);
      emit(w.parent.id);
      emit(w.child.id);
      await settle();
      expect(status(w.parent.id)).toBe(1);
      expect(status(w.child.id)).toBe(1);
      t.clock.advance(999);
      await settle();
      expect(status(w.parent.id)).toBe(1);
      t.clock.advance(1);
      await until(() => status(w.parent.id) === 2);
      await settle();
      expect(status(w.child.id)).toBe(1);
      // Nothing pending: a later one goes out at once, and a quiet second sends nothing extra.
      t.clock.advance(5000);
      await settle();
      expect(status(w.parent.id)).toBe(2);
      emit(w.parent.id);
      await settle();
      expect(status(w.parent.id)).toBe(3);
    } finally {
      s.abort();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLOSE, PING_SLICE } from '../../server/realtime/hub';
import { deviceToken, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  emitMessage,
  hub,
  makeChannel,
  makeChannelKey,
  openWs,
  rawUpgrade,
  until,
  type WsClient,
} from './realtime-helpers';

// The live hub (spec "Events", architecture "Live delivery"): who sees which message, and when sockets go.
describe('live hub', () => {
  let t: TestServer;
  const open: WsClient[] = [];
  const ws = async (path: string, token: string) => {
    const c = await openWs(t, path, token);
    open.push(c);
    return c;
  };

  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.ws.terminate();
    await t.close();
  });

  it('/ws pushes the whole Message frame to the owner device when a message is created', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const channel = makeChannel(t, owner.id);
    const c = await ws('/ws', dev.token);
    const m = emitMessage(t, channel, owner.id, {
      extras: { 'client::display': { contentType: 'text/markdown' } },
    });
    expect(await c.next()).toEqual({
      id: m.id,
      appid: channel,
      message: 'disk almost full',
      title: 'backup',
      priority: 5,
      date: '2026-01-15T12:00:00.000Z',
      extras: { 'client::display': { contentType: 'text/markdown' } },
      senderName: 'cron',
    });
    emitMessage(t, channel, owner.id);
    expect(Object.keys((await c.next()) as object)).toEqual([
      'id',
      'appid',
      'message',
      'title',
      'priority',
      'date',
      'senderName',
    ]);
  });

  it('/stream upgrade pushes the older protocol Message (no senderName) when a message is created', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const channel = makeChannel(t, owner.id);
    const legacy = await ws('/stream', dev.token);
    const modern = await ws('/ws', dev.token);
    const m = emitMessage(t, channel, owner.id, { title: '' });
    expect(await legacy.next()).toEqual({
      id: m.id,
      appid: channel,
      message: 'disk almost full',
      title: '',
      priority: 5,
      date: '2026-01-15T12:00:00.000Z',
    });
    expect(await modern.next()).toMatchObject({ id: m.id, senderName: 'cron' });
  });

  it('/ws delivers only to sockets allowed to see the channel when several users are connected', async () => {
    const owner = makeUser(t);
    const stranger = makeUser(t);
    const recipient = makeUser(t);
    const pending = makeUser(t);
    const channel = makeChannel(t, owner.id);
    const other = makeChannel(t, owner.id, 'other');
    const now = t.clock.now();
    const db = t.server.ctx.db;
    db.transaction(() => {
      for (const [u, status] of [
        [recipient, 'accepted'],
        [pending, 'pending'],
      ] as const)
        db.run(
          "INSERT INTO shares (channel_id, granted_by, email, recipient_id, permission, status, created_at) VALUES (?, ?, ?, ?, 'view', ?, ?)",
          [channel, owner.id, u.email, u.id, status, now],
        );
    });
    const readKey = makeChannelKey(t, channel, { canRead: true });
    const otherKey = makeChannelKey(t, other, { canRead: true });
    const sockets = {
      owner: await ws('/ws', (await deviceToken(t, owner)).token),
      stranger: await ws('/ws', (await deviceToken(t, stranger)).token),
      recipient: await ws('/ws', (await deviceToken(t, recipient)).token),
      pending: await ws('/ws', (await deviceToken(t, pending)).token),
      key: await ws('/ws', readKey.token),
      otherKey: await ws('/ws', otherKey.token),
    };
    const m = emitMessage(t, channel, owner.id);
    for (const c of [sockets.owner, sockets.recipient, sockets.key])
      expect(await c.next()).toMatchObject({ id: m.id });
    for (const c of [sockets.stranger, sockets.pending, sockets.otherKey])
      expect(await c.silentFor(100)).toBe(true);
  });

  it('/ws skips a device that mutes the channel when the owner has another device', async () => {
    const owner = makeUser(t);
    const muting = await deviceToken(t, owner, 'muting');
    const plain = await deviceToken(t, owner, 'plain');
    const channel = makeChannel(t, owner.id);
    const other = makeChannel(t, owner.id, 'other');
    const db = t.server.ctx.db;
    db.transaction(() =>
      db.run('INSERT INTO device_mutes (device_id, channel_id, created_at) VALUES (?, ?, ?)', [
        muting.id,
        channel,
        t.clock.now(),
      ]),
    );
    const a = await ws('/ws', muting.token);
    const b = await ws('/ws', plain.token);
    const m = emitMessage(t, channel, owner.id);
    expect(await b.next()).toMatchObject({ id: m.id });
    expect(await a.silentFor(100)).toBe(true);
    const n = emitMessage(t, other, owner.id);
    expect(await a.next()).toMatchObject({ id: n.id, appid: other });
  });

  it('a share recipient mutes a shared channel on one device through the API, and that device stops receiving it', async () => {
    const owner = makeUser(t);
    const ownerDev = await deviceToken(t, owner, 'owner');
    const recipient = makeUser(t);
    const phone = await deviceToken(t, recipient, 'phone');
    const laptop = await deviceToken(t, recipient, 'laptop');
    const channel = makeChannel(t, owner.id);
    const share = await t.request('POST', `/application/${channel}/share`, {
      token: ownerDev.token,
      json: { email: recipient.email, permission: 'view' },
    });
    expect(share.status).toBe(200);
    // Not accepted yet: the recipient does not receive the channel, so it cannot be muted.
    const early = await t.request('POST', '/device/me/subscriptions', {
      token: phone.token,
      json: { channelId: channel },
    });
    expect(early.status).toBe(400);
    expect(early.body.errorDescription).toBe(`channel ${channel} not found`);
    expect((await t.request('POST', `/share/${share.body.id}/accept`, { token: phone.token })).status).toBe(
      200,
    );

    const muted = await t.request('POST', '/device/me/subscriptions', {
      token: phone.token,
      json: { channelId: channel },
    });
    expect(muted.body).toEqual({ channelIds: [channel] });
    const p = await ws('/ws', phone.token);
    const l = await ws('/ws', laptop.token);
    const m = emitMessage(t, channel, owner.id);
    expect(await l.next()).toMatchObject({ id: m.id });
    expect(await p.silentFor(100)).toBe(true);

    // The share ends; the kept mute can still be sent back as it is (the UI saves the whole list), or taken back.
    expect(
      (await t.request('POST', '/share/leave', { token: phone.token, json: { appid: channel } })).status,
    ).toBe(200);
    const again = await t.request('PUT', `/client/${phone.id}/subscriptions`, {
      token: phone.token,
      json: { channelIds: [channel] },
    });
    expect(again.body).toEqual({ channelIds: [channel] });
    const unmuted = await t.request('DELETE', `/device/me/subscriptions/${channel}`, { token: phone.token });
    expect(unmuted.body).toEqual({ channelIds: [] });
    const gone = await t.request('POST', '/device/me/subscriptions', {
      token: phone.token,
      json: { channelId: channel },
    });
    expect(gone.status).toBe(400);
  });

  it('/ws keeps commit order when many messages are created at once', async () => {
    const owner = makeUser(t);
    const channel = makeChannel(t, owner.id);
    const c = await ws('/ws', (await deviceToken(t, owner)).token);
    const ids = Array.from({ length: 50 }, () => emitMessage(t, channel, owner.id).id);
    await until(() => c.frames.length === 50);
    expect(c.frames.map((f) => (f as { id: number }).id)).toEqual(ids);
  });

  it('/ws closes the sockets of a device with 4401 when the device is invalidated', async () => {
    const owner = makeUser(t);
    const gone = await deviceToken(t, owner, 'gone');
    const stays = await deviceToken(t, owner, 'stays');
    const a1 = await ws('/ws', gone.token);
    const a2 = await ws('/stream', gone.token);
    const b = await ws('/ws', stays.token);
    expect((await t.request('GET', '/client/online', { token: stays.token })).body).toEqual([
      gone.id,
      stays.id,
    ]);
    t.server.ctx.bus.emit('device:invalidated', { userId: owner.id, deviceId: gone.id, reason: 'revoked' });
    expect(await a1.closed).toEqual({
      code: CLOSE.CREDENTIAL_INVALID,
      reason: 'device token no longer valid',
    });
    expect((await a2.closed).code).toBe(4401);
    expect(b.ws.readyState).toBe(b.ws.OPEN);
    expect((await t.request('GET', '/client/online', { token: stays.token })).body).toEqual([stays.id]);
  });

  it('/ws closes every device socket but the kept one when all devices of a user are signed out', async () => {
    const owner = makeUser(t);
    const d1 = await deviceToken(t, owner, 'one');
    const d2 = await deviceToken(t, owner, 'two');
    const keep = await deviceToken(t, owner, 'keep');
    const [s1, s2, sk] = [await ws('/ws', d1.token), await ws('/ws', d2.token), await ws('/ws', keep.token)];
    t.server.ctx.bus.emit('user:devices_invalidated', { userId: owner.id, keepDeviceId: keep.id });
    expect((await s1.closed).code).toBe(4401);
    expect((await s2.closed).code).toBe(4401);
    expect(sk.ws.readyState).toBe(sk.ws.OPEN);
  });

  it('/ws closes a channel-key socket when its key is invalidated', async () => {
    const owner = makeUser(t);
    const channel = makeChannel(t, owner.id);
    const k1 = makeChannelKey(t, channel, { canRead: true });
    const k2 = makeChannelKey(t, channel, { canRead: true });
    const [s1, s2] = [await ws('/ws', k1.token), await ws('/ws', k2.token)];
    t.server.ctx.bus.emit('token:invalidated', { kind: 'app', tokenId: k1.id });
    expect((await s1.closed).code).toBe(4401);
    expect(s2.ws.readyState).toBe(s2.ws.OPEN);
  });

  it('/ws closes a socket on the next ping round when its device was revoked without an event', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const c = await ws('/ws', dev.token);
    const db = t.server.ctx.db;
    db.transaction(() => db.run("UPDATE devices SET status = 'revoked' WHERE id = ?", [dev.id]));
    hub(t).pingRound();
    expect((await c.closed).code).toBe(4401);
  });

  it('/ws destroys a socket that does not answer pings when two ping rounds pass', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const healthy = await ws('/ws', dev.token);
    const dead = await rawUpgrade(t, '/ws', dev.token);
    await until(() => hub(t).size().sockets === 2);
    hub(t).pingRound();
    await new Promise((r) => setTimeout(r, 50)); // the healthy client answers with a pong
    hub(t).pingRound();
    await until(() => hub(t).size().sockets === 1);
    dead.destroy();
    expect(hub(t).counters.deadPeers).toBe(1);
    expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
  });

  it('a ping round over more sockets than a slice pings them a slice per turn of the event loop, every one', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    hub(t).configure({ maxPerToken: 1_000 });
    const n = PING_SLICE + 8;
    const clients = await Promise.all(Array.from({ length: n }, () => ws('/ws', dev.token)));
    let pinged = 0;
    for (const c of clients) c.ws.once('ping', () => pinged++);
    const before = hub(t).counters.pings;
    const round = hub(t).pingRound();
    // One slice at once; the rest after the event loop has had its turn (a message could go out now).
    expect(hub(t).counters.pings - before).toBe(PING_SLICE);
    expect(hub(t).pingRound()).toBe(round); // a round still going is not doubled
    await round;
    expect(hub(t).counters.pings - before).toBe(n);
    await until(() => pinged === n);
    for (const c of clients) expect(c.ws.readyState).toBe(c.ws.OPEN);
  });

  it('a later slice of a ping round that throws is logged and ends the round; the next round runs whole', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    hub(t).configure({ maxPerToken: 1_000 });
    const n = PING_SLICE * 2 + 8;
    await Promise.all(Array.from({ length: n }, () => ws('/ws', dev.token)));
    const h = hub(t) as unknown as {
      pingOne: (...a: unknown[]) => void;
      deviceSockets: Map<unknown, Set<{ alive: boolean }>>;
    };
    const pingOne = h.pingOne;
    let calls = 0;
    h.pingOne = function (this: unknown, ...a: unknown[]) {
      if (++calls === PING_SLICE + 1) throw new Error('slice failure for the test');
      return pingOne.apply(this, a);
    };
    try {
      const before = hub(t).counters.pings;
      await hub(t).pingRound(); // settles: the failure does not leave it pending
      expect(hub(t).counters.pings - before).toBe(PING_SLICE); // the third slice never ran
      expect(t.log.lines.some((l) => l.includes('a ping round failed'))).toBe(true);
    } finally {
      delete (h as { pingOne?: unknown }).pingOne; // the prototype's again
    }
    // The clients answer the first slice's pings; then the next round pings every socket, none dead.
    await until(() => [...h.deviceSockets.values()].every((set) => [...set].every((s) => s.alive)));
    const before = hub(t).counters.pings;
    await hub(t).pingRound();
    expect(hub(t).counters.pings - before).toBe(n);
    expect(hub(t).counters.deadPeers).toBe(0);
  });

  it('/ws pings on its interval when the interval is shortened', async () => {
    const owner = makeUser(t);
    const c = await ws('/ws', (await deviceToken(t, owner)).token);
    let pings = 0;
    c.ws.on('ping', () => pings++);
    // Short, but long enough for the client's pong to come back in time on a loaded machine (a socket
    // that misses one round is dropped as a dead peer, which a 20 ms interval provoked under load).
    hub(t).configure({ pingIntervalMs: 250 });
    await until(() => pings >= 2, 5_000);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
  });

  it('/ws cuts off a socket with 1013 when it stops reading and its buffer passes the bound', async () => {
    const owner = makeUser(t);
    const dev = await deviceToken(t, owner);
    const channel = makeChannel(t, owner.id);
    const reader = await ws('/ws', dev.token);
    const stuck = await rawUpgrade(t, '/ws', dev.token);
    hub(t).configure({ maxBufferedBytes: 64 * 1024 });
    const big = 'x'.repeat(32 * 1024);
    // Loopback socket buffers (kernel send + receive, autotuned) can hold 10 MB or more before anything
    // stays in the server's own buffer: send up to 128 MB, stopping as soon as the bound trips. Each
    // message waits until the reading client has it, so only the stuck socket ever falls behind.
    for (let i = 0; i < 4000 && hub(t).counters.slowConsumers === 0; i++) {
      emitMessage(t, channel, owner.id, { message: big });
      await until(() => reader.frames.length > i || hub(t).counters.slowConsumers > 0, 5_000);
    }
    expect(hub(t).counters.slowConsumers).toBe(1);
    await until(() => hub(t).size().sockets === 1, 5_000);
    stuck.destroy();
    expect(reader.ws.readyState).toBe(reader.ws.OPEN);
    expect(reader.frames.length).toBeGreaterThan(0);
  });

  it('/ws sockets are closed with 1001 when the server stops', async () => {
    const owner = makeUser(t);
    const c = await ws('/ws', (await deviceToken(t, owner)).token);
    await t.close();
    expect(await c.closed).toEqual({ code: CLOSE.GOING_AWAY, reason: 'server shutting down' });
  });
});

// The same paths driven only through the other families' endpoints, as a client would.
describe('live delivery through the real endpoints', () => {
  let t: TestServer;
  const open: WsClient[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.ws.terminate();
    await t.close();
  });
  const ws = async (path: string, token: string) => {
    const c = await openWs(t, path, token);
    open.push(c);
    return c;
  };

  it('POST /message reaches owner devices, accepted recipients and read keys, not muting devices or strangers', async () => {
    const owner = makeUser(t, { plan: 'pro' });
    const recipient = makeUser(t);
    const stranger = makeUser(t);
    const a = await deviceToken(t, owner, 'a');
    const b = await deviceToken(t, owner, 'b');
    const r = await deviceToken(t, recipient, 'r');
    const s = await deviceToken(t, stranger, 's');
    const app = await t.request('POST', '/application', { token: a.token, json: { name: 'deploys' } });
    expect(app.status).toBe(200);
    const appid: number = app.body.id;
    const readKey = await t.request('POST', `/application/${appid}/token`, {
      token: a.token,
      json: { name: 'dashboard', canRead: true, canWrite: false },
    });
    expect(readKey.status).toBe(200);
    const mute = await t.request('PUT', `/client/${b.id}/subscriptions`, {
      token: a.token,
      json: { channelIds: [appid] },
    });
    expect(mute.status).toBe(200);
    const share = await t.request('POST', `/application/${appid}/share`, {
      token: a.token,
      json: { email: recipient.email, permission: 'view' },
    });
    expect(share.status).toBe(200);
    expect((await t.request('POST', `/share/${share.body.id}/accept`, { token: r.token })).status).toBe(200);

    const [sa, sb, sr, ss, sk] = [
      await ws('/ws', a.token),
      await ws('/ws', b.token),
      await ws('/stream', r.token),
      await ws('/ws', s.token),
      await ws('/ws', readKey.body.token),
    ];
    const sent = await t.request('POST', '/message', {
      token: app.body.token,
      json: {
        title: 'v2',
        message: 'deployed',
        priority: 4,
        extras: { 'client::display': { contentType: 'text/plain' } },
      },
    });
    expect(sent.status).toBe(200);
    expect(await sa.next()).toEqual(sent.body);
    expect(await sk.next()).toEqual(sent.body);
    expect(await sr.next()).toEqual({
      id: sent.body.id,
      appid,
      message: 'deployed',
      title: 'v2',
      priority: 4,
      date: sent.body.date,
      extras: { 'client::display': { contentType: 'text/plain' } },
    });
    expect(await sb.silentFor(100)).toBe(true);
    expect(await ss.silentFor(0)).toBe(true);

    // Revoking the key and suspending a device close their sockets at once.
    expect((await t.request('DELETE', `/token/${readKey.body.id}`, { token: a.token })).status).toBe(200);
    expect((await sk.closed).code).toBe(CLOSE.CREDENTIAL_INVALID);
    const suspend = await t.request('PUT', `/client/${b.id}/status`, {
      token: a.token,
      json: { status: 'suspended' },
    });
    expect(suspend.status).toBe(200);
    expect((await sb.closed).code).toBe(CLOSE.CREDENTIAL_INVALID);
    expect((await t.request('GET', '/client/online', { token: a.token })).body).toEqual([a.id]);
  });
});

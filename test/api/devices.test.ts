import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BusEvents } from '../../server/lib/bus';
import { apiToken, deviceToken, insertChannelKeyRow, insertChannelRow, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

function captureInvalidations(s: TestServer) {
  const events: BusEvents['device:invalidated'][] = [];
  const off = s.server.ctx.bus.on('device:invalidated', (e) => events.push(e));
  return { events, off };
}

describe('GET and POST /client', () => {
  test('GET /client lists the devices with masked tokens and marks the current one', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u, 'a');
    const b = await deviceToken(t, u, 'b');
    const res = await t.request('GET', '/client', {
      token: b.token,
      headers: { 'User-Agent': 'test-agent' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: a.id,
        name: 'a',
        token: `${a.token.slice(0, 3)}${'*'.repeat(16)}${a.token.slice(-4)}`,
        lastUsed: '2026-01-15T12:00:00.000Z',
        createdAt: expect.any(String),
        status: 'active',
        platform: '',
        lastIp: expect.any(String),
        lastUserAgent: expect.any(String),
        current: false,
      },
      expect.objectContaining({ id: b.id, name: 'b', current: true }),
    ]);
  });

  test('POST /client answers 402 device_limit_exceeded at the plan limit', async () => {
    const u = makeUser(t);
    for (let i = 0; i < 3; i++) await deviceToken(t, u);
    const res = await t.request('POST', '/client', { basic: u, json: { name: 'fourth' } });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      error: 'Payment Required',
      errorCode: 'device_limit_exceeded',
      errorDescription: 'device limit of your plan reached',
    });
  });

  test('POST /client answers 400 without a name and 403 for a channel key', async () => {
    const u = makeUser(t);
    expect((await t.request('POST', '/client', { basic: u, json: {} })).status).toBe(400);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    expect((await t.request('POST', '/client', { token: key, json: { name: 'x' } })).status).toBe(403);
    expect((await t.request('GET', '/client', { token: key })).status).toBe(403);
  });
});

describe('PUT /client/{id} and DELETE', () => {
  test('PUT /client/{id} renames and 404 for another user device', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u, 'old');
    const res = await t.request('PUT', `/client/${d.id}`, { token: d.token, json: { name: 'new' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: d.id, name: 'new', current: true });
    const other = await deviceToken(t, makeUser(t));
    const foreign = await t.request('PUT', `/client/${d.id}`, { token: other.token, json: { name: 'x' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.errorDescription).toBe('client not found');
  });

  test('PUT /client/{id} answers 403 for an API token, read-only or write: managing devices needs a device', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    for (const access of ['read', 'write'] as const) {
      const api = await apiToken(t, d, { access });
      const denied = await t.request('PUT', `/client/${d.id}`, { token: api.token, json: { name: 'x' } });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        error: 'Forbidden',
        errorCode: 403,
        errorDescription: 'API tokens cannot do this; sign in with a device',
      });
    }
    expect((await t.request('PUT', `/client/${d.id}`, { token: d.token, json: { name: 'x' } })).status).toBe(
      200,
    );
  });

  test('DELETE /client/{id} deletes and its token gets 401 at once', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u);
    const b = await deviceToken(t, u);
    const cap = captureInvalidations(t);
    const res = await t.request('DELETE', `/client/${b.id}`, { token: a.token });
    cap.off();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(cap.events).toEqual([{ userId: u.id, deviceId: b.id, reason: 'deleted' }]);
    expect((await t.request('GET', '/client', { token: b.token })).status).toBe(401);
    expect((await t.request('DELETE', `/client/${b.id}`, { token: a.token })).status).toBe(404);
  });

  test('DELETE /client deletes every device but the current one', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u);
    const b = await deviceToken(t, u);
    const c = await deviceToken(t, u);
    const res = await t.request('DELETE', '/client', { token: a.token });
    expect(res.body).toEqual({ deleted: 2 });
    expect(
      (await t.request('GET', '/client', { token: a.token })).body.map((d: { id: number }) => d.id),
    ).toEqual([a.id]);
    for (const x of [b, c]) expect((await t.request('GET', '/client', { token: x.token })).status).toBe(401);
  });
});

describe('POST /client/{id}/reconnect', () => {
  test('POST /client/{id}/reconnect returns a new token once and the old one dies', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const cap = captureInvalidations(t);
    const res = await t.request('POST', `/client/${d.id}/reconnect`, { basic: u });
    cap.off();
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^C[A-Za-z0-9]{22}$/);
    expect(res.body.token).not.toBe(d.token);
    expect(cap.events).toEqual([{ userId: u.id, deviceId: d.id, reason: 'rotated' }]);
    expect((await t.request('GET', '/client', { token: d.token })).status).toBe(401);
    const list = await t.request('GET', '/client', { token: res.body.token });
    expect(list.body[0].token).toBe(
      `${res.body.token.slice(0, 3)}${'*'.repeat(16)}${res.body.token.slice(-4)}`,
    );
  });

  test('POST /client/{id}/reconnect replaces the cookie of a browser reconnecting itself', async () => {
    const login = await t.request('POST', '/auth/local/login', { basic: t.admin });
    const res = await t.request('POST', `/client/${login.body.id}/reconnect`, {
      token: login.body.token,
      via: 'cookie',
    });
    expect(res.headers.get('set-cookie')).toContain(`service-client-token=${res.body.token};`);
  });

  test('POST /client/{id}/reconnect answers 404 for another user device', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('POST', `/client/${d.id}/reconnect`, { basic: t.admin });
    expect(res.status).toBe(404);
  });
});

describe('PUT /client/{id}/status', () => {
  test('PUT /client/{id}/status suspends and reactivates a device', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u);
    const b = await deviceToken(t, u);
    const cap = captureInvalidations(t);
    const s = await t.request('PUT', `/client/${b.id}/status`, {
      token: a.token,
      json: { status: 'suspended' },
    });
    expect(s.status).toBe(200);
    expect(s.body.status).toBe('suspended');
    expect(cap.events).toEqual([{ userId: u.id, deviceId: b.id, reason: 'suspended' }]);
    expect((await t.request('GET', '/client', { token: b.token })).status).toBe(401);
    const back = await t.request('PUT', `/client/${b.id}/status`, {
      token: a.token,
      json: { status: 'active' },
    });
    expect(back.body.status).toBe('active');
    expect((await t.request('GET', '/client', { token: b.token })).status).toBe(200);
    cap.off();
  });

  test('PUT /client/{id}/status answers 402 when reactivating over the plan limit', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u);
    const b = await deviceToken(t, u);
    await t.request('PUT', `/client/${b.id}/status`, { token: a.token, json: { status: 'suspended' } });
    await deviceToken(t, u);
    await deviceToken(t, u);
    const res = await t.request('PUT', `/client/${b.id}/status`, {
      token: a.token,
      json: { status: 'active' },
    });
    expect(res.status).toBe(402);
    expect(res.body.errorCode).toBe('device_limit_exceeded');
  });

  test('PUT /client/{id}/status keeps a revoked device revoked', async () => {
    const u = makeUser(t);
    const a = await deviceToken(t, u);
    const b = await deviceToken(t, u);
    const cap = captureInvalidations(t);
    expect(
      (await t.request('PUT', `/client/${b.id}/status`, { token: a.token, json: { status: 'revoked' } })).body
        .status,
    ).toBe('revoked');
    cap.off();
    expect(cap.events).toEqual([{ userId: u.id, deviceId: b.id, reason: 'revoked' }]);
    for (const status of ['active', 'suspended']) {
      const res = await t.request('PUT', `/client/${b.id}/status`, { token: a.token, json: { status } });
      expect(res.status).toBe(409);
      expect(res.body.errorDescription).toBe('a revoked device cannot be reactivated or suspended');
    }
    expect(
      (await t.request('PUT', `/client/${b.id}/status`, { token: a.token, json: { status: 'revoked' } }))
        .status,
    ).toBe(200);
    const reconnect = await t.request('POST', `/client/${b.id}/reconnect`, { token: a.token });
    expect(reconnect.body.status).toBe('revoked');
    expect((await t.request('GET', '/client', { token: reconnect.body.token })).status).toBe(401);
  });

  test('PUT /client/{id}/status answers 400 for an unknown status', async () => {
    const d = await deviceToken(t, makeUser(t));
    expect(
      (await t.request('PUT', `/client/${d.id}/status`, { token: d.token, json: { status: 'paused' } }))
        .status,
    ).toBe(400);
  });
});

describe('GET /client/{id}/activity', () => {
  test('GET /client/{id}/activity lists sign-in, use, rotation, status and rename newest first', async () => {
    const s = await startTestServer();
    try {
      const u = makeUser(s);
      const a = await deviceToken(s, u, 'a');
      s.clock.advance(60_000);
      await s.request('GET', '/client', { token: a.token, headers: { 'User-Agent': 'other-agent' } });
      s.clock.advance(60_000);
      await s.request('PUT', `/client/${a.id}`, { token: a.token, json: { name: 'renamed' } });
      s.clock.advance(60_000);
      const r = await s.request('POST', `/client/${a.id}/reconnect`, { token: a.token });
      const tok = r.body.token as string;
      const b = await deviceToken(s, u, 'b');
      s.clock.advance(60_000);
      await s.request('PUT', `/client/${a.id}/status`, { token: b.token, json: { status: 'suspended' } });
      const res = await s.request('GET', `/client/${a.id}/activity`, { token: b.token });
      expect(res.status).toBe(200);
      expect(res.body.map((e: { type: string; detail: unknown }) => [e.type, e.detail])).toEqual([
        ['status_changed', { from: 'active', to: 'suspended' }],
        ['token_rotated', { reason: 'reconnect' }],
        ['renamed', { from: 'a', to: 'renamed' }],
        // the user agent changed back: a use is logged each time the address or agent changes
        ['token_used', {}],
        ['token_used', {}],
        ['sign_in', { via: 'client' }],
      ]);
      expect(res.body[0]).toEqual({
        id: expect.any(Number),
        type: 'status_changed',
        at: '2026-01-15T12:04:00.000Z',
        ip: expect.any(String),
        userAgent: expect.any(String),
        detail: { from: 'active', to: 'suspended' },
      });
      const typed = await s.request('GET', `/client/${a.id}/activity?type=renamed,sign_in`, {
        token: b.token,
      });
      expect(typed.body.map((e: { type: string }) => e.type)).toEqual(['renamed', 'sign_in']);
      const ranged = await s.request(
        'GET',
        `/client/${a.id}/activity?from=2026-01-15T12:01:00Z&to=2026-01-15T12:02:00Z`,
        { token: b.token },
      );
      expect(ranged.body.map((e: { type: string }) => e.type)).toEqual([
        'renamed',
        'token_used',
        'token_used',
      ]);
      const limited = await s.request('GET', `/client/${a.id}/activity?limit=1`, { token: b.token });
      expect(limited.body).toHaveLength(1);
      expect((await s.request('GET', `/client/${a.id}/activity?type=bogus`, { token: b.token })).status).toBe(
        400,
      );
      expect(
        (await s.request('GET', `/client/${a.id}/activity?from=yesterday`, { token: b.token })).status,
      ).toBe(400);
      expect(tok).toMatch(/^C/);
    } finally {
      await s.close();
    }
  });

  test('GET /client/{id}/activity answers 404 for another user device', async () => {
    const d = await deviceToken(t, makeUser(t));
    const mine = await deviceToken(t);
    expect((await t.request('GET', `/client/${d.id}/activity`, { token: mine.token })).status).toBe(404);
  });
});

describe('mutes (subscriptions)', () => {
  test('PUT /client/{id}/subscriptions replaces the muted channels and [] unmutes all', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const c1 = insertChannelRow(t, u.id);
    const c2 = insertChannelRow(t, u.id);
    expect((await t.request('GET', `/client/${d.id}/subscriptions`, { token: d.token })).body).toEqual({
      channelIds: [],
    });
    const put = await t.request('PUT', `/client/${d.id}/subscriptions`, {
      token: d.token,
      json: { channelIds: [c2, c1, c2] },
    });
    expect(put.body).toEqual({ channelIds: [c1, c2] });
    expect((await t.request('GET', `/client/${d.id}/subscriptions`, { token: d.token })).body).toEqual({
      channelIds: [c1, c2],
    });
    expect((await t.request('GET', '/device/me/subscriptions', { token: d.token })).body).toEqual({
      channelIds: [c1, c2],
    });
    const clear = await t.request('PUT', `/client/${d.id}/subscriptions`, {
      token: d.token,
      json: { channelIds: [] },
    });
    expect(clear.body).toEqual({ channelIds: [] });
  });

  test('PUT /client/{id}/subscriptions answers 400 for another user channel and 404 for another user device', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const foreignChannel = insertChannelRow(t, makeUser(t).id);
    const res = await t.request('PUT', `/client/${d.id}/subscriptions`, {
      token: d.token,
      json: { channelIds: [foreignChannel] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe(`channel ${foreignChannel} not found`);
    const other = await deviceToken(t, makeUser(t));
    expect((await t.request('GET', `/client/${other.id}/subscriptions`, { token: d.token })).status).toBe(
      404,
    );
  });

  test('POST and DELETE /device/me/subscriptions mute and unmute a channel for the calling device', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const c = insertChannelRow(t, u.id);
    expect(
      (await t.request('POST', '/device/me/subscriptions', { token: d.token, json: { channelId: c } })).body,
    ).toEqual({ channelIds: [c] });
    expect(
      (await t.request('POST', '/device/me/subscriptions', { token: d.token, json: { channelId: c } })).body,
    ).toEqual({ channelIds: [c] });
    expect((await t.request('DELETE', `/device/me/subscriptions/${c}`, { token: d.token })).body).toEqual({
      channelIds: [],
    });
    expect((await t.request('DELETE', `/device/me/subscriptions/${c}`, { token: d.token })).body).toEqual({
      channelIds: [],
    });
    expect(
      (await t.request('POST', '/device/me/subscriptions', { token: d.token, json: { channelId: 999999 } }))
        .status,
    ).toBe(400);
    // Unmuting someone else's channel (or one that does not exist) is 400 like muting it.
    const foreign = insertChannelRow(t, makeUser(t).id);
    for (const id of [foreign, 999999]) {
      const res = await t.request('DELETE', `/device/me/subscriptions/${id}`, { token: d.token });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toBe(`channel ${id} not found`);
    }
  });

  test('/device/me/subscriptions answers 403 for an API token', async () => {
    const d = await deviceToken(t, makeUser(t));
    const api = await apiToken(t, d);
    expect((await t.request('GET', '/device/me/subscriptions', { token: api.token })).status).toBe(403);
  });
});

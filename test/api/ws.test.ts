import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deviceToken, makeUser } from '../helpers/factories';
import { basicHeader, startTestServer, type TestServer } from '../helpers/test-server';
import {
  emitMessage,
  hub,
  makeApiToken,
  makeChannel,
  makeChannelKey,
  openWs,
  refusedUpgrade,
  until,
  type WsClient,
} from './realtime-helpers';

const body = (status: number, description: string) => ({
  error: { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status],
  errorCode: status,
  errorDescription: description,
});

// Spec "Live streams" and "Authentication" for the message socket; contract "Compatibility" for /stream.
describe('WebSocket authentication', () => {
  let t: TestServer;
  const open: WsClient[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.ws.terminate();
    await t.close();
  });

  it('GET /ws upgrade answers 401 with the error body when no token is sent', async () => {
    expect(await refusedUpgrade(t, '/ws')).toEqual({
      status: 401,
      body: body(401, 'you need to provide a valid access token or user credentials to access this api'),
    });
  });

  it('GET /ws upgrade answers 401 when the token is unknown', async () => {
    expect(await refusedUpgrade(t, '/ws', `C${'x'.repeat(22)}`)).toEqual({
      status: 401,
      body: body(401, 'invalid or expired token'),
    });
    expect((await refusedUpgrade(t, '/stream', 'garbage')).status).toBe(401);
  });

  it('GET /ws upgrade answers 401 when the token is an API token', async () => {
    const user = makeUser(t);
    const api = makeApiToken(t, user.id);
    expect(await refusedUpgrade(t, '/ws', api)).toEqual({
      status: 401,
      body: body(401, 'this kind of token is not accepted here'),
    });
    expect((await refusedUpgrade(t, '/stream', api)).status).toBe(401);
  });

  it('GET /ws upgrade answers 401 when a username and password are sent', async () => {
    const user = makeUser(t);
    expect(
      await refusedUpgrade(t, '/ws', undefined, { Authorization: basicHeader(user.email, user.password) }),
    ).toEqual({
      status: 401,
      body: body(401, 'username and password are not accepted on this endpoint; use a token'),
    });
  });

  it('GET /ws upgrade answers 401 when the device is suspended', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const db = t.server.ctx.db;
    db.transaction(() => db.run("UPDATE devices SET status = 'suspended' WHERE id = ?", [dev.id]));
    expect((await refusedUpgrade(t, '/ws', dev.token)).status).toBe(401);
  });

  it('GET /ws upgrade answers 403 when a channel key lacks read permission', async () => {
    const user = makeUser(t);
    const key = makeChannelKey(t, makeChannel(t, user.id), { canRead: false });
    expect(await refusedUpgrade(t, '/ws', key.token)).toEqual({
      status: 403,
      body: body(403, 'token lacks the read permission'),
    });
  });

  it('GET /ws upgrade accepts the token from each header transport', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const transports: Record<string, string>[] = [
      { 'X-Service-Key': dev.token },
      { 'X-Legacy-Key': dev.token },
      { 'X-Gotify-Key': dev.token },
      { Authorization: `Bearer ${dev.token}` },
      { Cookie: `service-client-token=${dev.token}` },
    ];
    for (const headers of transports) {
      const c = await openWs(t, '/ws', undefined, headers);
      open.push(c);
    }
    await until(() => hub(t).size().sockets === 5);
    expect((await t.request('GET', '/client/online', { token: dev.token })).body).toEqual([dev.id]);
  });

  it('GET /ws upgrade lets the first transport win when the header token is invalid', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const res = await refusedUpgrade(t, '/ws', dev.token, { 'X-Service-Key': `C${'y'.repeat(22)}` });
    expect(res.status).toBe(401);
  });

  it('GET /ws upgrade answers 403 when the session cookie comes from another origin', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const cookie = `service-client-token=${dev.token}`;
    expect(
      await refusedUpgrade(t, '/ws', undefined, { Cookie: cookie, Origin: 'http://evil.example' }),
    ).toEqual({
      status: 403,
      body: body(403, 'a WebSocket from another origin cannot use the session cookie'),
    });
    const same = await openWs(t, '/ws', undefined, { Cookie: cookie, Origin: t.url });
    open.push(same);
    // A token in the URL is not ambient authority: any origin may use it.
    open.push(await openWs(t, '/ws', dev.token, { Origin: 'http://evil.example' }));
  });

  it('GET /ws upgrade answers 404 when the path is not a socket path', async () => {
    expect(await refusedUpgrade(t, '/wss')).toEqual({
      status: 404,
      body: body(404, 'no route for GET /wss'),
    });
  });

  it('GET /ws answers 400 when the request is not an upgrade', async () => {
    const res = await t.request('GET', '/ws');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(body(400, 'GET /ws is a WebSocket endpoint: send a WebSocket upgrade request'));
  });

  it('GET /ws with a channel key sees only its channel when the owner has two', async () => {
    const user = makeUser(t);
    const mine = makeChannel(t, user.id);
    const other = makeChannel(t, user.id, 'other');
    const key = makeChannelKey(t, mine, { canRead: true, canWrite: false });
    const c = await openWs(t, '/ws', key.token);
    open.push(c);
    emitMessage(t, other, user.id);
    const m = emitMessage(t, mine, user.id);
    expect(await c.next()).toMatchObject({ id: m.id, appid: mine });
    expect(await c.silentFor(50)).toBe(true);
  });
});

describe('GET /client/online', () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
  });

  it('GET /client/online lists devices with an open socket when some are connected', async () => {
    const user = makeUser(t);
    const other = makeUser(t);
    const a = await deviceToken(t, user, 'a');
    const b = await deviceToken(t, user, 'b');
    const o = await deviceToken(t, other, 'o');
    expect((await t.request('GET', '/client/online', { token: a.token })).body).toEqual([]);
    const ca = await openWs(t, '/ws', a.token);
    const cb1 = await openWs(t, '/stream', b.token);
    const cb2 = await openWs(t, '/ws', b.token);
    const co = await openWs(t, '/ws', o.token);
    const res = await t.request('GET', '/client/online', { basic: user });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([a.id, b.id]);
    ca.ws.close();
    await ca.closed;
    await until(() => hub(t).size().sockets === 3);
    expect((await t.request('GET', '/client/online', { token: b.token })).body).toEqual([b.id]);
    for (const c of [cb1, cb2, co]) c.ws.terminate();
  });

  it('GET /client/online answers 403 when called with a channel key', async () => {
    const user = makeUser(t);
    const key = makeChannelKey(t, makeChannel(t, user.id), { canRead: true });
    expect((await t.request('GET', '/client/online', { token: key.token })).status).toBe(403);
    expect((await t.request('GET', '/client/online')).status).toBe(401);
  });
});

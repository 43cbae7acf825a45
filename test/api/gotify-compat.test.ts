import { gotify } from 'gotify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs, type WsClient } from './realtime-helpers';

/**
 * Existing clients of the older push protocol work unchanged (contract "Compatibility"; the sequences are
 * the ones the Gotify clients use): the npm `gotify` package sends, and the Android
 * app signs in, starts, listens on `/stream?token=` and pages with `since=0`, using only what it uses:
 * Basic on /current/user and POST /client, `X-Gotify-Key` on REST, the token in the socket URL.
 */
describe('older protocol clients', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.ws.terminate();
    await t.close();
  });

  /** What the Android app sends on REST calls once signed in: only X-Gotify-Key. */
  const android = (token: string) => ({ token, via: 'gotify-key' as const });

  it('the Android app sequence works end to end when messages come from the npm gotify client', async () => {
    const user = makeUser(t, { plan: 'pro' });

    // Login (LoginActivity): version check, Basic on /current/user, Basic on POST /client.
    const version = await t.request('GET', '/version');
    expect(version.status).toBe(200);
    for (const k of ['version', 'commit', 'buildDate']) expect(typeof version.body[k]).toBe('string');
    const me = await t.request('GET', '/current/user', { basic: user });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ name: user.email, admin: false });
    const client = await t.request('POST', '/client', { basic: user, json: { name: 'Pixel 8' } });
    expect(client.status).toBe(200);
    expect(client.body).toMatchObject({ name: 'Pixel 8' });
    // Its date adapter throws on "": a timestamp is RFC 3339 or null.
    expect(client.body.lastUsed === null || !Number.isNaN(Date.parse(client.body.lastUsed))).toBe(true);
    const phone: string = client.body.token;
    expect(phone).toMatch(/^C[A-Za-z0-9]{22}$/);

    // The user's program gets a channel key (the CLI does this with Basic on POST /application).
    const app = await t.request('POST', '/application', { basic: user, json: { name: 'backups' } });
    expect(app.status).toBe(200);
    const appToken: string = app.body.token;

    // Start-up (InitializationActivity, the order of android#373), all with X-Gotify-Key.
    expect((await t.request('GET', '/current/user', android(phone))).status).toBe(200);
    expect((await t.request('GET', '/version')).status).toBe(200);
    const probe = await t.request('GET', '/message?limit=1&since=0', android(phone));
    expect(probe.status).toBe(200);
    expect(probe.body).toEqual({ paging: { size: 0, limit: 1, since: 0 }, messages: [] });
    const apps = await t.request('GET', '/application', android(phone));
    expect(apps.status).toBe(200);
    expect(apps.body.map((a: { id: number; name: string }) => [a.id, a.name])).toContainEqual([
      app.body.id,
      'backups',
    ]);
    const socket = await openWs(t, '/stream', phone);
    sockets.push(socket);

    // A program sends with the npm package (token in the query string, JSON body).
    const sent = await gotify({
      server: t.url,
      app: appToken,
      title: 'nightly',
      message: 'backup done',
      priority: 6,
    });
    expect(sent).toMatchObject({ appid: app.body.id, title: 'nightly', message: 'backup done', priority: 6 });

    // The socket gets exactly the older protocol's Message (Gson reads id, appid, priority as non-null).
    const frame = (await socket.next()) as Record<string, unknown>;
    expect(frame).toEqual({
      id: sent.id,
      appid: app.body.id,
      message: 'backup done',
      title: 'nightly',
      priority: 6,
      date: sent.date,
    });
    expect(Number.isNaN(Date.parse(frame.date as string))).toBe(false);

    // The message list the app shows: first page with since=0; paging.since always present.
    const list = await t.request('GET', '/message?limit=100&since=0', android(phone));
    expect(list.status).toBe(200);
    expect(list.body.paging).toEqual({ size: 1, limit: 100, since: 0 });
    expect(list.body.messages[0]).toMatchObject({
      id: sent.id,
      appid: app.body.id,
      title: 'nightly',
      priority: 6,
    });
    const perApp = await t.request(
      'GET',
      `/application/${app.body.id}/message?limit=100&since=0`,
      android(phone),
    );
    expect(perApp.body.messages.map((m: { id: number }) => m.id)).toEqual([sent.id]);
  });

  it('the Android app pages missed messages when it reconnects after an outage', async () => {
    const user = makeUser(t, { plan: 'pro' });
    const phone = (await t.request('POST', '/client', { basic: user, json: { name: 'phone' } })).body
      .token as string;
    const appToken = (await t.request('POST', '/application', { basic: user, json: { name: 'ci' } })).body
      .token as string;
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await gotify({ server: t.url, app: appToken, message: `build ${i}` })).id);
    // MissedMessageUtil: GET /message?limit=10 then follow paging.since until next is absent.
    const seen: number[] = [];
    let path = '/message?limit=10';
    for (let page = 0; page < 5; page++) {
      const res = await t.request('GET', path, android(phone));
      expect(res.status).toBe(200);
      expect(typeof res.body.paging.since).toBe('number');
      seen.push(...res.body.messages.map((m: { id: number }) => m.id));
      if (!res.body.paging.next) break;
      path = `/message?limit=10&since=${res.body.paging.since}`;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('the Android app sees 401 after its socket is closed when its device is deleted', async () => {
    const user = makeUser(t);
    const phone = await t.request('POST', '/client', { basic: user, json: { name: 'phone' } });
    const laptop = await t.request('POST', '/client', { basic: user, json: { name: 'laptop' } });
    const socket = await openWs(t, '/stream', phone.body.token);
    sockets.push(socket);
    const online = await t.request('GET', '/client/online', android(laptop.body.token));
    expect(online.body).toEqual([phone.body.id]);
    expect((await t.request('DELETE', `/client/${phone.body.id}`, android(laptop.body.token))).status).toBe(
      200,
    );
    expect((await socket.closed).code).toBe(4401);
    // WebSocketService: on close it asks /current/user; only a 401 means "logged out".
    expect((await t.request('GET', '/current/user', android(phone.body.token))).status).toBe(401);
    expect((await t.request('GET', '/client/online', android(laptop.body.token))).body).toEqual([]);
  });
});

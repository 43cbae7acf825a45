import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deviceToken, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { hub, makeApiToken, makeChannel, makeChannelKey, until } from './realtime-helpers';

/** An open SSE response whose text accumulates as it arrives. */
interface SseClient {
  status: number;
  contentType: string | null;
  text: () => string;
  ended: Promise<void>;
  abort: () => void;
}

async function openSse(
  t: TestServer,
  query: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  const ac = new AbortController();
  const res = await fetch(`${t.url}/stream${query}`, { headers, signal: ac.signal });
  let text = '';
  const decoder = new TextDecoder();
  const ended = (async () => {
    if (!res.body) return;
    try {
      for await (const chunk of res.body) text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text: () => text,
    ended,
    abort: () => ac.abort(),
  };
}

// Spec "Events", Server-Sent Events `/stream`.
describe('GET /stream (SSE)', () => {
  let t: TestServer;
  const open: SseClient[] = [];
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.abort();
    await t.close();
  });
  const sse = async (query: string, headers?: Record<string, string>) => {
    const c = await openSse(t, query, headers);
    open.push(c);
    return c;
  };

  it('GET /stream sends retry and the connected event when a device token is in the query', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const c = await sse(`?token=${dev.token}`);
    expect(c.status).toBe(200);
    expect(c.contentType).toBe('text/event-stream');
    await until(() => c.text().includes('event: connected'));
    expect(c.text()).toBe(`retry: 5000\n\nevent: connected\ndata: {"deviceId":${dev.id}}\n\n`);
  });

  it('GET /stream accepts the session cookie when no other transport is sent', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const c = await sse('', { Cookie: `service-client-token=${dev.token}` });
    expect(c.status).toBe(200);
    await until(() => c.text().includes('event: connected'));
  });

  it('GET /stream answers 401 when the token is missing, invalid, an API token or a channel key', async () => {
    const user = makeUser(t);
    const key = makeChannelKey(t, makeChannel(t, user.id), { canRead: true });
    for (const query of ['', '?token=nope', `?token=${makeApiToken(t, user.id)}`, `?token=${key.token}`]) {
      const res = await t.request('GET', `/stream${query}`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ errorCode: 401 });
    }
    const basic = await t.request('GET', '/stream', { basic: user });
    expect(basic.status).toBe(401);
  });

  it('GET /stream sends share:changed and channel:status_changed with {appid} only to the named users', async () => {
    const alice = makeUser(t);
    const bob = makeUser(t);
    const carol = makeUser(t);
    const a = await sse(`?token=${(await deviceToken(t, alice)).token}`);
    const b = await sse(`?token=${(await deviceToken(t, bob)).token}`);
    const c = await sse(`?token=${(await deviceToken(t, carol)).token}`);
    await until(() => [a, b, c].every((s) => s.text().includes('connected')));
    t.server.ctx.bus.emit('share:changed', { appid: 7, userIds: [alice.id, bob.id] });
    t.server.ctx.bus.emit('channel:status_changed', { appid: 9, userIds: [bob.id] });
    await until(() => b.text().includes('channel:status_changed'));
    await until(() => a.text().includes('share:changed'));
    expect(a.text()).toContain('event: share:changed\ndata: {"appid":7}\n\n');
    expect(a.text()).not.toContain('channel:status_changed');
    expect(b.text()).toContain(
      'event: share:changed\ndata: {"appid":7}\n\nevent: channel:status_changed\ndata: {"appid":9}\n\n',
    );
    expect(c.text()).not.toContain('changed');
  });

  it('GET /stream sends share:changed to both sides when a share is accepted through the API', async () => {
    const owner = makeUser(t);
    const recipient = makeUser(t);
    const od = await deviceToken(t, owner);
    const rd = await deviceToken(t, recipient);
    const app = await t.request('POST', '/application', { token: od.token, json: { name: 'shared' } });
    const o = await sse(`?token=${od.token}`);
    const r = await sse(`?token=${rd.token}`);
    await until(() => [o, r].every((x) => x.text().includes('connected')));
    const share = await t.request('POST', `/application/${app.body.id}/share`, {
      token: od.token,
      json: { email: recipient.email, permission: 'send' },
    });
    expect((await t.request('POST', `/share/${share.body.id}/accept`, { token: rd.token })).status).toBe(200);
    const event = `event: share:changed\ndata: {"appid":${app.body.id}}\n\n`;
    await until(() => o.text().includes(event) && r.text().includes(event));
  });

  it('GET /stream sends a keepalive comment on every keepalive interval', async () => {
    const user = makeUser(t);
    const c = await sse(`?token=${(await deviceToken(t, user)).token}`);
    hub(t).keepaliveRound();
    await until(() => c.text().includes(': keepalive\n\n'));
    hub(t).configure({ keepaliveMs: 20 });
    await until(() => c.text().split(': keepalive').length >= 4);
  });

  it('GET /stream ends when the device is invalidated', async () => {
    const user = makeUser(t);
    const dev = await deviceToken(t, user);
    const c = await sse(`?token=${dev.token}`);
    await until(() => c.text().includes('connected'));
    t.server.ctx.bus.emit('device:invalidated', { userId: user.id, deviceId: dev.id, reason: 'suspended' });
    await c.ended;
    await until(() => hub(t).size().streams === 0);
  });

  it('GET /stream ends when the server stops', async () => {
    const user = makeUser(t);
    const c = await sse(`?token=${(await deviceToken(t, user)).token}`);
    await until(() => c.text().includes('connected'));
    await t.close();
    await c.ended;
  });
});

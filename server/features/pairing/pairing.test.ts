import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server';
import type { AppContext } from '../../context';
import { pairingUrls } from './service';

describe('pairing a device (Belfry extension)', () => {
  let t: TestServer;
  let token: string;
  beforeEach(async () => {
    t = await startTestServer();
    const login = await t.request('POST', '/auth/local/login', { basic: t.admin, json: { name: 'laptop' } });
    expect(login.status).toBe(200);
    token = login.body.token;
  });
  afterEach(() => t.close());

  it('POST /pairing issues a one-time code and a loopback URL flagged not reachable when bound to 127.0.0.1', async () => {
    const r = await t.request('POST', '/pairing', { token, json: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: 1,
      code: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
      expiresAt: new Date(t.clock.now() + 300_000).toISOString(),
      expiresIn: 300,
      urls: [t.url],
      lan: false,
    });
  });

  it('POST /pairing/claim signs the phone in as a new device once, with the session cookie', async () => {
    const { body: p } = await t.request('POST', '/pairing', { token, json: {} });
    const claim = await t.request('POST', '/pairing/claim', {
      json: { code: p.code, name: 'My phone', platform: 'web' },
    });
    expect(claim.status).toBe(200);
    expect(claim.body).toEqual({
      id: expect.any(Number),
      name: 'My phone',
      token: expect.stringMatching(/^C/),
      user_id: 1,
      platform: 'web',
    });
    expect(claim.headers.get('set-cookie')).toContain(`service-client-token=${claim.body.token}`);
    const me = await t.request('GET', '/current/user', { token: claim.body.token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(t.admin.email);
    expect((await t.request('GET', `/pairing/${p.id}`, { token })).body).toEqual({
      id: p.id,
      status: 'claimed',
      deviceId: claim.body.id,
      deviceName: 'My phone',
    });
    const again = await t.request('POST', '/pairing/claim', { json: { code: p.code } });
    expect(again.status).toBe(404);
    expect(again.body.errorDescription).toBe('pairing code not found');
  });

  it('POST /pairing/claim refuses an expired code and GET /pairing/{id} says expired', async () => {
    const { body: p } = await t.request('POST', '/pairing', { token, json: {} });
    expect((await t.request('GET', `/pairing/${p.id}`, { token })).body.status).toBe('pending');
    t.clock.advance(300_000);
    expect((await t.request('GET', `/pairing/${p.id}`, { token })).body.status).toBe('expired');
    expect((await t.request('POST', '/pairing/claim', { json: { code: p.code } })).status).toBe(404);
  });

  it('POST /pairing/claim answers 400 for a malformed code', async () => {
    const r = await t.request('POST', '/pairing/claim', { json: { code: 'short' } });
    expect(r.status).toBe(400);
    expect(r.body.errorDescription).toContain('not a pairing code');
  });

  it('POST /pairing needs a device token: no credential 401, another user cannot see the pairing', async () => {
    expect((await t.request('POST', '/pairing', { json: {} })).status).toBe(401);
    const { body: p } = await t.request('POST', '/pairing', { token, json: {} });
    expect((await t.request('GET', `/pairing/${p.id + 100}`, { token })).status).toBe(404);
  });

  it('pairingUrls lists LAN addresses with a wildcard bind, the public URL first when configured', () => {
    const ctx = (host: string, publicUrl?: string) =>
      ({
        config: { host, publicUrl },
        publicUrl: () => publicUrl ?? 'http://127.0.0.1:7878',
      }) as unknown as AppContext;
    const ifaces = () => ({
      lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true } as never],
      wlan0: [{ address: '192.168.1.7', family: 'IPv4', internal: false } as never],
    });
    expect(pairingUrls(ctx('0.0.0.0'), 7878, ifaces)).toEqual({
      urls: ['http://192.168.1.7:7878'],
      lan: true,
    });
    expect(pairingUrls(ctx('0.0.0.0', 'https://bell.example/'), 7878, ifaces)).toEqual({
      urls: ['https://bell.example', 'http://192.168.1.7:7878'],
      lan: true,
    });
    expect(pairingUrls(ctx('192.168.1.7'), 8000, ifaces)).toEqual({
      urls: ['http://192.168.1.7:8000'],
      lan: true,
    });
    expect(pairingUrls(ctx('127.0.0.1'), 7878, ifaces)).toEqual({
      urls: ['http://127.0.0.1:7878'],
      lan: false,
    });
  });
});

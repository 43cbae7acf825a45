import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser, sudo } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 21, item 2: an API token (even one scoped to a single channel) must never obtain or rotate a
// device token, manage devices or API tokens, or act on shares outside its scope (spec "Authentication",
// point 7; docs/api.md "Authentication" and "Devices").

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const API_TOKEN_FORBIDDEN = {
  error: 'Forbidden',
  errorCode: 403,
  errorDescription: 'API tokens cannot do this; sign in with a device',
};

/** A user with two devices, two channels and a write API token scoped to the first channel only. */
async function account() {
  const u = makeUser(t);
  const phone = await deviceToken(t, u, 'phone');
  const laptop = await deviceToken(t, u, 'laptop');
  const inside = await makeChannel(t, phone.token, { name: 'inside' });
  const outside = await makeChannel(t, phone.token, { name: 'outside' });
  const scoped = await apiToken(t, phone, { access: 'write', appIds: [inside.id] });
  return { u, phone, laptop, inside, outside, scoped };
}

async function deviceIds(token: string): Promise<number[]> {
  const res = await t.request('GET', '/client', { token });
  expect(res.status).toBe(200);
  return res.body.map((d: { id: number }) => d.id);
}

/** A sudo-only route that changes nothing lasting: passes only with an open sudo window. */
async function sudoProbe(token: string) {
  return t.request('POST', '/current/user/mfa/setup', { token });
}

describe('an API token cannot become a device', () => {
  test('POST /client answers 403 for a scoped write API token and creates no device', async () => {
    const a = await account();
    const before = await deviceIds(a.phone.token);
    const res = await t.request('POST', '/client', { token: a.scoped.token, json: { name: 'backdoor' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(API_TOKEN_FORBIDDEN);
    expect(await deviceIds(a.phone.token)).toEqual(before);
    // Basic (spec point 3) still creates a device.
    const basic = await t.request('POST', '/client', { basic: a.u, json: { name: 'by password' } });
    expect(basic.status).toBe(200);
    expect(basic.body.token).toMatch(/^C[A-Za-z0-9]{22}$/);
  });

  test('POST /client/{id}/reconnect answers 403 for a scoped write API token and the device keeps its token', async () => {
    const a = await account();
    await sudo(t, a.laptop, a.u.password);
    const res = await t.request('POST', `/client/${a.laptop.id}/reconnect`, { token: a.scoped.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(API_TOKEN_FORBIDDEN);
    expect((await t.request('GET', '/current/user', { token: a.laptop.token })).status).toBe(200);
  });

  test('every device-management route answers 403 for a scoped write API token and changes nothing', async () => {
    const a = await account();
    const routes: [string, string, unknown?][] = [
      ['DELETE', '/client'],
      ['PUT', `/client/${a.laptop.id}`, { name: 'renamed' }],
      ['DELETE', `/client/${a.laptop.id}`],
      ['PUT', `/client/${a.laptop.id}/status`, { status: 'revoked' }],
      ['PUT', `/client/${a.laptop.id}/subscriptions`, { channelIds: [a.outside.id] }],
      ['GET', '/api-token'],
      ['POST', '/api-token', { name: 'wider', access: 'write' }],
      ['PUT', `/api-token/${a.scoped.id}`, { appIds: [] }],
      ['POST', `/api-token/${a.scoped.id}/rotate`],
      ['POST', '/current/user/sudo', { method: 'password', pass: a.u.password }],
      ['POST', '/current/user/password', { oldPass: a.u.password, pass: 'taken-over-1' }],
      ['POST', '/current/user/mfa/setup'],
      ['POST', '/pairing'],
      ['POST', '/share/rotate', { appid: a.inside.id }],
    ];
    for (const [method, path, json] of routes) {
      const res = await t.request(method, path, { token: a.scoped.token, ...(json ? { json } : {}) });
      expect({ method, path, status: res.status, body: res.body }).toEqual({
        method,
        path,
        status: 403,
        body: API_TOKEN_FORBIDDEN,
      });
    }
    const devices = await t.request('GET', '/client', { token: a.phone.token });
    expect(devices.body.map((d: { name: string; status: string }) => [d.name, d.status])).toEqual([
      ['phone', 'active'],
      ['laptop', 'active'],
    ]);
    expect(
      (await t.request('GET', `/client/${a.laptop.id}/subscriptions`, { token: a.phone.token })).body,
    ).toEqual({ channelIds: [] });
    const tokens = await t.request('GET', '/api-token', { token: a.phone.token });
    expect(tokens.body.map((x: { appIds: number[] }) => x.appIds)).toEqual([[a.inside.id]]);
    expect((await t.request('GET', '/current/user', { token: a.scoped.token })).status).toBe(200);
  });

  test('reading routes of the device list stay open to an API token (spec: Tok)', async () => {
    const a = await account();
    expect(await deviceIds(a.scoped.token)).toEqual([a.phone.id, a.laptop.id]);
    const list = await t.request('GET', '/client', { token: a.scoped.token });
    for (const d of list.body) expect(d.token).toMatch(/^C[A-Za-z0-9]{2}\*+[A-Za-z0-9]{4}$/);
    expect(
      (await t.request('GET', `/client/${a.laptop.id}/activity`, { token: a.scoped.token })).status,
    ).toBe(200);
    expect((await t.request('GET', '/client/online', { token: a.scoped.token })).status).toBe(200);
  });

  test('GET /client/{id}/subscriptions shows a scoped API token only the mutes inside its scope', async () => {
    const a = await account();
    const put = await t.request('PUT', `/client/${a.laptop.id}/subscriptions`, {
      token: a.phone.token,
      json: { channelIds: [a.inside.id, a.outside.id] },
    });
    expect(put.body).toEqual({ channelIds: [a.inside.id, a.outside.id] });
    const res = await t.request('GET', `/client/${a.laptop.id}/subscriptions`, { token: a.scoped.token });
    expect(res.body).toEqual({ channelIds: [a.inside.id] });
    const whole = await apiToken(t, a.phone, { access: 'read' });
    expect(
      (await t.request('GET', `/client/${a.laptop.id}/subscriptions`, { token: whole.token })).body,
    ).toEqual({ channelIds: [a.inside.id, a.outside.id] });
  });
});

describe('a token rotation closes the device sudo window', () => {
  test('POST /client/{id}/reconnect of the calling device: the new token has no sudo', async () => {
    const a = await account();
    await sudo(t, a.phone, a.u.password);
    expect((await sudoProbe(a.phone.token)).status).toBe(200);
    const res = await t.request('POST', `/client/${a.phone.id}/reconnect`, { token: a.phone.token });
    expect(res.status).toBe(200);
    const probe = await sudoProbe(res.body.token);
    expect(probe.status).toBe(403);
    expect(probe.body).toMatchObject({ reason: 'sudo_required', methods: ['password'] });
  });

  test('POST /client/{id}/reconnect of another device, by token or Basic: its new token has no sudo', async () => {
    const a = await account();
    await sudo(t, a.laptop, a.u.password);
    const byDevice = await t.request('POST', `/client/${a.laptop.id}/reconnect`, { token: a.phone.token });
    expect(byDevice.status).toBe(200);
    expect((await sudoProbe(byDevice.body.token)).body.reason).toBe('sudo_required');
    await sudo(t, { token: byDevice.body.token }, a.u.password);
    const byBasic = await t.request('POST', `/client/${a.laptop.id}/reconnect`, { basic: a.u });
    expect(byBasic.status).toBe(200);
    expect((await sudoProbe(byBasic.body.token)).body.reason).toBe('sudo_required');
  });

  test('suspending a device closes its sudo window, so reactivating it does not bring it back', async () => {
    const a = await account();
    await sudo(t, a.laptop, a.u.password);
    for (const status of ['suspended', 'active'])
      expect(
        (await t.request('PUT', `/client/${a.laptop.id}/status`, { token: a.phone.token, json: { status } }))
          .status,
      ).toBe(200);
    expect((await sudoProbe(a.laptop.token)).body.reason).toBe('sudo_required');
  });
});

describe('share routes respect the API token scope', () => {
  /** A recipient whose write API token reaches channels tagged `in`; two channels are shared with them. */
  async function sharedWithScopedRecipient() {
    const owner = makeUser(t);
    const ownerDev = await deviceToken(t, owner);
    const me = makeUser(t);
    const myDev = await deviceToken(t, me);
    const inside = await makeChannel(t, ownerDev.token, { tags: ['in'] });
    const outside = await makeChannel(t, ownerDev.token, { tags: ['out'] });
    const share = async (c: { id: number }) =>
      (
        await t.request('POST', `/application/${c.id}/share`, {
          token: ownerDev.token,
          json: { email: me.email, permission: 'send' },
        })
      ).body.id as number;
    const scoped = await apiToken(t, myDev, { access: 'write', appTags: ['in'] });
    return { owner, ownerDev, me, myDev, inside, outside, share, scoped };
  }

  test('accept, decline, leave and incoming answer 404 or hide shares of channels outside the scope', async () => {
    const s = await sharedWithScopedRecipient();
    const inId = await s.share(s.inside);
    const outId = await s.share(s.outside);
    const incoming = await t.request('GET', '/share/incoming', { token: s.scoped.token });
    expect(incoming.body.map((x: { id: number }) => x.id)).toEqual([inId]);
    for (const verb of ['accept', 'decline']) {
      const res = await t.request('POST', `/share/${outId}/${verb}`, { token: s.scoped.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not Found', errorCode: 404, errorDescription: 'share not found' });
    }
    const accepted = await t.request('POST', `/share/${inId}/accept`, { token: s.scoped.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.token).toMatch(/^S[A-Za-z0-9]{22}$/);
    // The device accepts the other one; the scoped token still cannot leave it.
    expect((await t.request('POST', `/share/${outId}/accept`, { token: s.myDev.token })).status).toBe(200);
    const leave = await t.request('POST', '/share/leave', {
      token: s.scoped.token,
      json: { appid: s.outside.id },
    });
    expect(leave.status).toBe(404);
    const mine = await t.request('GET', '/application', { token: s.myDev.token });
    expect(mine.body.map((c: { id: number }) => c.id)).toContain(s.outside.id);
  });

  test('POST /share/join answers 404 for an invitation to a channel outside the scope', async () => {
    const s = await sharedWithScopedRecipient();
    await s.share(s.outside);
    const row = t.server.ctx.db.first<{ text: string }>(
      'SELECT text FROM mail_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1',
      [s.me.email.toLowerCase()],
    );
    const invite = /share\/join\?token=([A-Za-z0-9_-]+)/.exec(row?.text ?? '')?.[1];
    expect(invite).toBeDefined();
    const res = await t.request('POST', '/share/join', { token: s.scoped.token, json: { token: invite } });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('invitation not found');
    expect(
      (await t.request('POST', '/share/join', { token: s.myDev.token, json: { token: invite } })).status,
    ).toBe(200);
  });

  test('POST /share/rotate answers 403 for any API token; a device rotates its share token', async () => {
    const s = await sharedWithScopedRecipient();
    const inId = await s.share(s.inside);
    const accepted = await t.request('POST', `/share/${inId}/accept`, { token: s.myDev.token });
    const res = await t.request('POST', '/share/rotate', {
      token: s.scoped.token,
      json: { appid: s.inside.id },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(API_TOKEN_FORBIDDEN);
    // The share token in use keeps working.
    expect((await t.request('GET', '/message', { token: accepted.body.token })).status).toBe(200);
    const rotated = await t.request('POST', '/share/rotate', {
      token: s.myDev.token,
      json: { appid: s.inside.id },
    });
    expect(rotated.status).toBe(200);
    expect((await t.request('GET', '/message', { token: accepted.body.token })).status).toBe(401);
  });

  test('GET /share/recipients lists only addresses shared through channels inside the scope', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    const inside = await makeChannel(t, dev.token);
    const outside = await makeChannel(t, dev.token);
    for (const [c, email] of [
      [inside, 'seen@example.com'],
      [outside, 'hidden@example.com'],
    ] as const)
      await t.request('POST', `/application/${c.id}/share`, {
        token: dev.token,
        json: { email, permission: 'view' },
      });
    const scoped = await apiToken(t, dev, { access: 'read', appIds: [inside.id] });
    expect((await t.request('GET', '/share/recipients', { token: scoped.token })).body).toEqual([
      'seen@example.com',
    ]);
    const other = await makeChannel(t, dev.token);
    const empty = await apiToken(t, dev, { access: 'read', appIds: [other.id] });
    expect((await t.request('GET', '/share/recipients', { token: empty.token })).body).toEqual([]);
    expect((await t.request('GET', '/share/recipients', { token: dev.token })).body).toEqual([
      'hidden@example.com',
      'seen@example.com',
    ]);
  });
});

describe('password change', () => {
  test('POST /current/user/password signs other devices out and keeps API tokens, which still cannot reach a device token', async () => {
    const a = await account();
    await sudo(t, a.phone, a.u.password);
    const res = await t.request('POST', '/current/user/password', {
      token: a.phone.token,
      json: { oldPass: a.u.password, pass: 'new-password-1' },
    });
    expect(res.status).toBe(200);
    expect((await t.request('GET', '/current/user', { token: a.laptop.token })).status).toBe(401);
    // Spec point 8: the user's own password change keeps API tokens, within their scope...
    expect((await t.request('GET', '/current/user', { token: a.scoped.token })).status).toBe(200);
    // ...and none of them leads back to a device token, a new API token or the password.
    for (const [method, path, json] of [
      ['POST', '/client', { name: 'backdoor' }],
      ['POST', `/client/${a.laptop.id}/reconnect`, undefined],
      ['POST', '/api-token', { name: 'spare', access: 'write' }],
      ['POST', '/pairing', undefined],
      ['POST', '/current/user/password', { oldPass: 'new-password-1', pass: 'taken-over-1' }],
    ] as const) {
      const denied = await t.request(method, path, { token: a.scoped.token, ...(json ? { json } : {}) });
      expect({ path, status: denied.status, body: denied.body }).toEqual({
        path,
        status: 403,
        body: API_TOKEN_FORBIDDEN,
      });
    }
    expect((await t.request('GET', '/current/user', { token: a.laptop.token })).status).toBe(401);
    expect(await deviceIds(a.phone.token)).toEqual([a.phone.id, a.laptop.id]);
    // The owner sees the kept token and can delete it from the device.
    const list = await t.request('GET', '/api-token', { token: a.phone.token });
    expect(list.body.map((x: { id: number }) => x.id)).toEqual([a.scoped.id]);
    expect((await t.request('DELETE', `/api-token/${a.scoped.id}`, { token: a.phone.token })).status).toBe(
      200,
    );
    expect((await t.request('GET', '/current/user', { token: a.scoped.token })).status).toBe(401);
  });
});

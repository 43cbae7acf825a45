import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, insertChannelKeyRow, insertChannelRow, makeUser } from '../helpers/factories';
import { basicHeader, startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('POST /auth/local/login', () => {
  test('POST /auth/local/login creates a device and sets the session cookie when the Basic pair is right', async () => {
    const u = makeUser(t);
    const res = await t.request('POST', '/auth/local/login', {
      basic: u,
      json: { name: 'Firefox', platform: 'linux' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Firefox',
      token: expect.stringMatching(/^C[A-Za-z0-9]{22}$/),
      user_id: u.id,
      platform: 'linux',
    });
    expect(res.headers.getSetCookie()[0]).toBe(
      `service-client-token=${res.body.token}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax`,
    );
    const me = await t.request('GET', '/current/user', { token: res.body.token, via: 'cookie' });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(u.email);
  });

  test('POST /auth/local/login takes the name and platform as a form and defaults the name to web', async () => {
    const u = makeUser(t);
    const form = await t.request('POST', '/auth/local/login', {
      basic: u,
      form: { name: 'Phone', platform: 'android' },
    });
    expect(form.body).toMatchObject({ name: 'Phone', platform: 'android' });
    const bare = await t.request('POST', '/auth/local/login', { basic: u });
    expect(bare.body).toMatchObject({ name: 'web', platform: '' });
  });

  test('POST /auth/local/login marks the cookie Secure when the public URL is https', async () => {
    const s = await startTestServer({ config: { publicUrl: 'https://belfry.example.com' } });
    try {
      const res = await s.request('POST', '/auth/local/login', { basic: s.admin });
      for (const c of res.headers.getSetCookie()) expect(c).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await s.close();
    }
  });

  test('POST /auth/local/login suspends the oldest active device and says which when the plan limit is reached', async () => {
    const u = makeUser(t);
    const first = await deviceToken(t, u, 'one');
    t.clock.advance(60_000);
    const second = await deviceToken(t, u, 'two');
    t.clock.advance(60_000);
    await deviceToken(t, u, 'three');
    t.clock.advance(60_000);
    // "two" was used after "one": "one" is the least recently used.
    await t.request('GET', '/current/user', { token: second.token });
    const res = await t.request('POST', '/auth/local/login', { basic: u, json: { name: 'four' } });
    expect(res.status).toBe(200);
    expect(res.body.suspended_device_id).toBe(first.id);
    const dead = await t.request('GET', '/current/user', { token: first.token });
    expect(dead.status).toBe(401);
    expect(dead.body.errorDescription).toBe('invalid or expired token');
    const list = await t.request('GET', '/client', { token: res.body.token });
    expect(list.body.map((d: { name: string; status: string }) => [d.name, d.status])).toEqual([
      ['one', 'suspended'],
      ['two', 'active'],
      ['three', 'active'],
      ['four', 'active'],
    ]);
  });

  test('POST /auth/local/login leaves suspended_device_id absent when under the limit', async () => {
    const u = makeUser(t);
    const res = await t.request('POST', '/auth/local/login', { basic: u });
    expect('suspended_device_id' in res.body).toBe(false);
  });

  test('POST /auth/local/login answers 401 when the password is wrong or the user unknown', async () => {
    const u = makeUser(t);
    const wrong = await t.request('POST', '/auth/local/login', {
      basic: { email: u.email, password: 'not-it-at-all' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({
      error: 'Unauthorized',
      errorCode: 401,
      errorDescription: 'wrong username or password',
    });
    const unknown = await t.request('POST', '/auth/local/login', {
      basic: { email: 'nobody@example.com', password: 'whatever-1' },
    });
    expect(unknown.body.errorDescription).toBe('wrong username or password');
    t.clock.advance(60_000);
  });

  test('POST /auth/local/login answers 403 when the address is not verified', async () => {
    const u = makeUser(t, { verified: false });
    const res = await t.request('POST', '/auth/local/login', { basic: u });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('email address not verified');
    const basic = await t.request('GET', '/current/user', { basic: u });
    expect(basic.status).toBe(403);
  });

  test('POST /auth/local/login answers 401 when called with a token or nothing', async () => {
    const dev = await deviceToken(t);
    const withToken = await t.request('POST', '/auth/local/login', { token: dev.token });
    expect(withToken.status).toBe(401);
    expect(withToken.body.errorDescription).toBe(
      'a device token (C…, from signing in) is not accepted here; this endpoint takes a username and password (Basic)',
    );
    const none = await t.request('POST', '/auth/local/login');
    expect(none.status).toBe(401);
  });

  test('POST /auth/local/login answers 429 with Retry-After after 10 failures a minute from one address', async () => {
    const s = await startTestServer();
    try {
      const bad = { email: s.admin.email, password: 'wrong-password' };
      for (let i = 0; i < 5; i++)
        expect((await s.request('POST', '/auth/local/login', { basic: bad })).status).toBe(401);
      // Basic on other routes counts as sign-in attempts too.
      for (let i = 0; i < 5; i++)
        expect((await s.request('GET', '/client', { basic: bad })).status).toBe(401);
      s.clock.advance(10_000);
      const limited = await s.request('POST', '/auth/local/login', { basic: s.admin });
      expect(limited.status).toBe(429);
      expect(limited.body.errorDescription).toBe('too many failed attempts; try again in 50 s');
      expect(limited.body.retryAfter).toBe(50);
      expect(limited.headers.get('retry-after')).toBe('50');
      expect((await s.request('GET', '/current/user', { basic: s.admin })).status).toBe(429);
      s.clock.advance(50_000);
      expect((await s.request('POST', '/auth/local/login', { basic: s.admin })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('POST /auth/logout', () => {
  test('POST /auth/logout rotates the device token and clears the cookie', async () => {
    const login = await t.request('POST', '/auth/local/login', { basic: t.admin });
    const res = await t.request('POST', '/auth/logout', { token: login.body.token, via: 'cookie' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(res.headers.get('set-cookie')).toBe(
      'service-client-token=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax',
    );
    expect((await t.request('GET', '/current/user', { token: login.body.token })).status).toBe(401);
    const other = await deviceToken(t);
    const list = await t.request('GET', '/client', { token: other.token });
    const dev = list.body.find((d: { id: number }) => d.id === login.body.id);
    expect(dev.status).toBe('active');
    expect(dev.token).not.toBe(
      `${login.body.token.slice(0, 3)}****************${login.body.token.slice(-4)}`,
    );
  });

  test('POST /auth/logout answers 200 when the token is invalid or missing', async () => {
    expect((await t.request('POST', '/auth/logout', { token: 'Cxxxxxxxxxxxxxxxxxxxxxx' })).status).toBe(200);
    expect((await t.request('POST', '/auth/logout', { token: 'garbage' })).status).toBe(200);
    expect((await t.request('POST', '/auth/logout')).status).toBe(200);
    expect(
      (await t.request('POST', '/auth/logout', { headers: { Authorization: basicHeader('a@b.c', 'x') } }))
        .status,
    ).toBe(200);
  });

  test('POST /auth/logout leaves API tokens and channel keys working', async () => {
    const dev = await deviceToken(t);
    const api = await apiToken(t, dev);
    expect((await t.request('POST', '/auth/logout', { token: api.token })).status).toBe(200);
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(200);
    const u = makeUser(t);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    expect((await t.request('POST', '/auth/logout', { token: key })).status).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  apiToken,
  deviceToken,
  insertChannelKeyRow,
  insertChannelRow,
  makeUser,
  sudo,
} from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('POST /current/user/sudo', () => {
  test('POST /current/user/sudo opens a 900 s window when the password is right', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('POST', '/current/user/sudo', {
      token: dev.token,
      json: { method: 'password', pass: t.admin.password },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, method: 'password', expiresIn: 900 });
    expect((await t.request('GET', '/admin/outbox', { token: dev.token })).status).toBe(200);
    t.clock.advance(899_000);
    expect((await t.request('GET', '/admin/outbox', { token: dev.token })).status).toBe(200);
    t.clock.advance(1_000);
    const expired = await t.request('GET', '/admin/outbox', { token: dev.token });
    expect(expired.status).toBe(403);
    expect(expired.body.reason).toBe('sudo_required');
  });

  test('POST /current/user/sudo opens the window for the calling device only', async () => {
    const a = await deviceToken(t);
    const b = await deviceToken(t);
    await sudo(t, a);
    expect((await t.request('GET', '/admin/outbox', { token: a.token })).status).toBe(200);
    expect((await t.request('GET', '/admin/outbox', { token: b.token })).status).toBe(403);
  });

  test('POST /current/user/sudo defaults to the password method when 2FA is off', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('POST', '/current/user/sudo', {
      token: dev.token,
      json: { pass: t.admin.password },
    });
    expect(res.body).toEqual({ ok: true, method: 'password', expiresIn: 900 });
  });

  test('POST /current/user/sudo answers 400 wrong password when the password is wrong', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('POST', '/current/user/sudo', {
      token: dev.token,
      json: { method: 'password', pass: 'nope-nope' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Bad Request', errorCode: 400, errorDescription: 'wrong password' });
    t.clock.advance(60_000);
  });

  test('POST /current/user/sudo answers 400 when the method is not available without 2FA', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('POST', '/current/user/sudo', {
      token: dev.token,
      json: { method: 'totp', code: '123456' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe(
      'method totp is not available for this account; use one of: password',
    );
    t.clock.advance(60_000);
  });

  test('POST /current/user/sudo answers 403 for an API token', async () => {
    const dev = await deviceToken(t);
    const api = await apiToken(t, dev);
    const res = await t.request('POST', '/current/user/sudo', {
      token: api.token,
      json: { pass: t.admin.password },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('API tokens cannot do this; sign in with a device');
  });

  test('POST /current/user/sudo answers 403 for a channel key', async () => {
    const u = makeUser(t);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    const res = await t.request('POST', '/current/user/sudo', { token: key, json: { pass: u.password } });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('this kind of token cannot be used for account-level operations');
  });

  test('POST /current/user/sudo answers 401 for Basic credentials', async () => {
    const res = await t.request('POST', '/current/user/sudo', {
      basic: t.admin,
      json: { pass: t.admin.password },
    });
    expect(res.status).toBe(401);
  });

  test('POST /current/user/sudo answers 429 with Retry-After after 10 failures a minute from one address', async () => {
    const s = await startTestServer();
    try {
      const dev = await deviceToken(s);
      for (let i = 0; i < 10; i++) {
        const r = await s.request('POST', '/current/user/sudo', {
          token: dev.token,
          json: { pass: `wrong-${i}-pass` },
        });
        expect(r.status).toBe(400);
        s.clock.advance(1_000);
      }
      const limited = await s.request('POST', '/current/user/sudo', {
        token: dev.token,
        json: { pass: s.admin.password },
      });
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({
        error: 'Too Many Requests',
        errorCode: 429,
        errorDescription: 'too many failed attempts; try again in 50 s',
        retryAfter: 50,
      });
      expect(limited.headers.get('retry-after')).toBe('50');
      s.clock.advance(50_000);
      const ok = await s.request('POST', '/current/user/sudo', {
        token: dev.token,
        json: { pass: s.admin.password },
      });
      expect(ok.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

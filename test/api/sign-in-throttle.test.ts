import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { makeUser, sudo } from '../helpers/factories';
import { basicHeader, startTestServer, type TestServer } from '../helpers/test-server';

// Issue 20: a misbehaving script on the owner's machine (same address, wrong password for the owner's
// account) must not lock the owner's browser out of signing in; the 429 says when to retry.
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.close());

/** The name=value of the known-client cookie a sign-in set. */
function knownCookie(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith('belfry-known-client='));
  expect(set).toMatch(
    /^belfry-known-client=[\w-]+\.[\w-]+; Path=\/auth; Max-Age=31536000; HttpOnly; SameSite=Lax$/,
  );
  return set!.split(';')[0]!;
}

const login = (password: string, cookie?: string) =>
  t.request('POST', '/auth/local/login', {
    headers: {
      Authorization: basicHeader(t.admin.email, password),
      ...(cookie ? { Cookie: cookie } : {}),
    },
  });

describe('sign-in throttling', () => {
  test('POST /auth/local/login still signs in a known browser when a script from the same address has used up the limit', async () => {
    const first = await login(t.admin.password);
    expect(first.status).toBe(200);
    const known = knownCookie(first.headers);
    // The script: wrong passwords for the owner's account from the same address, no cookie.
    for (let i = 0; i < 10; i++) expect((await login('wrong-password')).status).toBe(401);
    t.clock.advance(15_000);
    const script = await login('wrong-password');
    expect(script.status).toBe(429);
    expect(script.body).toEqual({
      error: 'Too Many Requests',
      errorCode: 429,
      errorDescription: 'too many failed attempts; try again in 45 s',
      retryAfter: 45,
    });
    expect(script.headers.get('retry-after')).toBe('45');
    // A browser that never signed in to this account shares the address's count...
    expect((await login(t.admin.password)).status).toBe(429);
    // ...the owner's browser does not, and gets a fresh cookie.
    const owner = await login(t.admin.password, known);
    expect(owner.status).toBe(200);
    knownCookie(owner.headers);
  });

  test('POST /auth/local/login counts a known browser’s own failures apart and says when to retry', async () => {
    const known = knownCookie((await login(t.admin.password)).headers);
    for (let i = 0; i < 10; i++) expect((await login('wrong-password', known)).status).toBe(401);
    const locked = await login(t.admin.password, known);
    expect(locked.status).toBe(429);
    expect(locked.body.retryAfter).toBe(60);
    expect(locked.body.errorDescription).toBe('too many failed attempts; try again in 60 s');
    // The address's own bucket was not touched by the known browser.
    expect((await login(t.admin.password)).status).toBe(200);
  });

  test('POST /auth/local/login ignores a forged known-client cookie and one issued for another account', async () => {
    const known = knownCookie((await login(t.admin.password)).headers);
    const [nonce, mac] = known.split('=')[1]!.split('.') as [string, string];
    const forged = `belfry-known-client=${nonce}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    const other = makeUser(t);
    const res = await t.request('POST', '/auth/local/login', { basic: other });
    const foreign = knownCookie(res.headers);
    for (let i = 0; i < 10; i++) expect((await login('wrong-password')).status).toBe(401);
    expect((await login(t.admin.password, forged)).status).toBe(429);
    expect((await login(t.admin.password, foreign)).status).toBe(429);
    expect((await login(t.admin.password, known)).status).toBe(200);
  });

  test('POST /auth/local/login stops honouring a known-client cookie once the password has changed', async () => {
    const first = await login(t.admin.password);
    const known = knownCookie(first.headers);
    const device = { token: (first.body as { token: string }).token };
    await sudo(t, device);
    const changed = await t.request('POST', '/current/user/password', {
      token: device.token,
      json: { oldPass: t.admin.password, pass: 'a-new-password-1' },
    });
    expect(changed.status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await login('wrong-password')).status).toBe(401);
    // The cookie from before the change counts with the address now, like any browser.
    expect((await login('a-new-password-1', known)).status).toBe(429);
  });
});

import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, makeUser, sudo } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

function totp(s: TestServer, secret: string): string {
  return generateSync({ secret, epoch: Math.floor(s.clock.now() / 1000) });
}

/** A user with 2FA on: its device (with sudo open), TOTP secret and recovery codes. */
async function mfaUser(s: TestServer = t) {
  const u = makeUser(s);
  const dev = await deviceToken(s, u, 'laptop');
  await sudo(s, dev, u.password);
  const setup = await s.request('POST', '/current/user/mfa/setup', { token: dev.token });
  const confirm = await s.request('POST', '/current/user/mfa/confirm', {
    token: dev.token,
    json: { code: totp(s, setup.body.secret) },
  });
  expect(confirm.status).toBe(200);
  s.clock.advance(30_000);
  return {
    ...u,
    dev,
    secret: setup.body.secret as string,
    recoveryCodes: confirm.body.recoveryCodes as string[],
  };
}

async function challengeFor(s: TestServer, u: { email: string; password: string }, body: object = {}) {
  const res = await s.request('POST', '/auth/local/login', { basic: u, json: body });
  expect(res.status).toBe(401);
  return res.body.mfa as { challenge: string; methods: string[]; mobileCode: string; expiresIn: number };
}

describe('2FA settings', () => {
  test('POST /current/user/mfa/setup answers a secret and an otpauth URI when 2FA is off', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    const res = await t.request('POST', '/current/user/mfa/setup', { token: dev.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      uri: `otpauth://totp/Belfry:${encodeURIComponent(u.email)}?secret=${res.body.secret}&issuer=Belfry`,
    });
    const status = await t.request('GET', '/current/user/mfa', { token: dev.token });
    expect(status.body).toEqual({
      enabled: false,
      pendingSetup: true,
      recoveryCodesRemaining: 0,
      mobileConnected: false,
      mobileEnabled: false,
      approverDevices: [],
    });
  });

  test('POST /current/user/mfa/confirm enables 2FA and answers 10 recovery codes when the code is right', async () => {
    const u = await mfaUser();
    expect(u.recoveryCodes).toHaveLength(10);
    for (const c of u.recoveryCodes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const status = await t.request('GET', '/current/user/mfa', { token: u.dev.token });
    expect(status.body).toMatchObject({ enabled: true, pendingSetup: false, recoveryCodesRemaining: 10 });
    const me = await t.request('GET', '/current/user', { token: u.dev.token });
    expect(me.body.mfaEnabled).toBe(true);
  });

  test('POST /current/user/mfa/confirm answers 401 invalid code when the code is wrong', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    await t.request('POST', '/current/user/mfa/setup', { token: dev.token });
    const res = await t.request('POST', '/current/user/mfa/confirm', {
      token: dev.token,
      json: { code: '000000' },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Unauthorized', errorCode: 401, errorDescription: 'invalid code' });
  });

  test('POST /current/user/mfa/confirm answers 400 when no setup is in progress', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    const res = await t.request('POST', '/current/user/mfa/confirm', {
      token: dev.token,
      json: { code: '123456' },
    });
    expect(res.status).toBe(400);
  });

  test('POST /current/user/mfa/setup answers 409 when 2FA is already on', async () => {
    const u = await mfaUser();
    const res = await t.request('POST', '/current/user/mfa/setup', { token: u.dev.token });
    expect(res.status).toBe(409);
    expect(res.body.errorDescription).toBe('two-factor authentication is already enabled');
  });

  test('2FA settings answer 403 sudo_required with totp and recovery methods when the window is closed', async () => {
    const u = await mfaUser();
    t.clock.advance(900_000);
    for (const path of [
      '/current/user/mfa/setup',
      '/current/user/mfa/disable',
      '/current/user/mfa/recovery-codes',
      '/current/user/mfa/mobile/start',
      '/current/user/mfa/mobile/disable',
    ]) {
      const res = await t.request('POST', path, { token: u.dev.token });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ reason: 'sudo_required', methods: ['totp', 'recovery'] });
    }
    expect(
      (await t.request('DELETE', '/current/user/mfa/mobile/devices/1', { token: u.dev.token })).status,
    ).toBe(403);
    expect(
      (await t.request('POST', '/current/user/mfa/confirm', { token: u.dev.token, json: { code: '1' } }))
        .status,
    ).toBe(403);
  });

  test('2FA settings answer 403 for an API token', async () => {
    const u = await mfaUser();
    const api = await apiToken(t, u.dev);
    const res = await t.request('GET', '/current/user/mfa', { token: api.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('API tokens cannot do this; sign in with a device');
  });

  test('POST /current/user/mfa/recovery-codes replaces the codes', async () => {
    const u = await mfaUser();
    const res = await t.request('POST', '/current/user/mfa/recovery-codes', { token: u.dev.token });
    expect(res.status).toBe(200);
    expect(res.body.recoveryCodes).toHaveLength(10);
    const c = await challengeFor(t, u);
    const old = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'recovery', code: u.recoveryCodes[0] },
    });
    expect(old.status).toBe(401);
    const fresh = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'recovery', code: res.body.recoveryCodes[0] },
    });
    expect(fresh.status).toBe(200);
  });

  test('POST /current/user/mfa/disable turns 2FA off and Basic works again', async () => {
    const u = await mfaUser();
    expect((await t.request('GET', '/current/user', { basic: u })).status).toBe(401);
    const res = await t.request('POST', '/current/user/mfa/disable', { token: u.dev.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enabled: false, recoveryCodesRemaining: 0 });
    expect((await t.request('GET', '/current/user', { basic: u })).status).toBe(200);
  });
});

describe('sign-in with a second factor', () => {
  test('POST /auth/local/login answers 401 with the mfa challenge when 2FA is on', async () => {
    const u = await mfaUser();
    const res = await t.request('POST', '/auth/local/login', { basic: u });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'Unauthorized',
      errorCode: 401,
      errorDescription: 'second factor required',
      mfa: {
        challenge: expect.any(String),
        methods: ['totp', 'recovery'],
        mobileCode: expect.stringMatching(/^\d{6}$/),
        expiresIn: 300,
      },
    });
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('Basic answers 401 second factor required for a 2FA account', async () => {
    const u = await mfaUser();
    const res = await t.request('GET', '/client', { basic: u });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'Unauthorized',
      errorCode: 401,
      errorDescription: 'second factor required',
    });
  });

  test('POST /auth/mfa/verify signs in with a TOTP code and answers like login', async () => {
    const u = await mfaUser();
    const c = await challengeFor(t, u, { name: 'Chrome', platform: 'web' });
    const res = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'totp', code: totp(t, u.secret) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Chrome',
      token: expect.stringMatching(/^C/),
      user_id: u.id,
      platform: 'web',
    });
    expect(res.headers.get('set-cookie')).toContain(`service-client-token=${res.body.token};`);
    expect((await t.request('GET', '/current/user', { token: res.body.token })).status).toBe(200);
  });

  test('POST /auth/mfa/verify answers 410 when the challenge was used', async () => {
    const u = await mfaUser();
    const c = await challengeFor(t, u);
    expect(
      (
        await t.request('POST', '/auth/mfa/verify', {
          json: { challenge: c.challenge, method: 'recovery', code: u.recoveryCodes[0] },
        })
      ).status,
    ).toBe(200);
    const again = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'recovery', code: u.recoveryCodes[1] },
    });
    expect(again.status).toBe(410);
    expect(again.body.errorDescription).toBe('this challenge has expired or was already used; sign in again');
    expect(
      (await t.request('POST', '/auth/mfa/challenge', { json: { challenge: c.challenge } })).status,
    ).toBe(410);
  });

  test('POST /auth/mfa/verify answers 410 when the challenge is older than 300 s', async () => {
    const u = await mfaUser();
    const c = await challengeFor(t, u);
    t.clock.advance(300_000);
    const res = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'totp', code: totp(t, u.secret) },
    });
    expect(res.status).toBe(410);
  });

  test('POST /auth/mfa/verify answers 404 when the challenge is unknown', async () => {
    const res = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: 'not-a-challenge', method: 'totp', code: '123456' },
    });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('challenge not found');
  });

  test('POST /auth/mfa/verify answers 401 invalid code when a TOTP code is reused', async () => {
    const u = await mfaUser();
    const code = totp(t, u.secret);
    const first = await challengeFor(t, u);
    expect(
      (
        await t.request('POST', '/auth/mfa/verify', {
          json: { challenge: first.challenge, method: 'totp', code },
        })
      ).status,
    ).toBe(200);
    const second = await challengeFor(t, u);
    const reused = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: second.challenge, method: 'totp', code },
    });
    expect(reused.status).toBe(401);
    expect(reused.body.errorDescription).toBe('invalid code');
    t.clock.advance(30_000);
    const next = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: second.challenge, method: 'totp', code: totp(t, u.secret) },
    });
    expect(next.status).toBe(200);
  });

  test('POST /auth/mfa/verify answers 401 invalid code when a recovery code is used twice', async () => {
    const u = await mfaUser();
    const a = await challengeFor(t, u);
    expect(
      (
        await t.request('POST', '/auth/mfa/verify', {
          json: { challenge: a.challenge, method: 'recovery', code: u.recoveryCodes[3]!.toUpperCase() },
        })
      ).status,
    ).toBe(200);
    const b = await challengeFor(t, u);
    const res = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: b.challenge, method: 'recovery', code: u.recoveryCodes[3] },
    });
    expect(res.status).toBe(401);
    const status = await t.request('GET', '/current/user/mfa', { token: u.dev.token });
    expect(status.body.recoveryCodesRemaining).toBe(9);
  });

  test('POST /auth/mfa/verify answers 400 when the method is not offered or the code is missing', async () => {
    const u = await mfaUser();
    const c = await challengeFor(t, u);
    const mobile = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'mobile' },
    });
    expect(mobile.status).toBe(400);
    expect(mobile.body.errorDescription).toBe(
      'method mobile is not available for this sign-in; use one of: totp, recovery',
    );
    const noCode = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'totp' },
    });
    expect(noCode.status).toBe(400);
  });

  test('POST /auth/mfa/verify answers 429 after 10 wrong codes a minute from one address', async () => {
    const s = await startTestServer();
    try {
      const u = await mfaUser(s);
      const c = await challengeFor(s, u);
      for (let i = 0; i < 10; i++) {
        const r = await s.request('POST', '/auth/mfa/verify', {
          json: { challenge: c.challenge, method: 'totp', code: '000000' },
        });
        expect(r.status).toBe(401);
      }
      const limited = await s.request('POST', '/auth/mfa/verify', {
        json: { challenge: c.challenge, method: 'totp', code: totp(s, u.secret) },
      });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  test('POST /auth/mfa/challenge answers the status and 404 when the challenge is unknown', async () => {
    const u = await mfaUser();
    const c = await challengeFor(t, u);
    t.clock.advance(10_000);
    const res = await t.request('POST', '/auth/mfa/challenge', { json: { challenge: c.challenge } });
    expect(res.body).toEqual({ status: 'pending', mobileCode: c.mobileCode, expiresIn: 290 });
    expect((await t.request('POST', '/auth/mfa/challenge', { json: { challenge: 'nope' } })).status).toBe(
      404,
    );
  });

  test('POST /current/user/sudo accepts a TOTP code once when 2FA is on', async () => {
    const u = await mfaUser();
    t.clock.advance(900_000);
    const code = totp(t, u.secret);
    const ok = await t.request('POST', '/current/user/sudo', {
      token: u.dev.token,
      json: { method: 'totp', code },
    });
    expect(ok.body).toEqual({ ok: true, method: 'totp', expiresIn: 900 });
    const reused = await t.request('POST', '/current/user/sudo', {
      token: u.dev.token,
      json: { method: 'totp', code },
    });
    expect(reused.status).toBe(401);
    expect(reused.body.errorDescription).toBe('invalid code');
    const pw = await t.request('POST', '/current/user/sudo', {
      token: u.dev.token,
      json: { method: 'password', pass: u.password },
    });
    expect(pw.status).toBe(400);
    const rec = await t.request('POST', '/current/user/sudo', {
      token: u.dev.token,
      json: { method: 'recovery', code: u.recoveryCodes[9] },
    });
    expect(rec.body.method).toBe('recovery');
  });
});

describe('phone approval (Mobile flow)', () => {
  /** A 2FA user whose phone is linked as an approver. */
  async function linkedUser() {
    const u = await mfaUser();
    // Basic no longer works for a 2FA account: the phone is added with the laptop's device token.
    const created = await t.request('POST', '/client', { token: u.dev.token, json: { name: 'phone' } });
    const phone = { id: created.body.id as number, token: created.body.token as string };
    const start = await t.request('POST', '/current/user/mfa/mobile/start', { token: u.dev.token });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({
      challenge: expect.any(String),
      code: expect.stringMatching(/^\d{6}$/),
      expiresIn: 300,
    });
    const pending = await t.request('GET', '/auth/mfa/pending', { token: phone.token });
    expect(pending.body).toEqual([
      {
        id: expect.any(Number),
        kind: 'link',
        ip: expect.any(String),
        userAgent: expect.any(String),
        createdAt: new Date(t.clock.now()).toISOString(),
        expiresIn: 300,
      },
    ]);
    const early = await t.request('POST', '/current/user/mfa/mobile/confirm', {
      token: u.dev.token,
      json: { challenge: start.body.challenge },
    });
    expect(early.status).toBe(409);
    const approve = await t.request('POST', '/auth/mfa/approve', {
      token: phone.token,
      json: { code: start.body.code },
    });
    expect(approve.body).toEqual({ status: 'approved', kind: 'link', expiresIn: 300 });
    const confirm = await t.request('POST', '/current/user/mfa/mobile/confirm', {
      token: u.dev.token,
      json: { challenge: start.body.challenge },
    });
    expect(confirm.status).toBe(200);
    expect(confirm.body).toMatchObject({
      mobileConnected: true,
      mobileEnabled: true,
      approverDevices: [
        { id: phone.id, name: 'phone', platform: '', status: 'active', addedAt: expect.any(String) },
      ],
    });
    return { ...u, phone };
  }

  test('the mobile flow signs in once the phone entered the code', async () => {
    const u = await linkedUser();
    const c = await challengeFor(t, u, { name: 'office pc' });
    expect(c.methods).toEqual(['totp', 'mobile', 'recovery']);
    expect(
      (await t.request('POST', '/auth/mfa/verify', { json: { challenge: c.challenge, method: 'mobile' } }))
        .body.errorDescription,
    ).toBe('sign-in not approved on the phone yet');
    const pending = await t.request('GET', '/auth/mfa/pending', { token: u.phone.token });
    expect(pending.body).toHaveLength(1);
    expect(pending.body[0]).toMatchObject({ kind: 'login', expiresIn: 300 });
    expect(JSON.stringify(pending.body)).not.toContain(c.mobileCode);
    const wrong = await t.request('POST', '/auth/mfa/approve', {
      token: u.phone.token,
      json: { code: c.mobileCode === '000000' ? '000001' : '000000' },
    });
    expect(wrong.status).toBe(404);
    const ok = await t.request('POST', '/auth/mfa/approve', {
      token: u.phone.token,
      json: { code: c.mobileCode },
    });
    expect(ok.body).toEqual({ status: 'approved', kind: 'login', expiresIn: 300 });
    const poll = await t.request('POST', '/auth/mfa/challenge', { json: { challenge: c.challenge } });
    expect(poll.body).toEqual({ status: 'approved', mobileCode: c.mobileCode, expiresIn: 300 });
    const verify = await t.request('POST', '/auth/mfa/verify', {
      json: { challenge: c.challenge, method: 'mobile' },
    });
    expect(verify.status).toBe(200);
    expect(verify.body.name).toBe('office pc');
    expect(
      (await t.request('POST', '/auth/mfa/verify', { json: { challenge: c.challenge, method: 'mobile' } }))
        .status,
    ).toBe(410);
  });

  test('POST /auth/mfa/approve answers 403 when the device is not an approver', async () => {
    const u = await linkedUser();
    const c = await challengeFor(t, u);
    const res = await t.request('POST', '/auth/mfa/approve', {
      token: u.dev.token,
      json: { code: c.mobileCode },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('this device is not an approver');
  });

  test('POST /auth/mfa/approve answers 404 for a code of another account', async () => {
    const u = await linkedUser();
    const other = await linkedUser();
    const c = await challengeFor(t, u);
    const res = await t.request('POST', '/auth/mfa/approve', {
      token: other.phone.token,
      json: { code: c.mobileCode },
    });
    expect(res.status).toBe(404);
  });

  test('DELETE /current/user/mfa/mobile/devices/{id} removes an approver and 404 when it is not one', async () => {
    const u = await linkedUser();
    const res = await t.request('DELETE', `/current/user/mfa/mobile/devices/${u.phone.id}`, {
      token: u.dev.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mobileConnected: false, mobileEnabled: true, approverDevices: [] });
    const c = await challengeFor(t, u);
    expect(c.methods).toEqual(['totp', 'recovery']);
    const again = await t.request('DELETE', `/current/user/mfa/mobile/devices/${u.phone.id}`, {
      token: u.dev.token,
    });
    expect(again.status).toBe(404);
  });

  test('POST /current/user/mfa/mobile/disable removes every approver', async () => {
    const u = await linkedUser();
    const res = await t.request('POST', '/current/user/mfa/mobile/disable', { token: u.dev.token });
    expect(res.body).toMatchObject({ mobileConnected: false, mobileEnabled: false, approverDevices: [] });
  });

  test('POST /current/user/mfa/mobile/start answers 400 when 2FA is off', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    const res = await t.request('POST', '/current/user/mfa/mobile/start', { token: dev.token });
    expect(res.status).toBe(400);
  });

  test('GET /auth/mfa/pending answers 403 for an API token', async () => {
    const u = await mfaUser();
    const api = await apiToken(t, u.dev);
    expect((await t.request('GET', '/auth/mfa/pending', { token: api.token })).status).toBe(403);
    expect(
      (await t.request('POST', '/auth/mfa/approve', { token: api.token, json: { code: '123456' } })).status,
    ).toBe(403);
  });
});

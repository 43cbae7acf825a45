import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { OutboxRow } from '../../server/features/mail/store';
import { apiToken, deviceToken, makeUser, sudo } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let admin: { id: number; token: string };
beforeAll(async () => {
  t = await startTestServer();
  admin = await deviceToken(t);
  await sudo(t, admin);
});
afterAll(() => t.close());

/** Mail goes out after the answer (setImmediate); wait a few turns of the event loop for it. */
async function mailTo(s: TestServer, to: string): Promise<OutboxRow> {
  for (let i = 0; i < 50; i++) {
    const row = s.server.ctx.db.first<OutboxRow>(
      'SELECT * FROM mail_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1',
      [to],
    );
    if (row) return row;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no mail to ${to}`);
}

function linkToken(text: string): string {
  const m = /token=([^\s]+)/.exec(text);
  if (!m) throw new Error('no link in mail');
  return decodeURIComponent(m[1]!);
}

describe('GET /user', () => {
  test('GET /user pages by ascending id with since and next when there are more', async () => {
    const s = await startTestServer();
    try {
      const dev = await deviceToken(s);
      const ids = [makeUser(s).id, makeUser(s).id, makeUser(s).id];
      const first = await s.request('GET', '/user?limit=2', { token: dev.token });
      expect(first.status).toBe(200);
      expect(first.body.paging).toEqual({
        size: 2,
        limit: 2,
        since: ids[0],
        next: `/user?limit=2&since=${ids[0]}`,
      });
      expect(first.body.users.map((u: { id: number }) => u.id)).toEqual([1, ids[0]]);
      expect(first.body.users[0]).toEqual({
        id: 1,
        name: s.admin.email,
        email: s.admin.email,
        admin: true,
        verified: true,
        plan: 'business',
        mfaEnabled: false,
        balanceKopecks: 0,
        image: '',
        createdAt: '2026-01-15T12:00:00.000Z',
      });
      const last = await s.request('GET', `/user?limit=2&since=${ids[0]}`, { token: dev.token });
      expect(last.body.paging).toEqual({ size: 2, limit: 2 });
      expect(last.body.users.map((u: { id: number }) => u.id)).toEqual([ids[1], ids[2]]);
      const legacy = await s.request('GET', `/user?limit=2&since=${ids[0]}`, {
        token: dev.token,
        via: 'legacy-key',
      });
      expect(legacy.body.paging).toEqual({ size: 2, limit: 2, since: 0 });
      expect((await s.request('GET', '/user?limit=0', { token: dev.token })).status).toBe(400);
      expect((await s.request('GET', '/user?limit=201', { token: dev.token })).status).toBe(400);
    } finally {
      await s.close();
    }
  });

  test('GET /user answers 403 for a user who is not an administrator', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    const res = await t.request('GET', '/user', { token: dev.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('administrators only');
  });

  test('GET /user accepts an administrator API token and refuses Basic', async () => {
    const api = await apiToken(t, admin);
    expect((await t.request('GET', '/user', { token: api.token })).status).toBe(200);
    expect((await t.request('GET', '/user', { basic: t.admin })).status).toBe(401);
  });
});

describe('POST /user', () => {
  test('POST /user creates a verified user when an administrator with sudo asks', async () => {
    const res = await t.request('POST', '/user', {
      token: admin.token,
      json: { email: 'new-one@example.com', pass: 'a-good-password', admin: false },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      email: 'new-one@example.com',
      name: 'new-one@example.com',
      admin: false,
      verified: true,
      plan: 'free',
    });
    expect(
      (
        await t.request('GET', '/current/user', {
          basic: { email: 'new-one@example.com', password: 'a-good-password' },
        })
      ).status,
    ).toBe(200);
  });

  test('POST /user mails a set-your-password link when no pass is given', async () => {
    const res = await t.request('POST', '/user', {
      token: admin.token,
      json: { email: 'nopass@example.com' },
    });
    expect(res.status).toBe(200);
    const mail = await mailTo(t, 'nopass@example.com');
    expect(mail.subject).toBe('Your Belfry account');
    const confirm = await t.request('POST', '/user/reset-password/confirm', {
      json: { token: linkToken(mail.text), pass: 'chosen-password' },
    });
    expect(confirm.status).toBe(200);
    expect(
      (
        await t.request('GET', '/current/user', {
          basic: { email: 'nopass@example.com', password: 'chosen-password' },
        })
      ).status,
    ).toBe(200);
  });

  test('POST /user answers 409 when the email is taken and 400 when input is bad', async () => {
    const u = makeUser(t);
    const taken = await t.request('POST', '/user', {
      token: admin.token,
      json: { email: u.email.toUpperCase(), pass: 'a-good-password' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.errorDescription).toBe('a user with this email already exists');
    const short = await t.request('POST', '/user', {
      token: admin.token,
      json: { email: 'x@example.com', pass: 'short' },
    });
    expect(short.status).toBe(400);
    expect(short.body.errorDescription).toBe('pass: must be at least 8 characters');
    const long = await t.request('POST', '/user', {
      token: admin.token,
      json: { email: 'x@example.com', pass: 'é'.repeat(37) },
    });
    expect(long.body.errorDescription).toBe('pass: must be at most 72 bytes');
    const noEmail = await t.request('POST', '/user', {
      token: admin.token,
      json: { pass: 'a-good-password' },
    });
    expect(noEmail.status).toBe(400);
  });

  test('POST /user answers 403 sudo_required without a sudo window and 401 without credentials', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('POST', '/user', {
      token: dev.token,
      json: { email: 'y@example.com', pass: 'a-good-password' },
    });
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe('sudo_required');
    const anon = await t.request('POST', '/user', {
      json: { email: 'y@example.com', pass: 'a-good-password' },
    });
    expect(anon.status).toBe(401);
    const api = await apiToken(t, admin);
    const viaApi = await t.request('POST', '/user', {
      token: api.token,
      json: { email: 'y@example.com', pass: 'a-good-password' },
    });
    expect(viaApi.status).toBe(403);
  });
});

describe('self-registration', () => {
  test('POST /user without credentials registers an unverified user and mails a verification link when registration is on', async () => {
    const s = await startTestServer({ config: { registration: true } });
    try {
      const res = await s.request('POST', '/user', {
        json: { email: 'self@example.com', pass: 'my-password-1', admin: true },
      });
      expect(res.status).toBe(200);
      // The same answer as for a taken address (issue 21): no id, and `admin` was ignored.
      expect(res.body).toEqual({ email: 'self@example.com', verified: false });
      const row = s.server.ctx.db.first<{ admin: number }>('SELECT admin FROM users WHERE email = ?', [
        'self@example.com',
      ]);
      expect(row?.admin).toBe(0);
      const who = { email: 'self@example.com', password: 'my-password-1' };
      const refused = await s.request('POST', '/auth/local/login', { basic: who });
      expect(refused.status).toBe(403);
      expect(refused.body.errorDescription).toBe('email address not verified');
      const mail = await mailTo(s, 'self@example.com');
      // The mailed link opens a page of the UI (which then calls GET /user/verify), not the JSON API.
      expect(mail.text).toContain(`${s.url}/verify-email?token=`);
      const page = await fetch(/(http:\S+)/.exec(mail.text)![1]!, { headers: { Accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const bad = await s.request('GET', '/user/verify?token=nope');
      expect(bad.status).toBe(400);
      expect(bad.body.errorDescription).toBe('invalid or expired verification link');
      const verify = await s.request('GET', `/user/verify?token=${encodeURIComponent(linkToken(mail.text))}`);
      expect(verify.status).toBe(200);
      expect(verify.body).toEqual({ verified: true, email: 'self@example.com' });
      expect((await s.request('POST', '/auth/local/login', { basic: who })).status).toBe(200);
      expect(
        (await s.request('GET', `/user/verify?token=${encodeURIComponent(linkToken(mail.text))}`)).status,
      ).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('GET /user/verify answers 400 when the link is older than 7 days', async () => {
    const s = await startTestServer({ config: { registration: true } });
    try {
      await s.request('POST', '/user', { json: { email: 'late@example.com', pass: 'my-password-1' } });
      const mail = await mailTo(s, 'late@example.com');
      s.clock.advance(7 * 86_400_000);
      expect(
        (await s.request('GET', `/user/verify?token=${encodeURIComponent(linkToken(mail.text))}`)).status,
      ).toBe(400);
    } finally {
      await s.close();
    }
  });
});

describe('PUT /user/{id}', () => {
  test('PUT /user/{id} promotes and demotes, admin absent meaning false', async () => {
    const u = makeUser(t);
    const up = await t.request('PUT', `/user/${u.id}`, {
      token: admin.token,
      json: { email: u.email, admin: true },
    });
    expect(up.status).toBe(200);
    expect(up.body.admin).toBe(true);
    const down = await t.request('PUT', `/user/${u.id}`, { token: admin.token, json: { email: u.email } });
    expect(down.body.admin).toBe(false);
  });

  test('PUT /user/{id} answers 400 when the email differs', async () => {
    const u = makeUser(t);
    const res = await t.request('PUT', `/user/${u.id}`, {
      token: admin.token,
      json: { email: 'other@example.com' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('email cannot be changed');
  });

  test('PUT /user/{id} with a new password signs out every device and deletes API tokens', async () => {
    const u = makeUser(t);
    const d1 = await deviceToken(t, u);
    const d2 = await deviceToken(t, u);
    const api = await apiToken(t, d1);
    const events: unknown[] = [];
    const off = t.server.ctx.bus.on('user:devices_invalidated', (e) => events.push(e));
    const res = await t.request('PUT', `/user/${u.id}`, {
      token: admin.token,
      json: { email: u.email, pass: 'brand-new-pass' },
    });
    off();
    expect(res.status).toBe(200);
    expect(events).toEqual([{ userId: u.id }]);
    for (const tok of [d1.token, d2.token, api.token])
      expect((await t.request('GET', '/current/user', { token: tok })).status).toBe(401);
    expect(
      (await t.request('GET', '/current/user', { basic: { email: u.email, password: 'brand-new-pass' } }))
        .status,
    ).toBe(200);
  });

  test('PUT /user/{id} with resetMfa turns the user 2FA off', async () => {
    const u = makeUser(t);
    t.server.ctx.db.transaction(() =>
      t.server.ctx.db.run('INSERT INTO user_mfa (user_id, secret, enabled, updated_at) VALUES (?, ?, 1, ?)', [
        u.id,
        'x',
        0,
      ]),
    );
    expect((await t.request('GET', '/current/user', { basic: u })).status).toBe(401);
    const res = await t.request('PUT', `/user/${u.id}`, {
      token: admin.token,
      json: { email: u.email, resetMfa: true },
    });
    expect(res.body.mfaEnabled).toBe(false);
    expect((await t.request('GET', '/current/user', { basic: u })).status).toBe(200);
  });

  test('PUT /user/{id} answers 400 when it would demote the last administrator', async () => {
    const s = await startTestServer();
    try {
      const dev = await deviceToken(s);
      await sudo(s, dev);
      const res = await s.request('PUT', '/user/1', {
        token: dev.token,
        json: { email: s.admin.email, admin: false },
      });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toBe('the last administrator cannot be removed or demoted');
    } finally {
      await s.close();
    }
  });

  test('PUT /user/{id} answers 404 for an unknown user', async () => {
    const res = await t.request('PUT', '/user/99999', {
      token: admin.token,
      json: { email: 'x@example.com' },
    });
    expect(res.status).toBe(404);
    expect(res.body.errorDescription).toBe('user not found');
  });
});

describe('POST /user/{id}/plan and DELETE /user/{id}', () => {
  test('POST /user/{id}/plan sets any plan', async () => {
    const u = makeUser(t);
    const res = await t.request('POST', `/user/${u.id}/plan`, {
      token: admin.token,
      json: { plan: 'business' },
    });
    expect(res.status).toBe(200);
    expect(res.body.plan).toBe('business');
    expect(
      (await t.request('POST', `/user/${u.id}/plan`, { token: admin.token, json: { plan: 'gold' } })).status,
    ).toBe(400);
    expect(
      (await t.request('POST', '/user/99999/plan', { token: admin.token, json: { plan: 'pro' } })).status,
    ).toBe(404);
  });

  test('POST /user/{id}/plan answers 403 for a user who is not an administrator', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    const res = await t.request('POST', `/user/${u.id}/plan`, {
      token: dev.token,
      json: { plan: 'business' },
    });
    expect(res.status).toBe(403);
  });

  test('DELETE /user/{id} deletes the user and their devices', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    const res = await t.request('DELETE', `/user/${u.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await t.request('GET', '/current/user', { token: dev.token })).status).toBe(401);
    expect((await t.request('DELETE', `/user/${u.id}`, { token: admin.token })).status).toBe(404);
  });

  test('DELETE /user/{id} answers 400 when deleting yourself', async () => {
    const res = await t.request('DELETE', '/user/1', { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('you cannot delete yourself');
  });
});

describe('password reset', () => {
  test('POST /user/reset-password answers 200 for known and unknown addresses alike', async () => {
    const u = makeUser(t);
    const known = await t.request('POST', '/user/reset-password', { json: { email: u.email } });
    const unknown = await t.request('POST', '/user/reset-password', { json: { email: 'ghost@example.com' } });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.body).toEqual({});
    expect(unknown.body).toEqual({});
    expect((await mailTo(t, u.email)).subject).toBe('Reset your Belfry password');
  });

  test('POST /user/reset-password sends one account at most 3 mails an hour and limits each address', async () => {
    const u = makeUser(t);
    t.clock.advance(61_000); // a fresh per-address window
    const outboxCount = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); // mail goes out after the answer
      return t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM mail_outbox WHERE to_addr = ?', [
        u.email,
      ])!.n;
    };
    for (let i = 0; i < 5; i++) {
      const res = await t.request('POST', '/user/reset-password', { json: { email: u.email } });
      expect(res.status).toBe(200);
    }
    expect(await outboxCount()).toBe(3);
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/user/reset-password', { json: { email: `x${i}@example.com` } });
    const limited = await t.request('POST', '/user/reset-password', { json: { email: 'ghost@example.com' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(3_600_000);
    expect((await t.request('POST', '/user/reset-password', { json: { email: u.email } })).status).toBe(200);
    expect(await outboxCount()).toBe(4);
  });

  test('POST /user/reset-password/confirm sets the password, rotates device tokens and deletes API tokens', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    const api = await apiToken(t, dev);
    await t.request('POST', '/user/reset-password', { json: { email: u.email } });
    const token = linkToken((await mailTo(t, u.email)).text);
    const res = await t.request('POST', '/user/reset-password/confirm', {
      json: { token, pass: 'after-reset-1' },
    });
    expect(res.status).toBe(200);
    expect((await t.request('GET', '/current/user', { token: dev.token })).status).toBe(401);
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(401);
    const fresh = await deviceToken(t, { email: u.email, password: 'after-reset-1' });
    const list = await t.request('GET', '/client', { token: fresh.token });
    expect(list.body.find((d: { id: number }) => d.id === dev.id).status).toBe('active');
    const again = await t.request('POST', '/user/reset-password/confirm', {
      json: { token, pass: 'after-reset-2' },
    });
    expect(again.status).toBe(400);
    expect(again.body.errorDescription).toBe('invalid or expired reset token');
  });

  test('POST /user/reset-password/confirm answers 400 when the link expired or the password is too short', async () => {
    const u = makeUser(t);
    await t.request('POST', '/user/reset-password', { json: { email: u.email } });
    const token = linkToken((await mailTo(t, u.email)).text);
    expect(
      (await t.request('POST', '/user/reset-password/confirm', { json: { token, pass: 'short' } })).status,
    ).toBe(400);
    t.clock.advance(3_600_000);
    expect(
      (await t.request('POST', '/user/reset-password/confirm', { json: { token, pass: 'long-enough-1' } }))
        .status,
    ).toBe(400);
  });
});

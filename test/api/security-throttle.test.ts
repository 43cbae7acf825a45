import bcrypt from 'bcryptjs';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { OutboxRow } from '../../server/features/mail/store';
import { clientAddress } from '../../server/http/auth';
import {
  LOGIN_ACCOUNT_FAILURES_PER_HOUR,
  LOGIN_FAILURES_PER_MINUTE,
  REGISTRATION_MAILS_PER_HOUR,
  REGISTRATIONS_PER_ADDRESS_PER_HOUR,
  REGISTRATIONS_PER_HOUR,
} from '../../server/lib/limits';
import { deviceToken, makeChannel, makeUser, sudo } from '../helpers/factories';
import { type ApiResponse, startTestServer, type TestServer } from '../helpers/test-server';

const FORBIDDEN_CROSS_SITE = {
  error: 'Forbidden',
  errorCode: 403,
  errorDescription: 'a request from another site cannot use the session cookie',
};
/** The 429 of a spent limit: when to retry in the text, in `retryAfter` and in Retry-After (issue 20). */
const tooMany = (sec: number) => ({
  error: 'Too Many Requests',
  errorCode: 429,
  errorDescription: `too many failed attempts; try again in ${sec} s`,
  retryAfter: sec,
});

function totp(s: TestServer, secret: string): string {
  return generateSync({ secret, epoch: Math.floor(s.clock.now() / 1000) });
}

function statuses(list: ApiResponse[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of list) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Issue 21, item 4: the session cookie of a page on another port of the same host must not work. */
describe('cross-site requests with the session cookie', () => {
  let t: TestServer;
  let otherOrigin: string;
  beforeAll(async () => {
    t = await startTestServer();
    otherOrigin = `http://127.0.0.1:${Number(new URL(t.url).port) + 1}`;
  });
  afterAll(() => t.close());

  /** An administrator signed in like a browser (the cookie's token), with sudo open and 2FA on. */
  async function browserAdmin() {
    const u = makeUser(t, { admin: true });
    const login = await t.request('POST', '/auth/local/login', { basic: u });
    const cookie: string = login.body.token;
    await sudo(t, { token: cookie }, u.password);
    const setup = await t.request('POST', '/current/user/mfa/setup', { token: cookie });
    const confirm = await t.request('POST', '/current/user/mfa/confirm', {
      token: cookie,
      json: { code: totp(t, setup.body.secret) },
    });
    expect(confirm.status).toBe(200);
    t.clock.advance(30_000);
    // Sudo now takes a TOTP code (2FA is on); the window opened above is still open.
    const channel = await makeChannel(t, cookie);
    // A phone linked as the approver of 2FA sign-ins, itself signed in with the cookie.
    const phone = await t.request('POST', '/client', { token: cookie, json: { name: 'phone' } });
    const start = await t.request('POST', '/current/user/mfa/mobile/start', { token: cookie });
    await t.request('POST', '/auth/mfa/approve', {
      token: phone.body.token,
      json: { code: start.body.code },
    });
    const linked = await t.request('POST', '/current/user/mfa/mobile/confirm', {
      token: cookie,
      json: { challenge: start.body.challenge },
    });
    expect(linked.body.mobileEnabled).toBe(true);
    return { ...u, cookie, phone: phone.body.token as string, channel };
  }

  /** The four requests of the audit, sent with the cookie and the given extra headers. */
  async function forged(u: Awaited<ReturnType<typeof browserAdmin>>, headers: Record<string, string>) {
    const attackerSignIn = await t.request('POST', '/auth/local/login', { basic: u });
    const mfa = attackerSignIn.body.mfa as { challenge: string; mobileCode: string };
    const cookie = (token: string) => ({ token, via: 'cookie' as const, headers });
    return {
      mfa,
      share: await t.request('POST', `/application/${u.channel.id}/share`, {
        ...cookie(u.cookie),
        json: { email: makeUser(t).email, permission: 'view' },
      }),
      user: await t.request('POST', '/user', {
        ...cookie(u.cookie),
        json: { email: `evil-${u.id}@example.com`, pass: 'attacker-password', admin: true },
      }),
      approve: await t.request('POST', '/auth/mfa/approve', {
        ...cookie(u.phone),
        json: { code: mfa.mobileCode },
      }),
      disable: await t.request('POST', '/current/user/mfa/disable', cookie(u.cookie)),
    };
  }

  test('cookie POSTs from another port of 127.0.0.1 answer 403 and change nothing', async () => {
    const u = await browserAdmin();
    const r = await forged(u, { Origin: otherOrigin });
    for (const res of [r.share, r.user, r.disable, r.approve]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN_CROSS_SITE);
    }
    const shares = await t.request('GET', `/application/${u.channel.id}/share`, { token: u.cookie });
    expect(shares.body).toEqual([]);
    const users = await t.request('GET', '/user?limit=200', { token: u.cookie });
    expect(users.body.users.map((x: { email: string }) => x.email)).not.toContain(`evil-${u.id}@example.com`);
    expect((await t.request('GET', '/current/user/mfa', { token: u.cookie })).body.enabled).toBe(true);
    const poll = await t.request('POST', '/auth/mfa/challenge', { json: { challenge: r.mfa.challenge } });
    expect(poll.body.status).toBe('pending');
  });

  test('cookie POSTs with Sec-Fetch-Site cross-site or same-site, or Origin null, answer 403', async () => {
    const u = await browserAdmin();
    const variants: Record<string, string>[] = [
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site' },
      { Origin: 'null' },
    ];
    for (const headers of variants) {
      const r = await forged(u, headers);
      expect([r.share.status, r.user.status, r.disable.status, r.approve.status]).toEqual([
        403, 403, 403, 403,
      ]);
      expect(r.share.body).toEqual(FORBIDDEN_CROSS_SITE);
    }
    expect((await t.request('GET', '/current/user/mfa', { token: u.cookie })).body.enabled).toBe(true);
  });

  test('cookie POSTs from the app itself succeed, by Origin or by Sec-Fetch-Site same-origin', async () => {
    const a = await browserAdmin();
    const byOrigin = await forged(a, { Origin: t.url });
    expect([
      byOrigin.share.status,
      byOrigin.user.status,
      byOrigin.disable.status,
      byOrigin.approve.status,
    ]).toEqual([200, 200, 200, 200]);
    const b = await browserAdmin();
    const bySite = await forged(b, { 'Sec-Fetch-Site': 'same-origin' });
    expect([bySite.share.status, bySite.user.status, bySite.disable.status, bySite.approve.status]).toEqual([
      200, 200, 200, 200,
    ]);
    expect((await t.request('GET', '/current/user/mfa', { token: b.cookie })).body.enabled).toBe(false);
  });

  test('an allowed origin may use the cookie; GET and Bearer requests are not checked', async () => {
    const s = await startTestServer({ config: { allowedOrigins: 'https://ui.example' } });
    try {
      const login = await s.request('POST', '/auth/local/login', { basic: s.admin });
      const token: string = login.body.token;
      const allowed = await s.request('POST', '/application', {
        token,
        via: 'cookie',
        headers: { Origin: 'https://ui.example' },
        json: { name: 'from the allowed origin' },
      });
      expect(allowed.status).toBe(200);
      const read = await s.request('GET', '/application', {
        token,
        via: 'cookie',
        headers: { Origin: otherOrigin, 'Sec-Fetch-Site': 'same-site' },
      });
      expect(read.status).toBe(200);
      const bearer = await s.request('POST', '/application', {
        token,
        headers: { Origin: otherOrigin },
        json: { name: 'bearer from anywhere' },
      });
      expect(bearer.status).toBe(200);
      const logout = await s.request('POST', '/auth/logout', {
        token,
        via: 'cookie',
        headers: { Origin: otherOrigin },
      });
      expect(logout.status).toBe(403);
      expect((await s.request('GET', '/current/user', { token })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('form bodies are parsed only on the routes that take them', async () => {
    const dev = await deviceToken(t);
    const form = await t.request('POST', '/application', { token: dev.token, form: { name: 'by form' } });
    expect(form.status).toBe(200);
    expect(form.body.name).toBe('by form');
    const c = await makeChannel(t, dev.token);
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: dev.token,
      form: { email: 'friend@example.com', permission: 'view' },
    });
    expect(share.status).toBe(400);
    expect(share.body.errorDescription).toMatch(/^email: /);
  });
});

/**
 * Sends `n` requests at once while every password check (bcrypt.compare) is held until each request
 * is either checking its password or answered, so the attempts surely overlap; then lets them finish.
 */
async function concurrently(n: number, send: () => Promise<ApiResponse>): Promise<ApiResponse[]> {
  const original = bcrypt.compare;
  const held: (() => void)[] = [];
  let open = false;
  const spy = vi
    .spyOn(bcrypt, 'compare')
    .mockImplementation(((s: string, h: string) =>
      open
        ? original(s, h)
        : new Promise<boolean>((resolve, reject) =>
            held.push(() => original(s, h).then(resolve, reject)),
          )) as never);
  try {
    let answered = 0;
    const all = Array.from({ length: n }, async () => {
      const r = await send();
      answered += 1;
      return r;
    });
    await vi.waitFor(() => expect(held.length + answered).toBe(n), { timeout: 10_000 });
    open = true;
    for (const go of held) go();
    return await Promise.all(all);
  } finally {
    spy.mockRestore();
  }
}

/** Issue 21, items 5 and 15: attempts are counted before the password check, per account and address. */
describe('sign-in throttling', () => {
  /** How each throttled password check is sent, and its answer to a wrong password. */
  const bursts: {
    name: string;
    wrong: number;
    send: (s: TestServer, pass: string, dev: string) => Promise<ApiResponse>;
  }[] = [
    {
      name: 'logins',
      wrong: 401,
      send: (s, password) =>
        s.request('POST', '/auth/local/login', { basic: { email: s.admin.email, password } }),
    },
    {
      name: 'Basic pairs on GET /current/user',
      wrong: 401,
      send: (s, password) => s.request('GET', '/current/user', { basic: { email: s.admin.email, password } }),
    },
    {
      name: 'sudo passwords',
      wrong: 400,
      send: (s, pass, dev) => s.request('POST', '/current/user/sudo', { token: dev, json: { pass } }),
    },
  ];

  test.each(bursts)(
    '50 concurrent wrong $name: 10 are evaluated, the rest and a right password after get 429 until the window passes',
    async ({ wrong, send }) => {
      const s = await startTestServer();
      try {
        const dev = (await deviceToken(s)).token;
        const all = await concurrently(50, () => send(s, 'wrong-password', dev));
        expect(statuses(all)).toEqual({ [wrong]: LOGIN_FAILURES_PER_MINUTE, 429: 40 });
        const right = await send(s, s.admin.password, dev);
        expect(right.status).toBe(429);
        expect(right.body).toEqual(tooMany(60));
        expect(right.headers.get('retry-after')).toBe('60');
        s.clock.advance(59_000);
        expect((await send(s, s.admin.password, dev)).status).toBe(429);
        s.clock.advance(1_000);
        expect((await send(s, s.admin.password, dev)).status).toBe(200);
      } finally {
        await s.close();
      }
    },
  );

  test('right passwords are refunded: 10 at once and 20 more in a row all succeed', async () => {
    const s = await startTestServer();
    try {
      const all = await concurrently(10, () => s.request('GET', '/current/user', { basic: s.admin }));
      expect(statuses(all)).toEqual({ 200: 10 });
      for (let i = 0; i < 20; i++)
        expect((await s.request('GET', '/current/user', { basic: s.admin })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('unknown pairing codes count: 10 a minute, then 429 even for a real code', async () => {
    const s = await startTestServer();
    try {
      const dev = await deviceToken(s);
      const real = await s.request('POST', '/pairing', { token: dev.token });
      const guesses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          s.request('POST', '/pairing/claim', {
            json: { code: `${'x'.repeat(20)}${String(i).padStart(2, '0')}` },
          }),
        ),
      );
      expect(statuses(guesses)).toEqual({ 404: 10, 429: 2 });
      const claim = { json: { code: real.body.code } };
      expect((await s.request('POST', '/pairing/claim', claim)).status).toBe(429);
      s.clock.advance(60_000);
      expect((await s.request('POST', '/pairing/claim', claim)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('failures lock the account from that address only: another account signs in from the same address', async () => {
    const s = await startTestServer();
    try {
      const victim = makeUser(s);
      const bad = { email: s.admin.email, password: 'wrong-password' };
      for (let i = 0; i < 10; i++) await s.request('POST', '/auth/local/login', { basic: bad });
      expect((await s.request('POST', '/auth/local/login', { basic: s.admin })).status).toBe(429);
      expect((await s.request('POST', '/auth/local/login', { basic: victim })).status).toBe(200);
      expect((await s.request('GET', '/current/user', { basic: victim })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('failures of one account from many forwarded addresses stop at the per-account limit', async () => {
    const s = await startTestServer({ config: { trustProxy: 'loopback' } });
    try {
      const bad = { email: s.admin.email, password: 'wrong-password' };
      const from = (n: number) => ({ 'X-Forwarded-For': `203.0.113.${n}` });
      const perAddress = LOGIN_FAILURES_PER_MINUTE;
      const addresses = LOGIN_ACCOUNT_FAILURES_PER_HOUR / perAddress;
      for (let n = 0; n < addresses; n++) {
        const round = [];
        for (let i = 0; i < perAddress; i++)
          round.push((await s.request('POST', '/auth/local/login', { basic: bad, headers: from(n) })).status);
        expect(round).toEqual(Array(perAddress).fill(401));
        // Each address has spent its own 10; the next one starts afresh.
        expect((await s.request('POST', '/auth/local/login', { basic: bad, headers: from(n) })).status).toBe(
          429,
        );
      }
      const fresh = await s.request('POST', '/auth/local/login', { basic: s.admin, headers: from(250) });
      expect(fresh.status).toBe(429);
      expect(fresh.body).toEqual(tooMany(Number(fresh.headers.get('retry-after'))));
      // Another account from a spent address is not affected.
      const other = makeUser(s);
      expect((await s.request('POST', '/auth/local/login', { basic: other, headers: from(0) })).status).toBe(
        200,
      );
      s.clock.advance(3_600_000);
      expect(
        (await s.request('POST', '/auth/local/login', { basic: s.admin, headers: from(250) })).status,
      ).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('POST /client records the forwarded client address in the new device activity when trustProxy trusts loopback', async () => {
    const s = await startTestServer({ config: { trustProxy: 'loopback' } });
    try {
      const device = await deviceToken(s, { email: s.admin.email, password: s.admin.password }, 'laptop');
      const made = await s.request('POST', '/client', {
        token: device.token,
        json: { name: 'phone' },
        headers: { 'X-Forwarded-For': '203.0.113.9' },
      });
      expect(made.status).toBe(200);
      const activity = await s.request('GET', `/client/${made.body.id}/activity`, { token: device.token });
      expect(activity.status).toBe(200);
      expect(JSON.stringify(activity.body)).toContain('"ip":"203.0.113.9"');
    } finally {
      await s.close();
    }
  });

  test('X-Forwarded-For is ignored without trustProxy: every failure counts against the socket address', async () => {
    const s = await startTestServer();
    try {
      const bad = { email: s.admin.email, password: 'wrong-password' };
      for (let n = 0; n < 10; n++) {
        const r = await s.request('POST', '/auth/local/login', {
          basic: bad,
          headers: { 'X-Forwarded-For': `203.0.113.${n}` },
        });
        expect(r.status).toBe(401);
      }
      const r = await s.request('POST', '/auth/local/login', {
        basic: s.admin,
        headers: { 'X-Forwarded-For': '198.51.100.1' },
      });
      expect(r.status).toBe(429);
    } finally {
      await s.close();
    }
  });
});

describe('clientAddress', () => {
  const at = (trustProxy: unknown, remoteAddress: string, xff?: string) =>
    clientAddress({ config: { trustProxy } } as never, {
      headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      query: {},
      socket: { remoteAddress },
      path: '/',
    });

  test('clientAddress is the socket address without trustProxy, whatever X-Forwarded-For says', () => {
    expect(at(false, '::ffff:10.0.0.1', '1.2.3.4')).toBe('10.0.0.1');
  });

  test('clientAddress with a hop count takes that many steps back, never past the header', () => {
    expect(at({ hops: 1 }, '127.0.0.1', '6.6.6.6, 1.2.3.4')).toBe('1.2.3.4');
    expect(at({ hops: 2 }, '127.0.0.1', '6.6.6.6, 1.2.3.4')).toBe('6.6.6.6');
    expect(at({ hops: 5 }, '127.0.0.1', '1.2.3.4')).toBe('1.2.3.4');
    expect(at({ hops: 1 }, '127.0.0.1')).toBe('127.0.0.1');
  });

  test('clientAddress with proxy addresses skips only them, from the right', () => {
    const trust = { addresses: ['127.0.0.1', '10.0.0.2'] };
    expect(at(trust, '127.0.0.1', '6.6.6.6, 1.2.3.4, 10.0.0.2')).toBe('1.2.3.4');
    // A peer that is not a trusted proxy names itself, whatever the header says.
    expect(at(trust, '192.0.2.9', '1.2.3.4')).toBe('192.0.2.9');
    // Garbage in the header ends the walk at the last trusted hop.
    expect(at(trust, '127.0.0.1', 'not-an-ip')).toBe('127.0.0.1');
  });
});

/** Issue 21, item 12. */
describe('self-registration', () => {
  async function mailsTo(s: TestServer, to: string): Promise<OutboxRow[]> {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); // mail goes out after the answer
    return s.server.ctx.db.all<OutboxRow>('SELECT * FROM mail_outbox WHERE to_addr = ? ORDER BY id', [to]);
  }

  test('POST /user answers a taken address exactly like a free one; the mail says which', async () => {
    const s = await startTestServer({ config: { registration: true } });
    try {
      const taken = makeUser(s);
      const free = `free-${Date.now()}@example.com`;
      const a = await s.request('POST', '/user', { json: { email: taken.email, pass: 'another-password' } });
      const b = await s.request('POST', '/user', { json: { email: free, pass: 'another-password' } });
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(a.body).toEqual({ email: taken.email, verified: false });
      expect(b.body).toEqual({ email: free, verified: false });
      const [tried] = await mailsTo(s, taken.email);
      expect(tried!.subject).toBe('Someone tried to register with your Belfry address');
      expect(tried!.text).toContain(`${s.url}/reset-password?token=`);
      const [verify] = await mailsTo(s, free);
      expect(verify!.subject).toBe('Confirm your Belfry address');
      // The taken account's password did not change.
      expect((await s.request('POST', '/auth/local/login', { basic: taken })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('POST /user registration answers 429 after 5 an hour from one address, and sends one address 3 mails an hour', async () => {
    const s = await startTestServer({ config: { registration: true } });
    try {
      const register = (email: string) =>
        s.request('POST', '/user', { json: { email, pass: 'a-good-password' } });
      const codes = [];
      for (let i = 0; i <= REGISTRATIONS_PER_ADDRESS_PER_HOUR; i++)
        codes.push((await register('same@example.com')).status);
      expect(codes).toEqual([...Array(REGISTRATIONS_PER_ADDRESS_PER_HOUR).fill(200), 429]);
      const limited = await register('other@example.com');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3_500);
      const mails = await mailsTo(s, 'same@example.com');
      expect(mails.map((m) => m.subject)).toEqual([
        'Confirm your Belfry address',
        ...Array(REGISTRATION_MAILS_PER_HOUR - 1).fill('Someone tried to register with your Belfry address'),
      ]);
      s.clock.advance(3_600_000);
      expect((await register('other@example.com')).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('POST /user registration answers 429 after 50 an hour from all addresses together', async () => {
    const s = await startTestServer({ config: { registration: true, trustProxy: 'loopback' } });
    try {
      const codes = await Promise.all(
        Array.from({ length: REGISTRATIONS_PER_HOUR + 2 }, (_, i) =>
          s.request('POST', '/user', {
            json: { email: `many-${i}@example.com`, pass: 'a-good-password' },
            headers: { 'X-Forwarded-For': `198.51.100.${i}` },
          }),
        ),
      );
      expect(statuses(codes)).toEqual({ 200: REGISTRATIONS_PER_HOUR, 429: 2 });
      const n = s.server.ctx.db.first<{ n: number }>(
        "SELECT count(*) AS n FROM users WHERE email LIKE 'many-%'",
      )!.n;
      expect(n).toBe(REGISTRATIONS_PER_HOUR);
    } finally {
      await s.close();
    }
  });
});

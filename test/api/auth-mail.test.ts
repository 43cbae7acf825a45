import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  MAIL_LEASE_MS,
  MAIL_MAX_ATTEMPTS,
  MAIL_RETRY_FIRST_MS,
  MAIL_RETRY_MAX_MS,
  mailRetryDelay,
  sendMail,
} from '../../server/features/mail/service';
import { ManualClock } from '../../server/lib/clock';
import { apiToken, deviceToken, makeUser, sudo } from '../helpers/factories';
import { startSmtp } from '../helpers/fake-smtp';
import { startTestServer, type TestServer } from '../helpers/test-server';

describe('mail through SMTP', () => {
  test('sendMail delivers through SMTP when BELFRY_SMTP_URL is set', async () => {
    const smtp = await startSmtp();
    const t = await startTestServer({ config: { smtpUrl: smtp.url, mailFrom: 'belfry@test.local' } });
    try {
      await sendMail(t.server.ctx, {
        to: 'someone@example.com',
        subject: 'Hello there',
        text: 'Body text https://x.test/a',
      });
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]!.from).toContain('belfry@test.local');
      expect(smtp.mails[0]!.to[0]).toContain('someone@example.com');
      expect(smtp.mails[0]!.data).toContain('Subject: Hello there');
      expect(smtp.mails[0]!.data).toContain('Body text');
      const count = t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM mail_outbox')!.n;
      expect(count).toBe(0);
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});

describe('mail retries (issue 20: mail is never silently lost)', () => {
  const mail = { to: 'someone@example.com', subject: 'Reset', text: 'https://x.test/reset#t' };
  const outbox = (t: TestServer) =>
    t.server.ctx.db.all<{ status: string; attempts: number; next_attempt_at: number | null }>(
      'SELECT status, attempts, next_attempt_at FROM mail_outbox',
    );
  /** Moves the ManualClock and lets the due timer run what became due (no real waiting). */
  async function advance(t: TestServer, ms: number) {
    t.clock.advance(ms);
    await t.server.scheduler.tick();
  }

  test('a send refused twice by the SMTP server is retried with backoff and delivered once, then leaves the outbox', async () => {
    const smtp = await startSmtp();
    const t = await startTestServer({ config: { smtpUrl: smtp.url } });
    try {
      smtp.failNext(2);
      await sendMail(t.server.ctx, mail);
      expect(smtp.attempts).toBe(1);
      expect(smtp.mails).toHaveLength(0);
      const start = t.clock.now();
      expect(outbox(t)).toEqual([
        { status: 'pending', attempts: 1, next_attempt_at: start + MAIL_RETRY_FIRST_MS },
      ]);
      // The admin sees the state, the attempts and the server's answer.
      const dev = await deviceToken(t);
      await sudo(t, dev);
      const listed = await t.request('GET', '/admin/outbox', { token: dev.token });
      expect(listed.body[0]).toMatchObject({
        to: mail.to,
        status: 'pending',
        attempts: 1,
        nextAttemptAt: new Date(start + MAIL_RETRY_FIRST_MS).toISOString(),
        lastError: expect.stringContaining('451 4.3.0 try again later'),
      });
      // Nothing before the backoff has passed.
      await advance(t, MAIL_RETRY_FIRST_MS - 1);
      expect(smtp.attempts).toBe(1);
      await advance(t, 1);
      expect(smtp.attempts).toBe(2);
      expect(outbox(t)).toEqual([
        { status: 'pending', attempts: 2, next_attempt_at: t.clock.now() + mailRetryDelay(2) },
      ]);
      expect(mailRetryDelay(2)).toBe(2 * MAIL_RETRY_FIRST_MS);
      await advance(t, mailRetryDelay(2));
      expect(smtp.attempts).toBe(3);
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]!.data).toContain('Subject: Reset');
      expect(outbox(t)).toEqual([]);
      await advance(t, MAIL_RETRY_MAX_MS);
      expect(smtp.mails).toHaveLength(1);
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  test('a mail the SMTP server keeps refusing is given up after MAIL_MAX_ATTEMPTS and stays visible as failed', async () => {
    const smtp = await startSmtp();
    const t = await startTestServer({ config: { smtpUrl: smtp.url } });
    try {
      smtp.failNext(1_000);
      await sendMail(t.server.ctx, mail);
      for (let i = 0; i < MAIL_MAX_ATTEMPTS + 3; i++) await advance(t, MAIL_RETRY_MAX_MS);
      expect(smtp.attempts).toBe(MAIL_MAX_ATTEMPTS);
      expect(outbox(t)).toEqual([{ status: 'failed', attempts: MAIL_MAX_ATTEMPTS, next_attempt_at: null }]);
      expect(t.log.lines.some((l) => l.includes('mail failed; giving up'))).toBe(true);
      expect(t.log.lines.filter((l) => l.includes('x.test/reset'))).toEqual([]);
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  test('a mail whose SMTP attempt outlasts its lease (a laptop asleep mid-send) is not sent a second time', async () => {
    const smtp = await startSmtp();
    const t = await startTestServer({ config: { smtpUrl: smtp.url } });
    try {
      const release = smtp.holdNext();
      const sending = sendMail(t.server.ctx, mail);
      await expect.poll(() => smtp.mails.length).toBe(1);
      // The server has the mail but has not answered DATA; the clock jumps past the lease.
      await advance(t, MAIL_LEASE_MS + 60_000);
      await advance(t, MAIL_LEASE_MS + 60_000);
      expect(smtp.attempts).toBe(1);
      // Still held, with its lease renewed rather than left due (the due timer does not spin on it).
      expect(outbox(t)).toEqual([{ status: 'pending', attempts: 0, next_attempt_at: expect.any(Number) }]);
      expect(outbox(t)[0]!.next_attempt_at).toBeGreaterThan(t.clock.now());
      release();
      await sending;
      expect(outbox(t)).toEqual([]);
      await advance(t, MAIL_RETRY_MAX_MS);
      expect(smtp.attempts).toBe(1);
      expect(smtp.mails).toHaveLength(1);
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  test('a queued retry survives a restart and is sent by the new process', async () => {
    const smtp = await startSmtp();
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-mail-'));
    try {
      const first = await startTestServer({ dataDir, config: { smtpUrl: smtp.url } });
      smtp.failNext(1);
      await sendMail(first.server.ctx, mail);
      await first.close();
      const clock = new ManualClock(first.clock.now());
      const again = await startTestServer({ dataDir, clock, config: { smtpUrl: smtp.url } });
      try {
        await advance(again, MAIL_RETRY_FIRST_MS);
        expect(smtp.mails).toHaveLength(1);
        expect(outbox(again)).toEqual([]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await smtp.close();
    }
  });
});

describe('GET /admin/outbox', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  test('GET /admin/outbox lists kept mail newest first and never logs its links when no SMTP is set', async () => {
    const ctx = t.server.ctx;
    await sendMail(ctx, {
      to: 'a@example.com',
      subject: 'first',
      text: 'see https://belfry.test/link?x=1 now',
    });
    await sendMail(ctx, { to: 'b@example.com', subject: 'second', text: 'plain', html: '<p>plain</p>' });
    expect(t.log.lines.some((l) => l.includes('mail kept in the outbox'))).toBe(true);
    expect(t.log.lines.filter((l) => l.includes('belfry.test/link'))).toEqual([]);
    const dev = await deviceToken(t);
    await sudo(t, dev);
    const res = await t.request('GET', '/admin/outbox', { token: dev.token });
    expect(res.status).toBe(200);
    expect(res.body.slice(0, 2)).toEqual([
      {
        id: 2,
        to: 'b@example.com',
        subject: 'second',
        text: 'plain',
        html: '<p>plain</p>',
        createdAt: '2026-01-15T12:00:00.000Z',
        status: 'kept',
        attempts: 0,
        nextAttemptAt: null,
        lastError: null,
      },
      {
        id: 1,
        to: 'a@example.com',
        subject: 'first',
        text: 'see https://belfry.test/link?x=1 now',
        html: null,
        createdAt: '2026-01-15T12:00:00.000Z',
        status: 'kept',
        attempts: 0,
        nextAttemptAt: null,
        lastError: null,
      },
    ]);
    const page = await t.request('GET', '/admin/outbox?limit=1&before=2', { token: dev.token });
    expect(page.body.map((m: { id: number }) => m.id)).toEqual([1]);
  });

  test('GET /admin/outbox answers 403 sudo_required without a sudo window', async () => {
    const dev = await deviceToken(t);
    const res = await t.request('GET', '/admin/outbox', { token: dev.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'this action needs a recent confirmation (sudo)',
      reason: 'sudo_required',
      methods: ['password'],
    });
  });

  test('GET /admin/outbox answers 403 for a user who is not an administrator', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    await sudo(t, dev, u.password);
    const res = await t.request('GET', '/admin/outbox', { token: dev.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('administrators only');
  });

  test('GET /admin/outbox answers 403 for an API token', async () => {
    const dev = await deviceToken(t);
    const api = await apiToken(t, dev);
    const res = await t.request('GET', '/admin/outbox', { token: api.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('API tokens cannot do this; sign in with a device');
  });
});

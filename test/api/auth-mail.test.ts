import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sendMail } from '../../server/features/mail/service';
import { apiToken, deviceToken, makeUser, sudo } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

/** A tiny loopback SMTP server: enough of RFC 5321 for nodemailer, recording each message. */
async function startSmtp(): Promise<{
  url: string;
  mails: { from: string; to: string[]; data: string }[];
  close(): Promise<void>;
}> {
  const mails: { from: string; to: string[]; data: string }[] = [];
  const server: Server = createServer((socket) => {
    let buf = '';
    let inData = false;
    let cur = { from: '', to: [] as string[], data: '' };
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          cur.data = buf.slice(0, end);
          buf = buf.slice(end + 5);
          inData = false;
          mails.push(cur);
          cur = { from: '', to: [], data: '' };
          socket.write('250 queued\r\n');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 test\r\n');
        else if (verb === 'MAIL') {
          cur.from = line;
          socket.write('250 ok\r\n');
        } else if (verb === 'RCPT') {
          cur.to.push(line);
          socket.write('250 ok\r\n');
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
        } else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

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
      },
      {
        id: 1,
        to: 'a@example.com',
        subject: 'first',
        text: 'see https://belfry.test/link?x=1 now',
        html: null,
        createdAt: '2026-01-15T12:00:00.000Z',
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

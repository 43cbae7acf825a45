import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents, remainingEvents } from '../../server/features/quota/service';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  addRule,
  events,
  inboxUser,
  messageById,
  ok,
  RawSmtp,
  sendMail,
  sendRaw,
  smtpPort,
} from './email-inboxes-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { smtpListen: '127.0.0.1:0' } });
});
afterAll(async () => {
  await t?.close();
});

const CRLF = (s: string) => s.replace(/\r?\n/g, '\r\n');

/** A CI notification as GitHub sends it: multipart/alternative, a text part and an HTML part. */
const multipartAlternative = (to: string) =>
  CRLF(`From: GitHub <notifications@github.com>
To: ${to}
Subject: [acme/api] Run failed: deploy - main (4f2a91c)
Message-ID: <acme/api/actions/runs/9912@github.com>
Date: Fri, 27 Nov 2026 10:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="==b1=="

--==b1==
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Run failed: deploy - main
The job "build" failed after 3m 12s.
View the run: https://github.com/acme/api/actions/runs/9912

--==b1==
Content-Type: text/html; charset=utf-8

<html><body><p><b>Run failed</b>: deploy - main</p><p>HTML part</p></body></html>
--==b1==--
`);

/** A newsletter with only an HTML part (quoted-printable, a link and an image). */
const htmlOnly = (to: string) =>
  CRLF(`From: "Status Weekly" <news@status.example>
To: ${to}
Subject: Your weekly uptime report
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: quoted-printable

<!DOCTYPE html><html><head><style>p{color:red}</style></head><body>
<h1>Weekly report</h1><img src=3D"https://status.example/logo.png" alt=3D"logo">
<p>Uptime this week: <b>99.98%</b></p>
<p><a href=3D"https://status.example/report/7">Read the full report</a></p>
</body></html>
`);

describe('the SMTP listener with real clients', () => {
  it('a multipart/alternative mail becomes one event and one message from its text/plain part', async () => {
    const u = await inboxUser(t);
    const info = await sendRaw(
      t,
      'bounces@github.com',
      [u.inbox.address],
      multipartAlternative(u.inbox.address),
    );
    expect(info.accepted).toEqual([u.inbox.address]);
    const [ev] = await events(t, u.device.token, u.inbox.id);
    const text =
      'Run failed: deploy - main\nThe job "build" failed after 3m 12s.\nView the run: https://github.com/acme/api/actions/runs/9912';
    expect(ev).toEqual({
      id: expect.any(Number),
      inboxId: u.inbox.id,
      appid: u.channel.id,
      from: 'notifications@github.com',
      to: u.inbox.address,
      subject: '[acme/api] Run failed: deploy - main (4f2a91c)',
      text,
      attachments: [],
      receivedAt: new Date(t.clock.now()).toISOString(),
      matchedRuleId: null,
      action: 'message',
      messageId: expect.any(Number),
      size: expect.any(Number),
    });
    expect(ev.size).toBeGreaterThan(600);
    const m = await messageById(t, u.device.token, ev.messageId);
    expect(m).toMatchObject({
      appid: u.channel.id,
      title: '[acme/api] Run failed: deploy - main (4f2a91c)',
      message: `From: notifications@github.com\n\n${text}`,
      priority: 6,
      extras: { 'service::source': { kind: 'email-inbox', id: u.inbox.id, event: 'mail' } },
    });
    // The inbox saw mail: pending → ok, lastCheckAt set.
    const box = ok(await t.request('GET', `/email-inbox/${u.inbox.id}`, { token: u.device.token }), 'box');
    expect([box.status, box.lastCheckAt]).toEqual(['ok', new Date(t.clock.now()).toISOString()]);
  });

  it('an HTML-only newsletter is converted to text (links kept, images and styles dropped)', async () => {
    const u = await inboxUser(t);
    await sendRaw(t, 'news@status.example', [u.inbox.address], htmlOnly(u.inbox.address));
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect(ev.from).toBe('news@status.example');
    expect(ev.subject).toBe('Your weekly uptime report');
    expect(ev.text).toContain('WEEKLY REPORT');
    expect(ev.text).toContain('Uptime this week: 99.98%');
    expect(ev.text).toContain('Read the full report [https://status.example/report/7]');
    expect(ev.text).not.toMatch(/<|logo\.png|color:red/);
  });

  it('attachments are listed with filename, size and type, and not stored; a UTF-8 encoded subject is decoded', async () => {
    const u = await inboxUser(t);
    const pdf = Buffer.alloc(20_000, 7);
    await sendMail(t, {
      from: '"Rechnungsstelle" <rechnung@shop.example>',
      to: u.inbox.address,
      subject: 'Rechnung Nr. 2026-117 für Jürgen ✓',
      text: 'Anbei Ihre Rechnung.',
      attachments: [
        { filename: 'rechnung-117.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'notes.txt', content: 'line one\n', contentType: 'text/plain' },
      ],
    });
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect(ev.subject).toBe('Rechnung Nr. 2026-117 für Jürgen ✓');
    expect(ev.text).toBe('Anbei Ihre Rechnung.');
    expect(ev.attachments).toEqual([
      { filename: 'rechnung-117.pdf', size: 20_000, contentType: 'application/pdf' },
      { filename: 'notes.txt', size: 9, contentType: 'text/plain' },
    ]);
    expect(ev.size).toBeGreaterThan(20_000);
    const row = t.server.ctx.db.first<Record<string, unknown>>(
      'SELECT * FROM email_inbox_events WHERE id = ?',
      [ev.id],
    )!;
    expect(JSON.stringify(row).length).toBeLessThan(2_000);
    const m = await messageById(t, u.device.token, ev.messageId);
    expect(m?.title).toBe('Rechnung Nr. 2026-117 für Jürgen ✓');
  });

  it('one mail to two inboxes makes one event in each; a mail without subject is titled (no subject)', async () => {
    const a = await inboxUser(t);
    const b = await t.request('POST', '/email-inbox', {
      token: a.device.token,
      json: { appid: a.channel.id, name: 'second', localPart: `Second-${a.user.id}` },
    });
    const second = ok(b, 'second');
    expect(second.localPart).toBe(`second-${a.user.id}`);
    await sendRaw(
      t,
      'cron@host.example',
      [a.inbox.address, second.address.toUpperCase()],
      CRLF('From: cron@host.example\nTo: ops@localhost\n\nbackup done\n'),
    );
    const all = await events(t, a.device.token);
    expect(all.map((e) => [e.inboxId, e.to, e.subject, e.text])).toEqual([
      [second.id, second.address, '', 'backup done'],
      [a.inbox.id, a.inbox.address, '', 'backup done'],
    ]);
    const m = await messageById(t, a.device.token, all[0].messageId);
    expect(m?.title).toBe('(no subject)');
  });

  it('a text over 64 KiB is cut to 64 KiB in the event and to 10,000 characters in the message', async () => {
    const u = await inboxUser(t);
    await sendMail(t, {
      from: 'logs@host.example',
      to: u.inbox.address,
      subject: 'big log',
      text: 'é'.repeat(40_000),
    });
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect(Buffer.byteLength(ev.text)).toBe(64 * 1024);
    const m = await messageById(t, u.device.token, ev.messageId);
    expect(String(m?.message).length).toBe(10_000);
  });
});

describe('SMTP replies', () => {
  it('EHLO offers SIZE 10485760 and neither STARTTLS nor AUTH; STARTTLS is refused', async () => {
    const { s, greeting } = await RawSmtp.open(smtpPort(t));
    expect(greeting).toMatch(/^220 /);
    const ehlo = await s.command('EHLO client.example');
    expect(ehlo).toMatch(/^250-/);
    expect(ehlo).toContain('SIZE 10485760');
    expect(ehlo).not.toMatch(/STARTTLS|AUTH/);
    expect(await s.command('STARTTLS')).toMatch(/^5\d\d /);
    await s.quit();
  });

  it('RCPT outside the mail domain is 550 5.7.1 relaying denied, an unknown local part 550 5.1.1 no such inbox', async () => {
    const u = await inboxUser(t);
    const { s } = await RawSmtp.open(smtpPort(t));
    await s.command('EHLO client.example');
    expect(await s.command('MAIL FROM:<a@b.example>')).toMatch(/^250 /);
    expect(await s.command('RCPT TO:<someone@gmail.com>')).toBe('550 5.7.1 relaying denied');
    expect(await s.command(`RCPT TO:<${u.inbox.localPart}@example.org>`)).toBe('550 5.7.1 relaying denied');
    expect(await s.command('RCPT TO:<nobody-here@localhost>')).toBe('550 5.1.1 no such inbox');
    expect(await s.command(`RCPT TO:<${u.inbox.localPart.toUpperCase()}@LOCALHOST>`)).toMatch(/^250 /);
    // DATA goes to the accepted recipient only.
    expect(await s.command('DATA')).toMatch(/^354 /);
    expect(await s.command('Subject: raw\r\n\r\nhello\r\n.')).toMatch(/^250 /);
    await s.quit();
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect([ev.subject, ev.text, ev.from]).toEqual(['raw', 'hello', 'a@b.example']);
  });

  it('a declared size over 10 MiB is 552 at MAIL FROM; a body over 10 MiB is 552 after DATA and stores nothing', async () => {
    const u = await inboxUser(t);
    const { s } = await RawSmtp.open(smtpPort(t));
    await s.command('EHLO client.example');
    expect(await s.command('MAIL FROM:<big@b.example> SIZE=20000000')).toMatch(
      /^552 .*message exceeds fixed maximum message size/,
    );
    expect(await s.command('MAIL FROM:<big@b.example>')).toMatch(/^250 /);
    expect(await s.command(`RCPT TO:<${u.inbox.address}>`)).toMatch(/^250 /);
    expect(await s.command('DATA')).toMatch(/^354 /);
    const line = `${'x'.repeat(998)}\r\n`;
    await s.write('Subject: too big\r\n\r\n');
    const chunk = line.repeat(1_000); // ~1 MB
    for (let i = 0; i < 11; i++) await s.write(chunk);
    expect(await s.command('.')).toBe('552 Error: message exceeds fixed maximum message size 10485760');
    await s.quit();
    expect(await events(t, u.device.token, u.inbox.id)).toEqual([]);
  });

  it('the 51st distinct recipient is 452 too many recipients; refused and repeated recipients do not count', async () => {
    const u = await inboxUser(t);
    const boxes = [u.inbox];
    for (let i = 1; i < 51; i++)
      boxes.push(
        ok(
          await t.request('POST', '/email-inbox', {
            token: u.device.token,
            json: { appid: u.channel.id, name: `box ${i}` },
          }),
          'box',
        ),
      );
    const { s } = await RawSmtp.open(smtpPort(t));
    await s.command('EHLO client.example');
    await s.command('MAIL FROM:<list@b.example>');
    expect(await s.command('RCPT TO:<nobody-at-all@localhost>')).toBe('550 5.1.1 no such inbox');
    expect(await s.command(`RCPT TO:<${boxes[0]!.address}>`)).toMatch(/^250 /);
    expect(await s.command(`RCPT TO:<${boxes[0]!.address}>`)).toMatch(/^250 /);
    for (const b of boxes.slice(1, 50)) expect(await s.command(`RCPT TO:<${b.address}>`)).toMatch(/^250 /);
    expect(await s.command(`RCPT TO:<${boxes[50]!.address}>`)).toBe('452 Error: too many recipients');
    expect(await s.command('DATA')).toMatch(/^354 /);
    expect(await s.command('Subject: fan-out\r\n\r\nto all\r\n.')).toMatch(/^250 /);
    await s.quit();
    const all = await events(t, u.device.token, undefined, 100);
    expect(all).toHaveLength(50);
    expect(new Set(all.map((e) => e.inboxId))).toEqual(new Set(boxes.slice(0, 50).map((b) => b.id)));
  });
});

describe('rules applied to received mail', () => {
  it('the first matching rule by position wins; drop records the event without a message; templates fill the title', async () => {
    const u = await inboxUser(t, { priority: 4 });
    const tok = u.device.token;
    const drop = await addRule(t, tok, u.inbox.id, {
      name: 'no marketing',
      match: { from: 'news@' },
      action: 'drop',
    });
    const deploy = await addRule(t, tok, u.inbox.id, {
      name: 'deploys',
      match: { subject: '/^\\[acme\\/api\\] run failed/i', body: 'failed after' },
      title: 'CI: {{subject}} → {{to}} (from {{from}})',
      priority: 9,
    });
    const catchAll = await addRule(t, tok, u.inbox.id, {
      name: 'rest',
      match: {},
      title: 'Mail: {{subject}}',
    });
    await sendRaw(t, 'x@github.com', [u.inbox.address], multipartAlternative(u.inbox.address));
    await sendRaw(t, 'news@status.example', [u.inbox.address], htmlOnly(u.inbox.address));
    await sendMail(t, { from: 'me@home.example', to: u.inbox.address, subject: 'hi', text: 'plain' });
    const [rest, dropped, ci] = await events(t, tok, u.inbox.id);
    expect([ci.matchedRuleId, ci.action]).toEqual([deploy.id, 'message']);
    expect([dropped.matchedRuleId, dropped.action, dropped.messageId]).toEqual([drop.id, 'drop', null]);
    expect([rest.matchedRuleId, rest.action]).toEqual([catchAll.id, 'message']);
    const ciMsg = await messageById(t, tok, ci.messageId);
    expect([ciMsg?.title, ciMsg?.priority]).toEqual([
      `CI: [acme/api] Run failed: deploy - main (4f2a91c) → ${u.inbox.address} (from notifications@github.com)`,
      9,
    ]);
    const restMsg = await messageById(t, tok, rest.messageId);
    // Rule without priority: the inbox's.
    expect([restMsg?.title, restMsg?.priority]).toEqual(['Mail: hi', 4]);

    // Moving the catch-all first makes it win over the others.
    ok(
      await t.request('PUT', `/email-inbox/${u.inbox.id}/rules/${catchAll.id}`, {
        token: tok,
        json: { position: 1 },
      }),
      'move',
    );
    await sendRaw(t, 'news@status.example', [u.inbox.address], htmlOnly(u.inbox.address));
    const [again] = await events(t, tok, u.inbox.id, 1);
    expect([again.matchedRuleId, again.action]).toEqual([catchAll.id, 'message']);
  });

  it('a paused inbox records the event with action paused and makes no message; resuming brings messages back', async () => {
    const u = await inboxUser(t, { paused: true });
    expect(u.inbox.status).toBe('paused');
    await sendMail(t, { from: 'a@b.example', to: u.inbox.address, subject: 'while paused', text: 'x' });
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect([ev.action, ev.messageId, ev.matchedRuleId]).toEqual(['paused', null, null]);
    const box = ok(await t.request('GET', `/email-inbox/${u.inbox.id}`, { token: u.device.token }), 'box');
    expect(box.status).toBe('paused');
    const resumed = ok(
      await t.request('PUT', `/email-inbox/${u.inbox.id}`, {
        token: u.device.token,
        json: { paused: false },
      }),
      'resume',
    );
    expect(resumed.status).toBe('ok');
    await sendMail(t, { from: 'a@b.example', to: u.inbox.address, subject: 'after', text: 'y' });
    const [after] = await events(t, u.device.token, u.inbox.id, 1);
    expect(after.action).toBe('message');
    expect(after.messageId).toEqual(expect.any(Number));
  });

  it('the daily quota spent: the mail is still accepted and its event kept with messageId null', async () => {
    const u = await inboxUser(t);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.user.id, remainingEvents(ctx, u.user.id)));
    const info = await sendMail(t, {
      from: 'a@b.example',
      to: u.inbox.address,
      subject: 'over quota',
      text: 'x',
    });
    expect(info.accepted).toEqual([u.inbox.address]);
    const [ev] = await events(t, u.device.token, u.inbox.id);
    expect([ev.subject, ev.action, ev.messageId]).toEqual(['over quota', 'message', null]);
  });
});

describe('parsing in a worker thread', () => {
  it('a parser worker that dies fails the mail with 451 and stores nothing; the sender’s retry is stored once', async () => {
    const u = await inboxUser(t);
    const parser = t.server.smtp!.parser;
    const raw = CRLF(
      `From: nas@home.example\nTo: ${u.inbox.address}\nSubject: Backup done\n\nAll 3 volumes copied.\n`,
    );
    parser.crashOnNextMail();
    await expect(sendRaw(t, 'nas@home.example', [u.inbox.address], raw)).rejects.toThrow(
      /451 4\.3\.0 temporary failure/,
    );
    expect(await events(t, u.device.token, u.inbox.id)).toEqual([]);
    expect(parser.workers).toBe(0);
    // The retry: a new worker parses it, one event and one message.
    await sendRaw(t, 'nas@home.example', [u.inbox.address], raw);
    const evs = await events(t, u.device.token, u.inbox.id);
    expect(evs.map((e) => [e.subject, e.text, e.action])).toEqual([
      ['Backup done', 'All 3 volumes copied.', 'message'],
    ]);
    expect(parser.workers).toBe(1);
  });
});

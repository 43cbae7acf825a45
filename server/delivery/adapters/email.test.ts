import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, sampleItem, sendError, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeSmtp, startSmtp } from '../../../test/helpers/fake-smtp';
import { closeEmailTransport, emailAdapter, emailContent, NO_SMTP } from './email';

const CONFIG = { to: ['ops@example.test', 'oncall@example.test'] };

describe('email adapter (nodemailer)', () => {
  let smtp: FakeSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(() => smtp.close());

  it('sends subject [{channel}] {title}, text and HTML with priority, date and links, from BELFRY_MAIL_FROM', async () => {
    const io = testIo({ smtpUrl: smtp.url });
    const item = sampleItem();
    await emailAdapter.send(io, CONFIG, item);
    closeEmailTransport(io.ctx);
    const mail = smtp.mails.at(-1)!;
    expect(mail.from).toBe('MAIL FROM:<belfry@example.test>');
    expect(mail.to).toEqual(['RCPT TO:<ops@example.test>', 'RCPT TO:<oncall@example.test>']);
    const data = mail.data.replace(/=\r\n/g, '');
    expect(data).toMatch(/^Subject: \[Infra\] Disk almost full$/m);
    expect(data).toMatch(/^Content-Type: multipart\/alternative/m);
    expect(data).toContain('Priority: 6');
    expect(data).toContain('Date: 2026-01-15T11:59:00.000Z');
    expect(data).toContain(`Open: ${item.links.message}`);
    expect(data).toContain(`Mark as read: ${item.links.read}`);
    expect(data).toContain('Content-Type: text/html');
    expect(data).not.toMatch(/^X-Priority:/m);
  });

  it('a choice question: HTML answer buttons (the default one filled) and "Answer {option}: {link}" text lines with the deadline', async () => {
    const io = testIo({ smtpUrl: smtp.url });
    const item = questionItem({ options: ['yes', 'no & <maybe>'] });
    await emailAdapter.send(io, CONFIG, item);
    closeEmailTransport(io.ctx);
    // The sent mail, quoted-printable decoded: both parts carry the answer links.
    const data = smtp.mails
      .at(-1)!
      .data.replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    expect(data).toContain(`Answer "yes": ${answerLink('yes')}`);
    expect(data).toContain(`href="${answerLink('yes')}"`);

    const { subject, text, html } = emailContent(item, Date.UTC(2026, 0, 15, 12));
    expect(subject).toBe('[Infra] Question');
    expect(text).toBe(
      [
        'Restart db-07 now?',
        '',
        `Answer "yes": ${answerLink('yes')}`,
        `Answer "no & <maybe>": ${answerLink('no & <maybe>')}`,
        'Answer by 2026-01-15 12:59 UTC',
        '',
        'Priority: 6',
        'Date: 2026-01-15T11:59:00.000Z',
        '',
        `Open: ${item.links.message}`,
        `Mark as read: ${item.links.read}`,
      ].join('\n'),
    );
    const buttons = [...html.matchAll(/<a href="([^"]+)" style="([^"]+)">([^<]+)<\/a>/g)].map((m) => ({
      url: m[1],
      filled: m[2]!.includes('background:#2563eb'),
      label: m[3],
    }));
    expect(buttons).toEqual([
      { url: answerLink('yes'), filled: true, label: 'yes' },
      { url: answerLink('no & <maybe>'), filled: false, label: 'no &amp; &lt;maybe&gt;' },
    ]);
    expect(html).toContain('<p>Answer by 2026-01-15 12:59 UTC</p>');
    expect(html.indexOf('Restart db-07 now?')).toBeLessThan(html.indexOf(answerLink('yes')));
  });

  it('a multi-select question: one "Answer in Belfry" button and its options; after the deadline none', () => {
    const item = questionItem({ type: 'multi', options: ['a', 'b'] });
    const open = emailContent(item, Date.UTC(2026, 0, 15, 12));
    expect(open.text).toContain(
      `\n\nAnswer in Belfry: ${item.links.message}\nOptions: a · b (one or more)\nAnswer by 2026-01-15 12:59 UTC\n\n`,
    );
    expect(open.html).toContain('>Answer in Belfry</a>');
    const closed = emailContent(item, Date.UTC(2026, 0, 15, 13));
    expect(closed.text).not.toContain('Answer in Belfry');
    expect(closed.text).toContain('\n\nOptions: a · b (one or more)\nClosed at 2026-01-15 12:59 UTC\n\n');
    expect(closed.html).not.toContain('Answer in Belfry');
  });

  it('marks priority ≥ 8 as high (X-Priority: 1, Importance: High)', async () => {
    await emailAdapter.send(testIo({ smtpUrl: smtp.url }), CONFIG, sampleItem({ priority: 8 }));
    const data = smtp.mails.at(-1)!.data;
    expect(data).toMatch(/^X-Priority: 1 \(Highest\)$/m);
    expect(data).toMatch(/^Importance: High$/im);
  });

  it('without BELFRY_SMTP_URL: a permanent error naming the setting', async () => {
    const e = await sendError(emailAdapter.send(testIo(), CONFIG, sampleItem()));
    expect(e).toMatchObject({ retryable: false, message: NO_SMTP });
  });

  it('SMTP 4xx is retryable, 5xx permanent, with the server reply', async () => {
    const io = testIo({ smtpUrl: smtp.url });
    smtp.failNext(1);
    const e1 = await sendError(emailAdapter.send(io, CONFIG, sampleItem()));
    expect(e1).toMatchObject({ retryable: true, message: 'SMTP 451: 4.3.0 try again later' });
    smtp.failNext(1, '550 5.1.1 mailbox unavailable');
    const e2 = await sendError(emailAdapter.send(io, CONFIG, sampleItem()));
    expect(e2).toMatchObject({ retryable: false, message: 'SMTP 550: 5.1.1 mailbox unavailable' });
  });

  it('a refused connection is retryable and never shows the SMTP password', async () => {
    const port = await closedPort();
    const e = await sendError(
      emailAdapter.send(
        testIo({ smtpUrl: `smtp://belfry:smtpPassSecret@127.0.0.1:${port}` }),
        CONFIG,
        sampleItem(),
      ),
    );
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.message).not.toContain('smtpPassSecret');
  });

  it('a server that never greets: the aborted signal ends the send as a retryable timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    let connected!: () => void;
    const connectedP = new Promise<void>((r) => {
      connected = r;
    });
    silent.on('connection', () => connected());
    try {
      const ac = new AbortController();
      const port = (silent.address() as { port: number }).port;
      const sent = sendError(
        emailAdapter.send(
          testIo({ smtpUrl: `smtp://127.0.0.1:${port}`, signal: ac.signal }),
          CONFIG,
          sampleItem(),
        ),
      );
      await connectedP;
      ac.abort();
      expect(await sent).toMatchObject({ retryable: true, message: 'timeout after 15 s' });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

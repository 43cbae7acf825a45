import { afterEach, describe, expect, it } from 'vitest';
import { MailParsePool, ParseUnavailable } from './parse-pool';

const mail = (subject: string) =>
  Buffer.from(
    `From: Bot <bot@ci.example>\r\nSubject: ${subject}\r\nContent-Type: text/html\r\n\r\n<p>Run <b>42</b> failed</p><img src="x.png">\r\n`,
  );

let pool: MailParsePool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('MailParsePool', () => {
  it('parses in a worker: the From address, the subject, HTML as text, the size', async () => {
    pool = new MailParsePool();
    const raw = mail('Build failed');
    expect(await pool.parse(raw, 'envelope@ci.example')).toEqual({
      from: 'bot@ci.example',
      subject: 'Build failed',
      text: 'Run 42 failed',
      attachments: [],
      size: raw.length,
    });
  });

  it('cuts the text at 64 KiB without splitting a character', async () => {
    pool = new MailParsePool();
    // 'é' is 2 bytes: 'x' + 40,000 of them is 80,001 bytes; 65,536 bytes ends inside one, so 65,535 stay.
    const body = `x${'é'.repeat(40_000)}`;
    const raw = Buffer.from(
      `Subject: long\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${body}\r\n`,
    );
    const text = (await pool.parse(raw, '')).text;
    expect(Buffer.byteLength(text)).toBe(65_535);
    expect(text).toBe(body.slice(0, 1 + 32_767));
  });

  it('takes mails one after another and refuses beyond its queue at once', async () => {
    pool = new MailParsePool({ size: 1, queueMax: 1 });
    const first = pool.parse(mail('one'), ''); // to the worker
    const second = pool.parse(mail('two'), ''); // waits in the queue
    await expect(pool.parse(mail('three'), '')).rejects.toBeInstanceOf(ParseUnavailable);
    expect((await first).subject).toBe('one');
    expect((await second).subject).toBe('two');
  });

  it('a dead worker fails only the mail it held; the next mail gets a new worker', async () => {
    const crashes: string[] = [];
    pool = new MailParsePool({ size: 1 }, (why) => crashes.push(why));
    pool.crashOnNextMail();
    const lost = pool.parse(mail('lost'), '');
    const next = pool.parse(mail('next'), '');
    await expect(lost).rejects.toThrow(/the mail parser stopped: exit code 70/);
    expect((await next).subject).toBe('next');
    expect(crashes).toEqual(['exit code 70']);
    expect(pool.workers).toBe(1);
  });

  it('a worker past its time is ended and its mail failed', async () => {
    pool = new MailParsePool({ timeoutMs: 1 });
    // Large enough that parsing takes longer than 1 ms anywhere.
    const big = Buffer.from(`Subject: big\r\n\r\n${'line of text\r\n'.repeat(200_000)}`);
    await expect(pool.parse(big, '')).rejects.toThrow(/the mail parser stopped: took longer than 1 ms/);
    expect(pool.workers).toBe(0);
  });

  it('refuses after close', async () => {
    pool = new MailParsePool();
    await pool.close();
    await expect(pool.parse(mail('late'), '')).rejects.toThrow(/stopping/);
  });
});

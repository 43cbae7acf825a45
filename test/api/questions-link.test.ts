import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;

const SEC = 1000;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
});

async function askChoice(body: Record<string, unknown> = {}) {
  const ch = await makeChannel(t, dev);
  const res = await t.request('POST', '/ask', {
    token: ch.token,
    json: { question: 'Restart?', options: ['yes', 'no'], ...body },
  });
  if (res.status !== 200) throw new Error(`ask: ${res.status} ${res.text}`);
  const extras = JSON.parse(
    t.server.ctx.db.first<{ extras: string }>('SELECT extras FROM messages WHERE id = ?', [
      res.body.messageId,
    ])!.extras,
  );
  const links = extras['service::question'].links as Record<string, string>;
  /** The path and query of an option's link (the public URL is this server's). */
  const path = (o: string) => links[o]!.slice(t.server.ctx.publicUrl().length);
  return { ch, id: res.body.id as number, messageId: res.body.messageId as number, path };
}

function status(id: number) {
  return t.server.ctx.db.first<{ status: string; answer: string | null; answered_by: string | null }>(
    'SELECT status, answer, answered_by FROM questions WHERE id = ?',
    [id],
  );
}

function heading(html: string): string {
  return /<h1>(.*)<\/h1>/.exec(html)?.[1] ?? '';
}

describe('GET /a/answer (§7.4)', () => {
  it('GET /a/answer records the option and shows Answer recorded when the question is pending', async () => {
    const q = await askChoice({ clientMessageId: 'l-1', callbackUrl: 'http://127.0.0.1:9/cb' });
    const res = await t.request('GET', q.path('no'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(heading(res.text)).toBe('Answer recorded: no');
    expect(status(q.id)).toEqual({ status: 'answered', answer: '"no"', answered_by: 'link' });
    // The owner's read mark.
    const list = await t.request('GET', `/application/${q.ch.id}/message`, { token: dev });
    expect(list.body.messages[0]).toMatchObject({ id: q.messageId, read: true });
    const cb = t.server.ctx.db.all("SELECT adapter FROM deliveries WHERE appid = ? AND kind = 'callback'", [
      q.ch.id,
    ]);
    expect(cb).toEqual([{ adapter: 'callback' }]);
  });

  it('GET /a/answer answers 409 with the recorded answer when the question was already answered', async () => {
    const q = await askChoice();
    expect((await t.request('GET', q.path('yes'))).status).toBe(200);
    const second = await t.request('GET', q.path('no'));
    expect(second.status).toBe(409);
    expect(heading(second.text)).toBe('This question was already answered: yes');
    const json = await t.request('GET', q.path('no'), { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(409);
    expect(json.body).toEqual({
      error: 'Conflict',
      errorCode: 409,
      errorDescription: 'This question was already answered: yes',
    });
    expect(status(q.id)!.answer).toBe('"yes"');
  });

  it('GET /a/answer answers 410 when the question expired or was cancelled', async () => {
    const expired = await askChoice({ timeout_sec: 10 });
    t.clock.advance(10 * SEC);
    await t.server.scheduler.tick();
    const a = await t.request('GET', expired.path('yes'));
    expect(a.status).toBe(410);
    expect(heading(a.text)).toBe('This question is no longer open');
    const cancelled = await askChoice();
    await t.request('DELETE', `/ask-question/${cancelled.id}`, { token: dev });
    const b = await t.request('GET', cancelled.path('yes'));
    expect(b.status).toBe(410);
    expect(status(cancelled.id)!.status).toBe('cancelled');
    // Past the deadline before the timer ran: expired there and then.
    const late = await askChoice({ timeout_sec: 5 });
    t.clock.advance(6 * SEC);
    expect((await t.request('GET', late.path('yes'))).status).toBe(410);
    expect(status(late.id)!.status).toBe('expired');
  });

  it('GET /a/answer answers 400 This link is not valid when the signature or token is bad', async () => {
    const q = await askChoice();
    const good = q.path('yes');
    const tampered = `${good.slice(0, -3)}${good.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    for (const path of [tampered, '/a/answer', '/a/answer?token=', '/a/answer?token=abc.def']) {
      const res = await t.request('GET', path);
      expect({ path, status: res.status, h: heading(res.text) }).toEqual({
        path,
        status: 400,
        h: 'This link is not valid',
      });
    }
    // A token signed for another purpose (a read link) is not an answer link.
    const { readLinkFor } = await import('../../server/delivery/outbox/service');
    const read = readLinkFor(t.server.ctx, q.messageId, 1);
    const token = new URL(read).searchParams.get('token')!;
    expect((await t.request('GET', `/a/answer?token=${token}`)).status).toBe(400);
    expect(status(q.id)!.status).toBe('pending');
  });

  it('GET /a/answer records nothing for link-preview agents', async () => {
    const q = await askChoice();
    for (const ua of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'TelegramBot (like TwitterBot)',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'facebookexternalhit/1.1',
      'Twitterbot/1.0',
      'WhatsApp/2.23.20.0',
    ]) {
      const res = await t.request('GET', q.path('yes'), { headers: { 'User-Agent': ua } });
      expect({ ua, status: res.status, h: heading(res.text) }).toEqual({
        ua,
        status: 200,
        h: 'Open this link in a browser to answer',
      });
    }
    expect(status(q.id)).toEqual({ status: 'pending', answer: null, answered_by: null });
  });

  it('GET /a/answer answers JSON by Accept and ignores credentials in headers and cookies', async () => {
    const q = await askChoice();
    const res = await t.request('GET', q.path('yes'), {
      token: 'Cnot-a-real-token',
      headers: { Accept: 'application/json', Cookie: 'service-client-token=Cbogus' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, id: q.id, answer: 'yes' });
    expect(status(q.id)!.answered_by).toBe('link');
    const bad = await t.request('GET', '/a/answer?token=x.y', { headers: { Accept: 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('This link is not valid');
  });
});

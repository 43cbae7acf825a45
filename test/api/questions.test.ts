import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents, remainingEvents } from '../../server/features/quota/service';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function askOk(key: string, body: Record<string, unknown>) {
  const res = await t.request('POST', '/ask', { token: key, json: body });
  if (res.status !== 200) throw new Error(`ask: ${res.status} ${res.text}`);
  return res.body as { id: number; status: string; messageId: number; expiresAt: string };
}

function messageRow(id: number) {
  return t.server.ctx.db.first<{ title: string; message: string; priority: number; extras: string }>(
    'SELECT title, message, priority, extras FROM messages WHERE id = ?',
    [id],
  )!;
}

describe('POST /ask', () => {
  it('POST /ask writes a choice question as a message with the §7.1 extras when asked with a channel key', async () => {
    const ch = await makeChannel(t, dev, { defaultPriority: 6 });
    const now = t.clock.now();
    const r = await askOk(ch.token, {
      question: 'Restart db-07 now?',
      options: ['yes', 'no'],
      defaultOption: 'yes',
    });
    expect(r).toEqual({
      id: expect.any(Number),
      status: 'pending',
      messageId: expect.any(Number),
      expiresAt: iso(now + 3_600_000),
    });
    const m = messageRow(r.messageId);
    expect(m.title).toBe('Question');
    expect(m.message).toBe('Restart db-07 now?');
    expect(m.priority).toBe(6);
    const extras = JSON.parse(m.extras);
    const base = t.server.ctx.publicUrl();
    expect(extras).toEqual({
      'service::question': {
        id: r.id,
        type: 'choice',
        options: ['yes', 'no'],
        defaultOption: 'yes',
        multiSelect: false,
        fields: [],
        format: 'text',
        expiresAt: iso(now + 3_600_000),
        links: {
          yes: expect.stringMatching(/\/a\/answer\?token=[\w-]+\.[\w-]+$/),
          no: expect.stringMatching(/\/a\/answer\?token=[\w-]+\.[\w-]+$/),
        },
      },
      'client::notification': { click: { url: `${base}/inbox?channel=${ch.id}#message-${r.messageId}` } },
    });
    expect(extras['service::question'].links.yes.startsWith(`${base}/a/answer?token=`)).toBe(true);
    expect(extras['service::question'].links.yes).not.toBe(extras['service::question'].links.no);
    // The message is an ordinary one of the channel: listed with its extras.
    const list = await t.request('GET', `/application/${ch.id}/message`, { token: dev });
    expect(list.body.messages[0]).toMatchObject({ id: r.messageId, extras });
  });

  it('POST /ask gives each type its extras when asked with options, multiSelect, fields or nothing', async () => {
    const ch = await makeChannel(t, dev);
    const multi = await askOk(ch.token, { question: 'Which?', options: ['a', 'b'], multiSelect: true });
    const form = await askOk(ch.token, {
      question: 'Details?',
      fields: [{ name: 'count', label: 'Count', type: 'number', required: true }],
    });
    const text = await askOk(ch.token, {
      question: 'Config?',
      format: 'json',
      title: 'Need input',
      priority: 9,
    });
    const q = (r: { messageId: number }) => JSON.parse(messageRow(r.messageId).extras)['service::question'];
    expect(q(multi)).toMatchObject({ type: 'multi', multiSelect: true, options: ['a', 'b'] });
    expect(q(multi).links).toBeUndefined();
    expect(q(form)).toMatchObject({
      type: 'form',
      fields: [{ name: 'count', label: 'Count', type: 'number', required: true }],
    });
    expect(q(text)).toMatchObject({ type: 'text', format: 'json', options: [] });
    expect(messageRow(text.messageId)).toMatchObject({ title: 'Need input', priority: 9 });
  });

  it('POST /ask answers the existing question when the clientMessageId repeats within 30 days', async () => {
    const ch = await makeChannel(t, dev);
    const first = await askOk(ch.token, { question: 'Deploy?', options: ['go'], clientMessageId: 'dep-1' });
    const count = () =>
      t.server.ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE channel_id = ?', [
        ch.id,
      ])!.n;
    expect(count()).toBe(1);
    // The body is ignored, even an invalid one.
    const again = await t.request('POST', '/ask', {
      token: ch.token,
      json: { clientMessageId: 'dep-1', question: '' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
    expect(count()).toBe(1);
    // Another channel has its own ids.
    const other = await makeChannel(t, dev);
    const elsewhere = await askOk(other.token, { question: 'Deploy?', clientMessageId: 'dep-1' });
    expect(elsewhere.id).not.toBe(first.id);
    // After 30 days the id is free again.
    t.clock.advance(30 * 86_400_000 + 1000);
    const later = await askOk(ch.token, { question: 'Deploy?', clientMessageId: 'dep-1' });
    expect(later.id).not.toBe(first.id);
  });

  it('POST /ask with a share key with send writes to the shared channel as the recipient', async () => {
    const owner = makeUser(t);
    const ownerDev = (await deviceToken(t, owner)).token;
    const ch = await makeChannel(t, ownerDev);
    const recipient = makeUser(t);
    const recDev = (await deviceToken(t, recipient)).token;
    const share = await t.request('POST', `/application/${ch.id}/share`, {
      token: ownerDev,
      json: { email: recipient.email, permission: 'send' },
    });
    expect(share.status).toBe(200);
    const accept = await t.request('POST', `/share/${share.body.id}/accept`, { token: recDev });
    expect(accept.status).toBe(200);
    const r = await askOk(accept.body.token ?? share.body.token, { question: 'Shared?' });
    expect(
      t.server.ctx.db.first('SELECT channel_id, sender_name FROM messages WHERE id = ?', [r.messageId]),
    ).toEqual({
      channel_id: ch.id,
      sender_name: recipient.email,
    });
  });

  it('POST /ask refuses device and API tokens (401) and a channel key without write (403)', async () => {
    const ch = await makeChannel(t, dev);
    expect((await t.request('POST', '/ask', { token: dev, json: { question: 'x' } })).status).toBe(401);
    const api = await apiToken(t, { token: dev });
    expect((await t.request('POST', '/ask', { token: api.token, json: { question: 'x' } })).status).toBe(401);
    const key = await t.request('POST', `/application/${ch.id}/token`, {
      token: dev,
      json: { name: 'ro', canRead: true, canWrite: false },
    });
    expect(key.status).toBe(200);
    const ro = await t.request('POST', '/ask', { token: key.body.token, json: { question: 'x' } });
    expect(ro.status).toBe(403);
    expect(ro.body.errorDescription).toBe('token lacks the write permission');
    expect((await t.request('POST', '/ask', { json: { question: 'x' } })).status).toBe(401);
  });

  it('POST /ask answers 400 <field>: <problem> when a field is invalid', async () => {
    const ch = await makeChannel(t, dev);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'question: required'],
      [{ question: '' }, 'question: required'],
      [{ question: 'x'.repeat(4001) }, 'question: at most 4000 characters'],
      [{ question: 'q', title: 'x'.repeat(1001) }, 'title: at most 1000 characters'],
      [{ question: 'q', options: 'yes' }, 'options: must be an array of strings'],
      [
        { question: 'q', options: Array.from({ length: 11 }, (_, i) => `o${i}`) },
        'options: at most 10 options',
      ],
      [{ question: 'q', options: ['a', 'a'] }, 'options: must be distinct'],
      [{ question: 'q', options: [''] }, 'options[0]: required'],
      [{ question: 'q', options: ['x'.repeat(101)] }, 'options[0]: at most 100 characters'],
      [{ question: 'q', options: ['a'], defaultOption: 'b' }, 'defaultOption: must be one of options'],
      [{ question: 'q', multiSelect: true }, 'multiSelect: needs options'],
      [
        { question: 'q', options: ['a'], fields: [{ name: 'f', label: 'F', type: 'text' }] },
        'fields: cannot be combined with options',
      ],
      [
        { question: 'q', fields: [{ name: 'bad name', type: 'text' }] },
        'fields[0].name: 1-40 characters of A-Z, a-z, 0-9 and _',
      ],
      [
        {
          question: 'q',
          fields: [
            { name: 'a', type: 'text' },
            { name: 'a', type: 'text' },
          ],
        },
        'fields[1].name: must be distinct',
      ],
      [
        { question: 'q', fields: [{ name: 'a', type: 'colour' }] },
        'fields[0].type: must be one of text, textarea, number, boolean, select, multiselect, date, email',
      ],
      [
        { question: 'q', fields: [{ name: 'a', type: 'select' }] },
        'fields[0].options: required for select fields',
      ],
      [
        { question: 'q', fields: [{ name: 'a', type: 'number', default: 'x' }] },
        'fields[0].default: must be a number',
      ],
      [{ question: 'q', format: 'xml' }, 'format: must be text or json'],
      [{ question: 'q', options: ['a'], format: 'json' }, 'format: json is only for free-text questions'],
      [{ question: 'q', timeout_sec: 0 }, 'timeout_sec: must be 1-86400'],
      [{ question: 'q', timeout_sec: 86_401 }, 'timeout_sec: must be 1-86400'],
      [{ question: 'q', timeout_sec: 1.5 }, 'timeout_sec: must be an integer'],
      [{ question: 'q', options: ['a'], defaultAnswer: 'b' }, 'defaultAnswer: must be one of a'],
      [{ question: 'q', format: 'json', defaultAnswer: '{' }, 'defaultAnswer: not valid JSON'],
      [{ question: 'q', options: ['a'], next: { b: { question: 'then?' } } }, 'next.b: not one of options'],
      [{ question: 'q', options: ['a'], next: { a: {} } }, 'next.a.question: required'],
      [
        { question: 'q', options: ['a'], multiSelect: true, next: { a: { question: 'x' } } },
        'next: only for single-choice questions (options)',
      ],
      [{ question: 'q', clientMessageId: '' }, 'clientMessageId: must be 1-200 characters'],
      [{ question: 'q', clientMessageId: 'x'.repeat(201) }, 'clientMessageId: must be 1-200 characters'],
      [{ question: 'q', callbackUrl: 'ftp://example.com/x' }, 'callbackUrl: must be an http(s) URL'],
      [{ question: 'q', callbackUrl: 'not a url' }, 'callbackUrl: must be an http(s) URL'],
      [{ question: 'q', callbackSecret: 's3cret' }, 'callbackSecret: needs callbackUrl'],
      [
        { question: 'q', callbackUrl: 'https://example.com/cb', callbackSecret: 'x'.repeat(201) },
        'callbackSecret: at most 200 characters',
      ],
      [{ question: 'q', priority: 11 }, 'priority: must be 0-10'],
    ];
    for (const [json, text] of cases) {
      const res = await t.request('POST', '/ask', { token: ch.token, json });
      expect({ json, status: res.status, text: res.body.errorDescription }).toEqual({
        json,
        status: 400,
        text,
      });
    }
    // Nothing was written.
    expect(
      t.server.ctx.db.first('SELECT COUNT(*) AS n FROM questions WHERE channel_id = ?', [ch.id]),
    ).toEqual({ n: 0 });
  });

  it('POST /ask refuses next deeper than 5 levels', async () => {
    const ch = await makeChannel(t, dev);
    const chain = (depth: number): Record<string, unknown> =>
      depth === 0
        ? { question: 'leaf', options: ['a'] }
        : { question: `d${depth}`, options: ['a'], next: { a: chain(depth - 1) } };
    expect((await t.request('POST', '/ask', { token: ch.token, json: chain(5) })).status).toBe(200);
    const deep = await t.request('POST', '/ask', { token: ch.token, json: chain(6) });
    expect(deep.status).toBe(400);
    expect(deep.body.errorDescription).toBe(
      'next.a.next.a.next.a.next.a.next.a.next: follow-ups nest at most 5 levels deep',
    );
  });

  it('POST /ask spends one event of the daily quota and answers 429 when it is spent', async () => {
    const user = makeUser(t);
    const ch = await makeChannel(t, (await deviceToken(t, user)).token);
    const ctx = t.server.ctx;
    const before = remainingEvents(ctx, user.id);
    await askOk(ch.token, { question: 'one' });
    expect(remainingEvents(ctx, user.id)).toBe(before - 1);
    ctx.db.transaction(() => consumeEvents(ctx, user.id, remainingEvents(ctx, user.id)));
    const spent = await t.request('POST', '/ask', { token: ch.token, json: { question: 'two' } });
    expect(spent.status).toBe(429);
    expect(ctx.db.first('SELECT COUNT(*) AS n FROM questions WHERE channel_id = ?', [ch.id])).toEqual({
      n: 1,
    });
  });

  it('GET /ask-question/{id} shows the record with the callback secret masked', async () => {
    const ch = await makeChannel(t, dev);
    const now = t.clock.now();
    const r = await askOk(ch.token, {
      question: 'Proceed?',
      options: ['yes', 'no'],
      callbackUrl: 'https://example.com/cb',
      callbackSecret: 'hunter2',
      clientMessageId: 'c-1',
      timeout_sec: 60,
    });
    const res = await t.request('GET', `/ask-question/${r.id}`, { token: ch.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: r.id,
      appid: ch.id,
      messageId: r.messageId,
      status: 'pending',
      title: 'Question',
      question: 'Proceed?',
      type: 'choice',
      options: ['yes', 'no'],
      defaultOption: null,
      multiSelect: false,
      fields: [],
      format: 'text',
      answer: null,
      answeredAt: null,
      answeredBy: null,
      expiresAt: iso(now + 60_000),
      timeout_sec: 60,
      clientMessageId: 'c-1',
      parentId: null,
      nextQuestionId: null,
      createdAt: iso(now),
      priority: ch.defaultPriority,
      defaultAnswer: null,
      callbackUrl: 'https://example.com/cb',
      callbackSecret: '********',
    });
    const stored = t.server.ctx.db.first<{ callback_secret: string }>(
      'SELECT callback_secret FROM questions WHERE id = ?',
      [r.id],
    )!;
    expect(stored.callback_secret).not.toContain('hunter2');
    // A device token of the owner reads it too; another user's does not (404); another channel's key neither.
    expect((await t.request('GET', `/ask-question/${r.id}`, { token: dev })).status).toBe(200);
    const foreign = await t.request('GET', `/ask-question/${r.id}`, { token: otherDev });
    expect(foreign.status).toBe(404);
    expect(foreign.body.errorDescription).toBe('question not found');
    const other = await makeChannel(t, dev);
    expect((await t.request('GET', `/ask-question/${r.id}`, { token: other.token })).status).toBe(404);
  });
});

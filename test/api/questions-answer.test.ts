import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs } from './realtime-helpers';

let t: TestServer;
let dev: string;
let otherDev: string;

const SEC = 1000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function ask(key: string, body: Record<string, unknown>) {
  const res = await t.request('POST', '/ask', { token: key, json: body });
  if (res.status !== 200) throw new Error(`ask: ${res.status} ${res.text}`);
  return res.body as { id: number; status: string; messageId: number; expiresAt: string };
}

function answer(id: number, value: unknown, token = dev) {
  return t.request('POST', `/ask-question/${id}/answer`, { token, json: { answer: value } });
}

async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

function row(id: number) {
  return t.server.ctx.db.first<Record<string, unknown>>('SELECT * FROM questions WHERE id = ?', [id])!;
}

function callbacks(appid: number) {
  return t.server.ctx.db
    .all<{ payload: string }>(
      "SELECT payload FROM deliveries WHERE appid = ? AND kind = 'callback' ORDER BY id",
      [appid],
    )
    .map((r) => JSON.parse(JSON.parse(r.payload).body));
}

/** A recipient with `permission` on a fresh channel of a fresh owner: their device token and the S key. */
async function sharedChannel(permission: 'view' | 'send') {
  const owner = makeUser(t);
  const ownerDev = (await deviceToken(t, owner)).token;
  const ch = await makeChannel(t, ownerDev);
  const recipient = makeUser(t);
  const recDev = (await deviceToken(t, recipient)).token;
  const share = await t.request('POST', `/application/${ch.id}/share`, {
    token: ownerDev,
    json: { email: recipient.email, permission },
  });
  const accepted = await t.request('POST', `/share/${share.body.id}/accept`, { token: recDev });
  return { ch, ownerDev, recDev, shareId: share.body.id as number, shareKey: accepted.body.token as string };
}

describe('answering (§7.3)', () => {
  it('POST /ask-question/{id}/answer records each type when the answer is valid', async () => {
    const ch = await makeChannel(t, dev);
    const choice = await ask(ch.token, { question: 'q', options: ['yes', 'no'] });
    const multi = await ask(ch.token, { question: 'q', options: ['a', 'b', 'c'], multiSelect: true });
    const form = await ask(ch.token, {
      question: 'q',
      fields: [
        { name: 'count', label: 'Count', type: 'number', required: true },
        { name: 'ok', label: 'OK', type: 'boolean' },
        { name: 'env', label: 'Env', type: 'select', options: ['prod', 'dev'] },
        { name: 'tags', label: 'Tags', type: 'multiselect', options: ['x', 'y'] },
        { name: 'day', label: 'Day', type: 'date' },
        { name: 'mail', label: 'Mail', type: 'email' },
        { name: 'note', label: 'Note', type: 'textarea' },
      ],
    });
    const text = await ask(ch.token, { question: 'q' });
    const json = await ask(ch.token, { question: 'q', format: 'json' });
    const json2 = await ask(ch.token, { question: 'q', format: 'json' });
    const now = t.clock.now();
    const r1 = await answer(choice.id, 'yes');
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({
      id: choice.id,
      status: 'answered',
      answer: 'yes',
      answeredAt: iso(now),
      answeredBy: 'user',
    });
    expect((await answer(multi.id, ['c', 'a'])).body.answer).toEqual(['c', 'a']);
    const f = await answer(form.id, {
      count: '3',
      ok: false,
      env: 'prod',
      tags: ['y'],
      day: '2026-02-01',
      mail: 'a@example.com',
      note: 'hi',
      unknown: 'ignored',
    });
    expect(f.body.answer).toEqual({
      count: 3,
      ok: false,
      env: 'prod',
      tags: ['y'],
      day: '2026-02-01',
      mail: 'a@example.com',
      note: 'hi',
    });
    expect((await answer(text.id, 'free text')).body.answer).toBe('free text');
    expect((await answer(json.id, '{"a":[1,2]}')).body.answer).toEqual({ a: [1, 2] });
    expect((await answer(json2.id, { b: true })).body.answer).toEqual({ b: true });
  });

  it('POST /ask-question/{id}/answer answers 400 with the §7.3 texts when the answer does not fit', async () => {
    const ch = await makeChannel(t, dev);
    const choice = await ask(ch.token, { question: 'q', options: ['yes', 'no'] });
    const multi = await ask(ch.token, { question: 'q', options: ['a', 'b'], multiSelect: true });
    const form = await ask(ch.token, {
      question: 'q',
      fields: [
        { name: 'count', label: 'Count', type: 'number', required: true },
        { name: 'ok', label: 'OK', type: 'boolean' },
        { name: 'env', label: 'Env', type: 'select', options: ['prod', 'dev'] },
        { name: 'day', label: 'Day', type: 'date' },
        { name: 'mail', label: 'Mail', type: 'email' },
      ],
    });
    const text = await ask(ch.token, { question: 'q' });
    const json = await ask(ch.token, { question: 'q', format: 'json' });
    const cases: [number, unknown, string][] = [
      [choice.id, 'maybe', 'answer: must be one of yes, no'],
      [choice.id, ['yes'], 'answer: must be one of yes, no'],
      [choice.id, undefined, 'answer: required'],
      [multi.id, 'a', 'answer: must be an array of options'],
      [multi.id, [], 'answer: must be an array of options'],
      [multi.id, ['a', 'a'], 'answer: must be an array of options'],
      [multi.id, ['a', 'z'], 'answer: must be an array of options'],
      [form.id, {}, 'answer.count: required'],
      [form.id, 'x', 'answer: must be an object'],
      [form.id, { count: 'abc' }, 'answer.count: must be a number'],
      [form.id, { count: 1, ok: 'yes' }, 'answer.ok: must be a boolean'],
      [form.id, { count: 1, env: 'staging' }, 'answer.env: must be one of prod, dev'],
      [form.id, { count: 1, day: '01/02/2026' }, 'answer.day: must be a date (YYYY-MM-DD)'],
      [form.id, { count: 1, mail: 'nope' }, 'answer.mail: must be an email address'],
      [text.id, '', 'answer: must be a string of 1-10000 characters'],
      [text.id, 'x'.repeat(10_001), 'answer: must be a string of 1-10000 characters'],
      [text.id, 5, 'answer: must be a string of 1-10000 characters'],
      [json.id, '{not json', 'answer: not valid JSON'],
    ];
    for (const [id, value, text] of cases) {
      const res = await answer(id, value);
      expect({ id, value, status: res.status, text: res.body.errorDescription }).toEqual({
        id,
        value,
        status: 400,
        text,
      });
    }
    expect(row(choice.id).status).toBe('pending');
  });

  it('POST /ask-question/{id}/answer answers 409 when the question is not pending', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q', options: ['yes', 'no'] });
    expect((await answer(q.id, 'yes')).status).toBe(200);
    const again = await answer(q.id, 'no');
    expect(again.status).toBe(409);
    expect(again.body.errorDescription).toBe('question is not pending');
    expect(row(q.id).answer).toBe('"yes"');
    // A deadline that passed before the timer ran: expired at once, 409.
    const late = await ask(ch.token, { question: 'q', timeout_sec: 5 });
    t.clock.advance(5 * SEC);
    expect((await answer(late.id, 'too late')).status).toBe(409);
    expect(row(late.id).status).toBe('expired');
  });

  it('POST /message/{id}/answer answers the question of a message, and 404 when the message is none', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q', options: ['yes', 'no'] });
    const res = await t.request('POST', `/message/${q.messageId}/answer`, {
      token: dev,
      json: { answer: 'no' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: q.id, status: 'answered', answer: 'no' });
    const plain = await t.request('POST', '/message', { token: ch.token, json: { message: 'hi' } });
    const none = await t.request('POST', `/message/${plain.body.id}/answer`, {
      token: dev,
      json: { answer: 'x' },
    });
    expect(none.status).toBe(404);
    expect(none.body.errorDescription).toBe('message is not a question');
    const foreign = await t.request('POST', `/message/${q.messageId}/answer`, {
      token: otherDev,
      json: { answer: 'x' },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.errorDescription).toBe('message not found');
  });

  it('answering marks the message read for the answering user and cancels its queued re-delivery', async () => {
    const ch = await makeChannel(t, dev, {
      deliveryConfig: { webhook: { url: 'https://example.com/hook', delaySec: 60 } },
    });
    const q = await ask(ch.token, { question: 'q', options: ['yes', 'no'] });
    const entry = () =>
      t.server.ctx.db.first<{ status: string; cancel_reason: string | null }>(
        "SELECT status, cancel_reason FROM deliveries WHERE message_id = ? AND kind = 'redelivery'",
        [q.messageId],
      );
    expect(entry()).toEqual({ status: 'queued', cancel_reason: null });
    await answer(q.id, 'yes');
    const list = await t.request('GET', `/application/${ch.id}/message`, { token: dev });
    expect(list.body.messages.find((m: { id: number }) => m.id === q.messageId).read).toBe(true);
    expect(entry()).toEqual({ status: 'cancelled', cancel_reason: 'read' });
  });

  it('DELETE /ask-question/{id} cancels a pending question; GET then answers 410 question cancelled', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, {
      question: 'q',
      options: ['yes'],
      callbackUrl: 'http://127.0.0.1:9/cb',
      clientMessageId: 'k',
    });
    const res = await t.request('DELETE', `/ask-question/${q.id}`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: q.id, status: 'cancelled', answer: null, answeredBy: null });
    const get = await t.request('GET', `/ask-question/${q.id}`, { token: ch.token });
    expect(get.status).toBe(410);
    expect(get.body.errorDescription).toBe('question cancelled');
    expect((await t.request('DELETE', `/ask-question/${q.id}`, { token: dev })).status).toBe(409);
    expect((await answer(q.id, 'yes')).status).toBe(409);
    expect(callbacks(ch.id)).toEqual([
      { id: q.id, status: 'cancelled', answer: null, answeredAt: null, clientMessageId: 'k' },
    ]);
  });

  it('POST /ask-question/{id}/extend sets the deadline to now + timeout_sec, and 409 when not pending', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q', options: ['yes'], timeout_sec: 100 });
    await advance(60 * SEC);
    const now = t.clock.now();
    const res = await t.request('POST', `/ask-question/${q.id}/extend`, {
      token: dev,
      json: { timeout_sec: 30 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'pending', expiresAt: iso(now + 30 * SEC), timeout_sec: 30 });
    // The message's extras follow.
    const extras = JSON.parse(
      t.server.ctx.db.first<{ extras: string }>('SELECT extras FROM messages WHERE id = ?', [q.messageId])!
        .extras,
    );
    expect(extras['service::question'].expiresAt).toBe(iso(now + 30 * SEC));
    // A channel key with write may extend too.
    const byKey = await t.request('POST', `/ask-question/${q.id}/extend`, {
      token: ch.token,
      json: { timeout_sec: 50 },
    });
    expect(byKey.body.expiresAt).toBe(iso(now + 50 * SEC));
    const bad = await t.request('POST', `/ask-question/${q.id}/extend`, {
      token: dev,
      json: { timeout_sec: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('timeout_sec: must be 1-86400');
    await advance(49 * SEC);
    expect(row(q.id).status).toBe('pending');
    await advance(1 * SEC);
    expect(row(q.id).status).toBe('expired');
    const gone = await t.request('POST', `/ask-question/${q.id}/extend`, {
      token: dev,
      json: { timeout_sec: 30 },
    });
    expect(gone.status).toBe(409);
  });

  it('the deadline expires a question (410 question expired) and submits its default answer', async () => {
    const ch = await makeChannel(t, dev);
    const start = t.clock.now();
    const plain = await ask(ch.token, {
      question: 'q',
      options: ['yes', 'no'],
      timeout_sec: 10,
      callbackUrl: 'http://127.0.0.1:9/cb',
    });
    const withDefault = await ask(ch.token, {
      question: 'q',
      options: ['yes', 'no'],
      timeout_sec: 20,
      defaultAnswer: 'no',
      clientMessageId: 'd-1',
      callbackUrl: 'http://127.0.0.1:9/cb',
      callbackSecret: 'shh',
    });
    await advance(10 * SEC - 1);
    expect(row(plain.id).status).toBe('pending');
    await advance(1);
    expect(row(plain.id)).toMatchObject({ status: 'expired', answer: null, answered_by: null });
    const get = await t.request('GET', `/ask-question/${plain.id}`, { token: ch.token });
    expect(get.status).toBe(410);
    expect(get.body.errorDescription).toBe('question expired');
    await advance(15 * SEC);
    expect(row(withDefault.id)).toMatchObject({
      status: 'expired',
      answer: '"no"',
      answered_at: start + 20 * SEC,
      answered_by: 'default',
    });
    const ready = await t.request('GET', '/ask/pending-answers', { token: ch.token });
    expect(ready.body).toEqual({
      answers: [
        {
          id: plain.id,
          status: 'expired',
          answer: null,
          answeredAt: null,
          clientMessageId: null,
          messageId: plain.messageId,
        },
        {
          id: withDefault.id,
          status: 'expired',
          answer: 'no',
          answeredAt: iso(start + 20 * SEC),
          clientMessageId: 'd-1',
          messageId: withDefault.messageId,
        },
      ],
    });
    expect(callbacks(ch.id)).toEqual([
      { id: plain.id, status: 'expired', answer: null, answeredAt: null, clientMessageId: null },
      {
        id: withDefault.id,
        status: 'expired',
        answer: 'no',
        answeredAt: iso(start + 20 * SEC),
        clientMessageId: 'd-1',
      },
    ]);
    // The callback's secret is sealed in the outbox, never in clear.
    const payload = t.server.ctx.db.first<{ payload: string }>(
      "SELECT payload FROM deliveries WHERE appid = ? AND kind = 'callback' ORDER BY id DESC LIMIT 1",
      [ch.id],
    )!.payload;
    expect(payload).not.toContain('shh');
    const log = await t.request('GET', `/application/${ch.id}/deliveries`, { token: dev });
    expect(log.body.deliveries.filter((d: { kind: string }) => d.kind === 'callback')).toHaveLength(2);
    expect(log.body.deliveries[0]).toMatchObject({ adapter: 'callback', kind: 'callback' });
  });
});

describe('reading and acknowledging (§7.2)', () => {
  it('GET /ask/pending-answers lists answered and expired questions oldest first until acked', async () => {
    const ch = await makeChannel(t, dev);
    const a = await ask(ch.token, { question: 'a', options: ['yes'], clientMessageId: 'a' });
    const b = await ask(ch.token, { question: 'b' });
    const c = await ask(ch.token, { question: 'c' });
    await answer(b.id, 'second?');
    await advance(SEC);
    await answer(a.id, 'yes');
    const t1 = t.clock.now();
    const list = await t.request('GET', '/ask/pending-answers', { token: ch.token });
    expect(list.body.answers.map((x: { id: number }) => x.id)).toEqual([b.id, a.id]);
    expect(list.body.answers[1]).toEqual({
      id: a.id,
      status: 'answered',
      answer: 'yes',
      answeredAt: iso(t1),
      clientMessageId: 'a',
      messageId: a.messageId,
    });
    const other = await makeChannel(t, dev);
    expect((await t.request('GET', '/ask/pending-answers', { token: other.token })).body).toEqual({
      answers: [],
    });
    // Foreign, unknown and pending ids are skipped.
    const ack = await t.request('POST', '/ask/ack', {
      token: ch.token,
      json: { ids: [b.id, c.id, 999_999] },
    });
    expect(ack.body).toEqual({ acked: 1 });
    expect((await t.request('POST', '/ask/ack', { token: other.token, json: { ids: [a.id] } })).body).toEqual(
      { acked: 0 },
    );
    expect((await t.request('GET', '/ask/pending-answers', { token: ch.token })).body.answers).toHaveLength(
      1,
    );
    const bad = await t.request('POST', '/ask/ack', { token: ch.token, json: { ids: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toMatch(/^ids: /);
    expect((await t.request('GET', '/ask/pending-answers', { token: dev })).status).toBe(401);
  });
});

describe('follow-ups (next)', () => {
  it('answering an option with a follow-up asks it at once, inheriting title, priority and callback', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, {
      question: 'Deploy?',
      title: 'Release',
      priority: 9,
      options: ['yes', 'no'],
      clientMessageId: 'rel-7',
      callbackUrl: 'http://127.0.0.1:9/cb',
      next: {
        yes: { question: 'Which region?', options: ['eu', 'us'], next: { eu: { question: 'Sure?' } } },
      },
    });
    const res = await answer(q.id, 'yes');
    expect(res.body.nextQuestionId).toEqual(expect.any(Number));
    const child = await t.request('GET', `/ask-question/${res.body.nextQuestionId}`, { token: ch.token });
    expect(child.body).toMatchObject({
      status: 'pending',
      title: 'Release',
      priority: 9,
      question: 'Which region?',
      options: ['eu', 'us'],
      parentId: q.id,
      clientMessageId: 'rel-7/yes',
      callbackUrl: 'http://127.0.0.1:9/cb',
    });
    const m = t.server.ctx.db.first('SELECT title, message, priority FROM messages WHERE id = ?', [
      child.body.messageId,
    ]);
    expect(m).toEqual({ title: 'Release', message: 'Which region?', priority: 9 });
    // The grandchild follows the child's answer.
    const grand = await answer(child.body.id, 'eu');
    expect(
      (await t.request('GET', `/ask-question/${grand.body.nextQuestionId}`, { token: dev })).body,
    ).toMatchObject({
      question: 'Sure?',
      clientMessageId: 'rel-7/yes/eu',
      type: 'text',
    });
    // An option without a follow-up asks nothing.
    const q2 = await ask(ch.token, {
      question: 'Deploy?',
      options: ['yes', 'no'],
      next: { yes: { question: 'x' } },
    });
    expect((await answer(q2.id, 'no')).body.nextQuestionId).toBeNull();
  });
  it('a default answer submitted at the deadline asks its follow-up', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, {
      question: 'Proceed?',
      options: ['yes', 'no'],
      timeout_sec: 5,
      defaultAnswer: 'no',
      next: { no: { question: 'Why not?', timeout_sec: 60 } },
    });
    await advance(5 * SEC);
    const parent = row(q.id);
    expect(parent).toMatchObject({
      status: 'expired',
      answered_by: 'default',
      next_question_id: expect.any(Number),
    });
    const child = await t.request('GET', `/ask-question/${parent.next_question_id}`, { token: ch.token });
    expect(child.body).toMatchObject({
      status: 'pending',
      question: 'Why not?',
      parentId: q.id,
      timeout_sec: 60,
    });
  });
});

describe('access (§0.2)', () => {
  it('answer, cancel and extend refuse channel keys (403), read-only API tokens (403) and strangers (404)', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q', options: ['yes'] });
    const byKey = await answer(q.id, 'yes', ch.token);
    expect(byKey.status).toBe(403);
    expect((await t.request('DELETE', `/ask-question/${q.id}`, { token: ch.token })).status).toBe(403);
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await answer(q.id, 'yes', ro.token)).status).toBe(403);
    expect(
      (await t.request('POST', `/ask-question/${q.id}/extend`, { token: ro.token, json: { timeout_sec: 5 } }))
        .status,
    ).toBe(403);
    const stranger = await answer(q.id, 'yes', otherDev);
    expect(stranger.status).toBe(404);
    expect(stranger.body.errorDescription).toBe('question not found');
    expect((await t.request('DELETE', `/ask-question/${q.id}`, { token: otherDev })).status).toBe(404);
    expect(
      (await t.request('POST', `/ask-question/${q.id}/extend`, { token: otherDev, json: { timeout_sec: 5 } }))
        .status,
    ).toBe(404);
    const otherChannel = await makeChannel(t, dev);
    expect(
      (
        await t.request('POST', `/ask-question/${q.id}/extend`, {
          token: otherChannel.token,
          json: { timeout_sec: 5 },
        })
      ).status,
    ).toBe(404);
    // A scoped API token outside the channel: 404.
    const scoped = await apiToken(t, { token: dev }, { appIds: [otherChannel.id] });
    expect((await answer(q.id, 'yes', scoped.token)).status).toBe(404);
    const write = await apiToken(t, { token: dev });
    expect((await answer(q.id, 'yes', write.token)).status).toBe(200);
    expect((await answer(999_999, 'yes')).status).toBe(404);
  });

  it('a send recipient answers; a view recipient reads but cannot answer; losing send ends answering', async () => {
    const s = await sharedChannel('send');
    const q = await ask(s.shareKey, { question: 'q', options: ['yes', 'no'] });
    expect((await t.request('GET', `/ask-question/${q.id}`, { token: s.recDev })).status).toBe(200);
    const q2 = await ask(s.ch.token, { question: 'q', options: ['yes'] });
    // Downgraded to view: the record stays, answering needs send.
    const down = await t.request('PUT', `/share/${s.shareId}`, {
      token: s.ownerDev,
      json: { permission: 'view' },
    });
    expect(down.status).toBe(200);
    const refused = await answer(q2.id, 'yes', s.recDev);
    expect(refused.status).toBe(403);
    expect(refused.body.errorDescription).toBe('answering needs the send permission on this channel');
    expect((await t.request('GET', `/ask-question/${q2.id}`, { token: s.recDev })).status).toBe(200);
    expect((await answer(q.id, 'no', s.ownerDev)).body.answeredBy).toBe('user');
  });

  it('a channel key without write cannot read questions (403)', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q' });
    const key = await t.request('POST', `/application/${ch.id}/token`, {
      token: dev,
      json: { name: 'ro', canRead: true, canWrite: false },
    });
    const res = await t.request('GET', `/ask-question/${q.id}`, { token: key.body.token });
    expect(res.status).toBe(403);
    expect((await t.request('GET', '/ask/pending-answers', { token: key.body.token })).status).toBe(403);
  });

  it('deleting the channel removes its questions', async () => {
    const ch = await makeChannel(t, dev);
    const q = await ask(ch.token, { question: 'q', timeout_sec: 30 });
    expect((await t.request('DELETE', `/application/${ch.id}`, { token: dev })).status).toBe(200);
    expect(t.server.ctx.db.first('SELECT id FROM questions WHERE id = ?', [q.id])).toBeUndefined();
    expect((await answer(q.id, 'x')).status).toBe(404);
    await advance(60 * SEC);
  });
});

describe('live frames (§1.7)', () => {
  it('/ws?events=1 receives question:updated on ask, answer, extend and cancel', async () => {
    const ch = await makeChannel(t, dev);
    const socket = await openWs(t, '/ws?events=1', dev);
    const q = await ask(ch.token, { question: 'q', options: ['yes'] });
    const q2 = await ask(ch.token, { question: 'q2' });
    await answer(q.id, 'yes');
    await t.request('DELETE', `/ask-question/${q2.id}`, { token: dev });
    const frames: unknown[] = [];
    while (frames.length < 4) {
      const f = (await socket.next()) as { kind?: string };
      if (f.kind === 'question:updated') frames.push(f);
    }
    expect(frames).toEqual([
      {
        kind: 'question:updated',
        appid: ch.id,
        at: expect.any(String),
        data: { id: q.id, status: 'pending', messageId: q.messageId },
      },
      {
        kind: 'question:updated',
        appid: ch.id,
        at: expect.any(String),
        data: { id: q2.id, status: 'pending', messageId: q2.messageId },
      },
      {
        kind: 'question:updated',
        appid: ch.id,
        at: expect.any(String),
        data: { id: q.id, status: 'answered', messageId: q.messageId },
      },
      {
        kind: 'question:updated',
        appid: ch.id,
        at: expect.any(String),
        data: { id: q2.id, status: 'cancelled', messageId: q2.messageId },
      },
    ]);
    socket.ws.close();
  });
});

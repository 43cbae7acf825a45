import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiToken,
  deviceToken,
  insertChannelKeyRow,
  makeChannel,
  makeUser,
  sendMessage,
} from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { downHeartbeat, HOUR } from './assistant-helpers';

/** The assistant without a provider (docs/assistant.md): threads, local answers, insights, access. */
let t: TestServer;
const EN = 'No AI model is configured, so this answer comes from local rules.';
const RU = 'Модель ИИ не настроена, поэтому ответ составлен по локальным правилам.';

async function user() {
  const u = makeUser(t);
  const device = await deviceToken(t, u);
  return { ...u, device: device.token };
}

async function chat(token: string, json: Record<string, unknown>) {
  return t.request('POST', '/assistant/chat', { token, json });
}

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('threads', () => {
  it('a first message opens a thread titled by its first 60 characters; both turns are stored', async () => {
    const u = await user();
    const long = `How many messages do I have? ${'x'.repeat(80)}`;
    const res = await chat(u.device, { message: long });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ threadId: expect.any(Number), reply: expect.any(String), provider: 'local' });
    const threads = await t.request('GET', '/assistant/threads', { token: u.device });
    expect(threads.body).toEqual([
      {
        id: res.body.threadId,
        title: long.slice(0, 60),
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
      },
    ]);
    const again = await chat(u.device, { threadId: res.body.threadId, message: 'and the quota?' });
    expect(again.body.threadId).toBe(res.body.threadId);
    const msgs = await t.request('GET', `/assistant/threads/${res.body.threadId}/messages`, {
      token: u.device,
    });
    expect(msgs.body.map((m: { role: string; content: string }) => [m.role, m.content.slice(0, 20)])).toEqual(
      [
        ['user', long.slice(0, 20)],
        ['assistant', EN.slice(0, 20)],
        ['user', 'and the quota?'],
        ['assistant', EN.slice(0, 20)],
      ],
    );
  });

  it('lists the latest updated thread first; deleting one takes its messages', async () => {
    const u = await user();
    const a = (await chat(u.device, { message: 'first' })).body.threadId;
    t.clock.advance(1_000);
    const b = (await chat(u.device, { message: 'second' })).body.threadId;
    t.clock.advance(1_000);
    await chat(u.device, { threadId: a, message: 'back to the first' });
    const list = await t.request('GET', '/assistant/threads', { token: u.device });
    expect(list.body.map((x: { id: number }) => x.id)).toEqual([a, b]);
    expect((await t.request('DELETE', `/assistant/threads/${a}`, { token: u.device })).body).toEqual({});
    expect((await t.request('GET', `/assistant/threads/${a}/messages`, { token: u.device })).status).toBe(
      404,
    );
    const left = t.server.ctx.db.first<{ n: number }>(
      'SELECT COUNT(*) AS n FROM assistant_messages WHERE thread_id = ?',
      [a],
    )!.n;
    expect(left).toBe(0);
  });

  it("someone else's thread, or none, is 404 thread not found on every route", async () => {
    const owner = await user();
    const other = await user();
    const id = (await chat(owner.device, { message: 'mine' })).body.threadId;
    const notFound = { error: 'Not Found', errorCode: 404, errorDescription: 'thread not found' };
    for (const tid of [id, 999_999]) {
      expect(
        (await t.request('GET', `/assistant/threads/${tid}/messages`, { token: other.device })).body,
      ).toEqual(notFound);
      expect((await t.request('DELETE', `/assistant/threads/${tid}`, { token: other.device })).body).toEqual(
        notFound,
      );
      const res = await chat(other.device, { threadId: tid, message: 'hijack' });
      expect([res.status, res.body]).toEqual([404, notFound]);
    }
    expect((await t.request('GET', '/assistant/threads/abc/messages', { token: other.device })).status).toBe(
      404,
    );
    // The owner's thread is untouched and the intruder has no thread.
    expect(
      (await t.request('GET', `/assistant/threads/${id}/messages`, { token: owner.device })).body,
    ).toHaveLength(2);
    expect((await t.request('GET', '/assistant/threads', { token: other.device })).body).toEqual([]);
  });

  it('bad input: 400 naming the field', async () => {
    const u = await user();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'message:'],
      [{ message: '' }, 'message:'],
      [{ message: '   ' }, 'message:'],
      [{ message: 'x'.repeat(4_001) }, 'message:'],
      [{ message: 42 }, 'message:'],
      [{ message: 'hi', lang: 'de' }, 'lang:'],
      [{ message: 'hi', threadId: 'one' }, 'threadId:'],
      [{ message: 'hi', threadId: -1 }, 'threadId:'],
    ];
    for (const [json, prefix] of cases) {
      const res = await chat(u.device, json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorDescription, JSON.stringify(json)).toMatch(new RegExp(`^${prefix}`));
    }
    expect((await chat(u.device, { message: 'x'.repeat(4_000) })).status).toBe(200);
    const q = await t.request('GET', '/assistant/insights?lang=fr', { token: u.device });
    expect([q.status, q.body.errorDescription]).toEqual([400, expect.stringMatching(/^lang:/)]);
    const r = await t.request('GET', '/assistant/insights?refresh=yes', { token: u.device });
    expect([r.status, r.body.errorDescription]).toEqual([400, expect.stringMatching(/^refresh:/)]);
  });

  it('keeps at most 100 threads per user, dropping the least recently updated', async () => {
    const u = await user();
    const first = (await chat(u.device, { message: 'thread 0' })).body.threadId;
    const db = t.server.ctx.db;
    db.transaction(() => {
      for (let i = 1; i < 100; i++)
        db.run('INSERT INTO assistant_threads (user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?)', [
          u.id,
          `thread ${i}`,
          t.clock.now() + i,
          t.clock.now() + i,
        ]);
    });
    t.clock.advance(1_000);
    await chat(u.device, { message: 'thread 100' });
    const list = (await t.request('GET', '/assistant/threads', { token: u.device })).body as { id: number }[];
    expect(list).toHaveLength(100);
    expect(list.map((x) => x.id)).not.toContain(first);
  });
});

describe('access (user-level class)', () => {
  it('device and unscoped API tokens pass (read for GET, write for POST); scoped 403; channel keys 403', async () => {
    const u = await user();
    const ch = await makeChannel(t, u.device);
    const scoped = await apiToken(t, { token: u.device }, { appIds: [ch.id] });
    const read = await apiToken(t, { token: u.device }, { access: 'read' });
    const write = await apiToken(t, { token: u.device }, { access: 'write' });
    const key = insertChannelKeyRow(t, ch.id, { canRead: true });
    const restricted = {
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'an API token with a restricted scope cannot do this',
    };
    expect((await chat(scoped.token, { message: 'hi' })).body).toEqual(restricted);
    expect((await t.request('GET', '/assistant/threads', { token: scoped.token })).body).toEqual(restricted);
    expect((await t.request('GET', '/assistant/insights', { token: scoped.token })).body).toEqual(restricted);
    expect((await chat(key, { message: 'hi' })).status).toBe(403);
    expect((await t.request('GET', '/assistant/threads', { token: key })).status).toBe(403);
    expect((await chat(read.token, { message: 'hi' })).status).toBe(403);
    expect((await t.request('GET', '/assistant/threads', { token: read.token })).status).toBe(200);
    expect((await chat(write.token, { message: 'hi' })).status).toBe(200);
    expect((await t.request('GET', '/assistant/threads')).status).toBe(401);
  });

  it("a deleted user's threads go with them", async () => {
    const u = await user();
    await chat(u.device, { message: 'soon gone' });
    const db = t.server.ctx.db;
    db.transaction(() => db.run('DELETE FROM users WHERE id = ?', [u.id]));
    expect(
      db.first<{ n: number }>('SELECT COUNT(*) AS n FROM assistant_threads WHERE user_id = ?', [u.id])!.n,
    ).toBe(0);
  });
});

describe('local answers', () => {
  it('answers from the caller’s data: counts, quota, failing sources, busiest channels (en)', async () => {
    const u = await user();
    const loud = await makeChannel(t, u.device, { name: 'loud ops' });
    const calm = await makeChannel(t, u.device, { name: 'calm news' });
    for (let i = 0; i < 5; i++) await sendMessage(t, loud.token, { message: `m${i}` });
    await sendMessage(t, calm.token, { message: 'one' });
    await downHeartbeat(t, u.device, loud.id, 'nightly backup', 2 * HOUR);
    // Someone else's busy channel is not counted.
    const stranger = await user();
    const theirs = await makeChannel(t, stranger.device, { name: 'stranger channel' });
    for (let i = 0; i < 7; i++) await sendMessage(t, theirs.token);

    const summary = (await chat(u.device, { message: 'hello there' })).body.reply as string;
    expect(summary.split('\n')[0]).toBe(EN);
    expect(summary).toContain('You have 2 channels with 6 messages; 6 unread.');
    expect(summary).toContain('- nightly backup (heartbeat): down for 2h');
    expect(summary).toContain('1. loud ops: 5 messages');
    expect(summary).toContain('calm news: 1 message');
    expect(summary).toMatch(/Today's event quota: \d+ of \d+ used/);
    expect(summary).not.toContain('stranger');

    const down = (await chat(u.device, { message: 'what is down?' })).body.reply as string;
    expect(down).toContain('nightly backup');
    expect(down).not.toContain('Busiest');
    expect(down).not.toContain('quota');
    const busy = (await chat(u.device, { message: 'which channel is the noisiest / busiest?' })).body
      .reply as string;
    expect(busy).toContain(
      'Busiest channels of the last 24 h:\n1. loud ops: 5 messages\n2. calm news: 1 message',
    );
    expect(busy).not.toContain('nightly backup');
    const quota = (await chat(u.device, { message: 'quota left?' })).body.reply as string;
    expect(quota).toMatch(/Today's event quota: (\d+) of (\d+) used/);
    expect(quota).not.toContain('loud ops');
  });

  it('answers in Russian with lang ru or a Cyrillic question, keywords in any word form', async () => {
    const u = await user();
    const ch = await makeChannel(t, u.device, { name: 'прод' });
    await sendMessage(t, ch.token);
    const r1 = (await chat(u.device, { message: 'что упало?' })).body.reply as string;
    expect(r1.split('\n')[0]).toBe(RU);
    expect(r1).toContain('Сбоев нет');
    expect(r1).not.toContain('Квота');
    const r2 = (await chat(u.device, { message: 'Сколько осталось по квоте?' })).body.reply as string;
    expect(r2).toMatch(/Квота событий на сегодня: использовано \d+ из \d+/);
    const r3 = (await chat(u.device, { message: 'какие каналы шумные', lang: 'ru' })).body.reply as string;
    expect(r3).toContain('Самые активные каналы за последние 24 ч:\n1. прод: 1 сообщение');
    const r4 = (await chat(u.device, { message: 'anything?', lang: 'ru' })).body.reply as string;
    expect(r4.split('\n')[0]).toBe(RU);
    expect(r4).toMatch(/У вас \d+ канал/);
  });

  it('the local path is fast', async () => {
    const u = await user();
    const started = performance.now();
    for (let i = 0; i < 10; i++) expect((await chat(u.device, { message: `status ${i}` })).status).toBe(200);
    const perChat = (performance.now() - started) / 10;
    console.log(`assistant local chat: ${perChat.toFixed(1)} ms per request`);
    expect(perChat).toBeLessThan(500);
  });
});

describe('insights', () => {
  it('the rules of docs/assistant.md with severity and links; cached 10 minutes; refresh recomputes', async () => {
    const u = await user();
    const ch = await makeChannel(t, u.device, { name: 'flood' });
    const quiet = await makeChannel(t, u.device, { name: 'quiet' });
    const db = t.server.ctx.db;
    const now = t.clock.now();
    // noisy_channel (> 100 in 24 h) and unread_backlog (> 100 unread).
    db.transaction(() => {
      for (let i = 0; i < 101; i++)
        db.run(
          'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, ?, ?)',
          [ch.id, u.id, `body ${i}`, '', 5, now - i * 1000],
        );
    });
    const mk = async (name: string) =>
      (
        await t.request('POST', '/heartbeat', {
          token: u.device,
          json: { appid: quiet.id, name, intervalSec: 3600 },
        })
      ).body.id as number;
    const down = await mk('db backup');
    const fresh = await mk('fresh down');
    const idle = await mk('never pinged');
    const flappy = await mk('flappy');
    db.transaction(() => {
      db.run("UPDATE heartbeats SET status = 'down', status_since = ? WHERE id = ?", [now - 2 * HOUR, down]);
      db.run("UPDATE heartbeats SET status = 'down', status_since = ? WHERE id = ?", [now - HOUR / 2, fresh]);
      db.run("UPDATE heartbeats SET status = 'new', status_since = ? WHERE id = ?", [now - 25 * HOUR, idle]);
      for (let i = 0; i < 11; i++)
        db.run(
          "INSERT INTO history_intervals (kind, source_id, status, class, start_at, end_at) VALUES ('heartbeat', ?, ?, 'up', ?, ?)",
          [flappy, i % 2 ? 'up' : 'down', now - HOUR + i * 1000, now - HOUR + i * 1000 + 1000],
        );
      db.run(
        `INSERT INTO deliveries (user_id, appid, message_id, adapter, kind, status, attempts, created_at, last_attempt_at, last_error)
         VALUES (?, ?, NULL, 'webhook', 'redelivery', 'failed', 5, ?, ?, 'HTTP 500')`,
        [u.id, quiet.id, now - HOUR, now - HOUR],
      );
    });

    const res = await t.request('GET', '/assistant/insights', { token: u.device });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      generatedAt: new Date(now).toISOString(),
      provider: 'local',
      polished: false,
      model: null,
    });
    const items = res.body.items as { kind: string; severity: string; links: unknown[]; title: string }[];
    const byKind = (k: string) => items.filter((i) => i.kind === k);
    expect(byKind('source_down')).toEqual([
      {
        kind: 'source_down',
        title: 'db backup is down',
        detail: 'Down for 2h (heartbeat).',
        severity: 'critical',
        links: [{ label: 'db backup', kind: 'heartbeat', id: down }],
      },
    ]);
    expect(byKind('noisy_channel').map((i) => i.links)).toEqual([
      [{ label: 'flood', kind: 'channel', id: ch.id }],
    ]);
    expect(byKind('unread_backlog')).toHaveLength(1);
    expect(byKind('unread_backlog')[0]!.links[0]).toEqual({ label: 'flood', kind: 'channel', id: ch.id });
    expect(byKind('idle_heartbeat').map((i) => i.links)).toEqual([
      [{ label: 'never pinged', kind: 'heartbeat', id: idle }],
    ]);
    expect(byKind('flapping').map((i) => i.links)).toEqual([
      [{ label: 'flappy', kind: 'heartbeat', id: flappy }],
    ]);
    expect(byKind('delivery_failing').map((i) => [i.severity, i.links])).toEqual([
      ['warning', [{ label: 'quiet', kind: 'channel', id: quiet.id }]],
    ]);
    expect(byKind('quota')).toEqual([]);
    expect(items[0]!.severity).toBe('critical');

    // Cached: a new outage is not seen for 10 minutes, unless refresh=1.
    db.transaction(() =>
      db.run('UPDATE heartbeats SET status_since = ? WHERE id = ?', [now - 2 * HOUR, fresh]),
    );
    t.clock.advance(5 * 60_000);
    const cached = await t.request('GET', '/assistant/insights', { token: u.device });
    expect(cached.body).toEqual(res.body);
    const refreshed = await t.request('GET', '/assistant/insights?refresh=1', { token: u.device });
    expect(refreshed.body.items.filter((i: { kind: string }) => i.kind === 'source_down')).toHaveLength(2);
    expect(refreshed.body.generatedAt).not.toBe(res.body.generatedAt);
    t.clock.advance(11 * 60_000);
    const expired = await t.request('GET', '/assistant/insights', { token: u.device });
    expect(expired.body.generatedAt).toBe(new Date(t.clock.now()).toISOString());

    const ru = await t.request('GET', '/assistant/insights?lang=ru', { token: u.device });
    expect(ru.body.items.map((i: { title: string }) => i.title)).toContain('db backup недоступен');
    // polish without a provider: the rules' text, polished false.
    const polished = await t.request('GET', '/assistant/insights?polish=1', { token: u.device });
    expect(polished.body).toMatchObject({ provider: 'local', polished: false });
  });

  it('quota above 80 % is a warning; an empty account has no insights', async () => {
    const u = await user();
    const empty = await t.request('GET', '/assistant/insights', { token: u.device });
    expect(empty.body.items).toEqual([]);
    const limit = t.server.ctx.config.plans.free.eventsPerDay;
    const db = t.server.ctx.db;
    db.transaction(() =>
      db.run('INSERT OR REPLACE INTO quota_days (user_id, day, count) VALUES (?, ?, ?)', [
        u.id,
        Math.floor(t.clock.now() / 86_400_000),
        Math.floor(limit * 0.9),
      ]),
    );
    const res = await t.request('GET', '/assistant/insights?refresh=1', { token: u.device });
    expect(res.body.items).toEqual([
      expect.objectContaining({
        kind: 'quota',
        severity: 'warning',
        title: 'Daily quota 90 % used',
        links: [],
      }),
    ]);
  });
});

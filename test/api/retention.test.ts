import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageRetention } from '../../server/features/messages/retention';
import { RETENTION_MAX_AGE_MS, RETENTION_PER_CHANNEL_MAX } from '../../server/lib/limits';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
});

const DAY = 86_400_000;

function insertMany(channelId: number, userId: number, n: number, date: number): void {
  const db = t.server.ctx.db;
  db.transaction(() => {
    for (let i = 0; i < n; i++)
      db.run(
        'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, ?, ?)',
        [channelId, userId, `bulk ${i}`, '', 0, date],
      );
  });
}

const count = (channelId: number) =>
  t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages WHERE channel_id = ?', [
    channelId,
  ])!.n;

describe('retention', () => {
  it('the retention job deletes messages older than 90 days and keeps younger ones', async () => {
    const c = await makeChannel(t, dev);
    const old = await sendMessage(t, c.token, { message: 'old needle' });
    t.clock.advance(RETENTION_MAX_AGE_MS - DAY);
    const young = await sendMessage(t, c.token, { message: 'young' });
    t.clock.advance(DAY + 1);
    await t.server.scheduler.runNow('retention');
    const ids = (await t.request('GET', `/application/${c.id}/message`, { token: dev })).body.messages.map(
      (m: any) => m.id,
    );
    expect(ids).toEqual([young.id]);
    expect(ids).not.toContain(old.id);
    // The search index forgets deleted messages too.
    expect((await t.request('GET', '/message/search?q=needle', { token: dev })).body.messages).toEqual([]);
  });

  it('the retention job keeps the newest 10,000 messages of a channel', async () => {
    const c = await makeChannel(t, dev);
    const other = await makeChannel(t, dev);
    insertMany(c.id, 1, RETENTION_PER_CHANNEL_MAX + 25, t.clock.now());
    insertMany(other.id, 1, 10, t.clock.now());
    const newest = await sendMessage(t, c.token);
    await t.server.scheduler.runNow('retention');
    expect(count(c.id)).toBe(RETENTION_PER_CHANNEL_MAX);
    expect(count(other.id)).toBe(10);
    const first = await t.request('GET', `/application/${c.id}/message?limit=1`, { token: dev });
    expect(first.body.messages[0].id).toBe(newest.id);
    const oldestKept = t.server.ctx.db.first<{ id: number }>(
      'SELECT min(id) AS id FROM messages WHERE channel_id = ?',
      [c.id],
    )!.id;
    expect(newest.id - oldestKept).toBe(RETENTION_PER_CHANNEL_MAX - 1 + 10);
  });

  it('the global limit removes the oldest messages across channels', async () => {
    const a = await makeChannel(t, dev);
    const b = await makeChannel(t, dev);
    insertMany(a.id, 1, 30, t.clock.now());
    insertMany(b.id, 1, 30, t.clock.now());
    const total = t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages')!.n;
    const removed = messageRetention({ perChannel: 1_000_000, maxAgeMs: 365 * DAY, total: total - 40 })(
      t.server.ctx,
    );
    expect(removed).toBe(40);
    expect(t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages')!.n).toBe(total - 40);
    expect(count(b.id)).toBe(30);
  });
});

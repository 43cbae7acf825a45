import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { consumeEvents, remainingEvents } from '../../server/features/quota/service';
import { STORAGE_SNAPSHOT_TTL_MS } from '../../server/lib/limits';
import { apiToken, deviceToken, insertChannelKeyRow, insertChannelRow, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('consumeEvents', () => {
  test('consumeEvents spends the plan quota and throws 429 when it is spent', () => {
    const u = makeUser(t);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.id, 999));
    expect(remainingEvents(ctx, u.id)).toBe(1);
    ctx.db.transaction(() => consumeEvents(ctx, u.id));
    expect(remainingEvents(ctx, u.id)).toBe(0);
    let err: unknown;
    try {
      ctx.db.transaction(() => consumeEvents(ctx, u.id));
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 429, description: 'daily event quota exceeded' });
  });

  test('consumeEvents spends nothing when fewer events remain than asked', () => {
    const u = makeUser(t);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.id, 990));
    expect(() => ctx.db.transaction(() => consumeEvents(ctx, u.id, 11))).toThrow(
      'daily event quota exceeded',
    );
    expect(remainingEvents(ctx, u.id)).toBe(10);
  });

  test('consumeEvents is rolled back with the caller transaction when it fails', () => {
    const u = makeUser(t);
    const ctx = t.server.ctx;
    expect(() =>
      ctx.db.transaction(() => {
        consumeEvents(ctx, u.id, 5);
        throw new Error('message insert failed');
      }),
    ).toThrow('message insert failed');
    expect(remainingEvents(ctx, u.id)).toBe(1000);
  });

  test('consumeEvents starts a fresh quota when the UTC day changes', async () => {
    const s = await startTestServer();
    try {
      const u = makeUser(s);
      const ctx = s.server.ctx;
      s.clock.set(Date.UTC(2026, 0, 15, 23, 59, 0));
      ctx.db.transaction(() => consumeEvents(ctx, u.id, 1000));
      expect(() => consumeEvents(ctx, u.id)).toThrow('daily event quota exceeded');
      s.clock.advance(60_000);
      ctx.db.transaction(() => consumeEvents(ctx, u.id));
      expect(remainingEvents(ctx, u.id)).toBe(999);
    } finally {
      await s.close();
    }
  });

  test('consumeEvents uses the limit of the user plan', () => {
    const u = makeUser(t, { plan: 'pro' });
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.id, 50_000));
    expect(() => consumeEvents(ctx, u.id)).toThrow('daily event quota exceeded');
  });
});

describe('GET /user/quota-breakdown', () => {
  test('GET /user/quota-breakdown answers hours, minutes and storage when events were spent', async () => {
    const s = await startTestServer();
    try {
      const u = makeUser(s);
      const dev = await deviceToken(s, u);
      const ctx = s.server.ctx;
      s.clock.set(Date.UTC(2026, 0, 15, 10, 5, 30));
      ctx.db.transaction(() => consumeEvents(ctx, u.id, 3));
      s.clock.set(Date.UTC(2026, 0, 15, 10, 6, 0));
      ctx.db.transaction(() => consumeEvents(ctx, u.id, 2));
      s.clock.set(Date.UTC(2026, 0, 15, 13, 0, 0));
      ctx.db.transaction(() => consumeEvents(ctx, u.id));
      const channel = insertChannelRow(s, u.id);
      ctx.db.transaction(() =>
        ctx.db.run(
          'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, ?, ?)',
          [channel, u.id, 'hello', 'hi', 5, ctx.clock.now()],
        ),
      );
      const res = await s.request('GET', '/user/quota-breakdown?day=2026-01-15', { token: dev.token });
      expect(res.status).toBe(200);
      const hours = Array.from({ length: 24 }, (_, h) => ({
        at: new Date(Date.UTC(2026, 0, 15, h)).toISOString(),
        count: h === 10 ? 5 : h === 13 ? 1 : 0,
      }));
      expect(res.body).toEqual({
        day: '2026-01-15',
        plan: 'free',
        limit: 1000,
        used: 6,
        remaining: 994,
        hours,
        minutes: [
          { at: '2026-01-15T10:05:00.000Z', count: 3 },
          { at: '2026-01-15T10:06:00.000Z', count: 2 },
          { at: '2026-01-15T13:00:00.000Z', count: 1 },
        ],
        storage: { messages: 1, messageBytes: 7, imageBytes: 0, totalBytes: 7 },
        caps: expect.objectContaining({ channels: { used: 1, limit: 50 } }),
      });
      const today = await s.request('GET', '/user/quota-breakdown', { token: dev.token });
      expect(today.body.used).toBe(6);
      const other = await s.request('GET', '/user/quota-breakdown?day=2026-01-14', { token: dev.token });
      expect(other.body).toMatchObject({ day: '2026-01-14', used: 0, remaining: 1000, minutes: [] });
      const me = await s.request('GET', '/current/user', { token: dev.token });
      expect(me.body).toMatchObject({ eventCounter: 6, messageCounter: 6, storageBytes: 7 });
      s.clock.advance(86_400_000);
      const tomorrow = await s.request('GET', '/current/user', { token: dev.token });
      expect(tomorrow.body).toMatchObject({ eventCounter: 0, messageCounter: 6 });
      // The storage sum is a snapshot refreshed at most once a minute.
      ctx.db.transaction(() =>
        ctx.db.run(
          'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, ?, ?)',
          [channel, u.id, 'abc', '', 5, ctx.clock.now()],
        ),
      );
      expect((await s.request('GET', '/current/user', { token: dev.token })).body.storageBytes).toBe(7);
      s.clock.advance(STORAGE_SNAPSHOT_TTL_MS);
      expect((await s.request('GET', '/current/user', { token: dev.token })).body.storageBytes).toBe(10);
    } finally {
      await s.close();
    }
  });

  test('GET /user/quota-breakdown accepts an API token', async () => {
    const u = makeUser(t);
    const dev = await deviceToken(t, u);
    const api = await apiToken(t, dev, { access: 'read' });
    const res = await t.request('GET', '/user/quota-breakdown', { token: api.token });
    expect(res.status).toBe(200);
    expect(res.body.used).toBe(0);
  });

  test('GET /user/quota-breakdown answers 400 when day is not a date', async () => {
    const dev = await deviceToken(t);
    for (const day of ['2026-1-5', 'yesterday', '2026-02-30']) {
      const res = await t.request('GET', `/user/quota-breakdown?day=${day}`, { token: dev.token });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toMatch(/^day: /);
    }
  });

  test('GET /user/quota-breakdown answers 403 when called with a channel key', async () => {
    const u = makeUser(t);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    const res = await t.request('GET', '/user/quota-breakdown', { token: key });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('this kind of token cannot be used for account-level operations');
  });

  test('GET /user/quota-breakdown answers 401 without a token', async () => {
    const res = await t.request('GET', '/user/quota-breakdown');
    expect(res.status).toBe(401);
  });
});

describe('retention', () => {
  test('the retention job drops per-minute rows after 35 days and keeps the day totals', async () => {
    const s = await startTestServer();
    try {
      const u = makeUser(s);
      const dev = await deviceToken(s, u);
      const ctx = s.server.ctx;
      ctx.db.transaction(() => consumeEvents(ctx, u.id, 4));
      s.clock.advance(35 * 86_400_000 + 60_000);
      await s.server.scheduler.runNow('retention');
      expect(
        ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM quota_minutes WHERE user_id = ?', [u.id])!.n,
      ).toBe(0);
      const me = await s.request('GET', '/current/user', { token: dev.token });
      expect(me.body.messageCounter).toBe(4);
      const old = await s.request('GET', '/user/quota-breakdown?day=2026-01-15', { token: dev.token });
      expect(old.body).toMatchObject({ used: 4, minutes: [] });
    } finally {
      await s.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, insertChannelKeyRow, insertChannelRow, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('POST /current/user/plan', () => {
  test('POST /current/user/plan downgrades or keeps the plan', async () => {
    const u = makeUser(t, { plan: 'business' });
    const d = await deviceToken(t, u);
    const keep = await t.request('POST', '/current/user/plan', {
      token: d.token,
      json: { plan: 'business' },
    });
    expect(keep.status).toBe(200);
    expect(keep.body.plan).toBe('business');
    const down = await t.request('POST', '/current/user/plan', { token: d.token, json: { plan: 'pro' } });
    expect(down.body.plan).toBe('pro');
    const api = await apiToken(t, d);
    expect(
      (await t.request('POST', '/current/user/plan', { token: api.token, json: { plan: 'free' } })).body.plan,
    ).toBe('free');
  });

  test('POST /current/user/plan answers 402 plan upgrade requires payment for a higher plan', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('POST', '/current/user/plan', { token: d.token, json: { plan: 'pro' } });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      error: 'Payment Required',
      errorCode: 402,
      errorDescription: 'plan upgrade requires payment',
    });
    const admin = await deviceToken(t);
    await t.server.ctx.db.transaction(() =>
      t.server.ctx.db.run("UPDATE users SET plan = 'free' WHERE id = 1"),
    );
    expect(
      (await t.request('POST', '/current/user/plan', { token: admin.token, json: { plan: 'pro' } })).status,
    ).toBe(402);
    await t.server.ctx.db.transaction(() =>
      t.server.ctx.db.run("UPDATE users SET plan = 'business' WHERE id = 1"),
    );
  });

  test('POST /current/user/plan answers 400 for an unknown plan and 403 for read-only tokens and channel keys', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    expect(
      (await t.request('POST', '/current/user/plan', { token: d.token, json: { plan: 'gold' } })).status,
    ).toBe(400);
    const ro = await apiToken(t, d, { access: 'read' });
    expect(
      (await t.request('POST', '/current/user/plan', { token: ro.token, json: { plan: 'free' } })).status,
    ).toBe(403);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    expect(
      (await t.request('POST', '/current/user/plan', { token: key, json: { plan: 'free' } })).status,
    ).toBe(403);
  });

  test('a downgraded plan lowers the device limit for new devices', async () => {
    const u = makeUser(t, { plan: 'pro' });
    const d = await deviceToken(t, u);
    for (let i = 0; i < 3; i++) await deviceToken(t, u);
    await t.request('POST', '/current/user/plan', { token: d.token, json: { plan: 'free' } });
    const list = await t.request('GET', '/client', { token: d.token });
    expect(list.body.filter((x: { status: string }) => x.status === 'active')).toHaveLength(4);
    const res = await t.request('POST', '/client', { token: d.token, json: { name: 'fifth' } });
    expect(res.status).toBe(402);
  });
});

describe('POST /current/user/topup', () => {
  test('POST /current/user/topup answers 402 with the bank-transfer payload for a user', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('POST', '/current/user/topup', {
      token: d.token,
      json: { amountRubles: 500 },
    });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      error: 'Payment Required',
      errorCode: 402,
      errorDescription: 'top-up requires payment by bank transfer',
      message:
        'To add 500 RUB to your balance, pay by bank transfer; an operator credits your balance once the payment arrives.',
      amountRubles: 500,
      paymentMethod: 'bank_transfer',
    });
  });

  test('POST /current/user/topup credits an administrator balance at once', async () => {
    const admin = await deviceToken(t);
    const before = (await t.request('GET', '/current/user', { token: admin.token })).body.balanceKopecks;
    const res = await t.request('POST', '/current/user/topup', {
      token: admin.token,
      json: { amountRubles: 12.5 },
    });
    expect(res.status).toBe(200);
    expect(res.body.balanceKopecks).toBe(before + 1250);
  });

  test('POST /current/user/topup answers 400 for a bad amount', async () => {
    const d = await deviceToken(t, makeUser(t));
    for (const amountRubles of [0, -5, 1.234, '10', 2_000_000]) {
      expect(
        (await t.request('POST', '/current/user/topup', { token: d.token, json: { amountRubles } })).status,
      ).toBe(400);
    }
  });
});

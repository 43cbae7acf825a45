import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, insertChannelKeyRow, insertChannelRow, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const masked = (tok: string) => `${tok.slice(0, 3)}${'*'.repeat(16)}${tok.slice(-4)}`;

describe('API tokens', () => {
  test('POST /api-token issues the full value once and GET /api-token masks it', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const c = insertChannelRow(t, u.id);
    const res = await t.request('POST', '/api-token', {
      token: d.token,
      json: { name: 'ci', access: 'read', appIds: [c], appTags: ['prod'], expiresAt: '2026-02-01T00:00:00Z' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'ci',
      access: 'read',
      appIds: [c],
      appTags: ['prod'],
      expiresAt: '2026-02-01T00:00:00.000Z',
      token: expect.stringMatching(/^M[A-Za-z0-9]{22}$/),
      lastUsed: null,
      createdAt: '2026-01-15T12:00:00.000Z',
    });
    const list = await t.request('GET', '/api-token', { token: d.token });
    expect(list.body).toEqual([{ ...res.body, token: masked(res.body.token) }]);
    const me = await t.request('GET', '/current/user', { token: res.body.token });
    expect(me.status).toBe(200);
  });

  test('POST /api-token answers 400 for a past expiry, a foreign channel, bad tags or a missing access', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const past = await t.request('POST', '/api-token', {
      token: d.token,
      json: { name: 'x', access: 'read', expiresAt: '2026-01-15T12:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.errorDescription).toBe('expiresAt: must be in the future');
    const foreign = insertChannelRow(t, makeUser(t).id);
    const scope = await t.request('POST', '/api-token', {
      token: d.token,
      json: { name: 'x', access: 'read', appIds: [foreign] },
    });
    expect(scope.body.errorDescription).toBe(`appIds: channel ${foreign} not found`);
    expect(
      (
        await t.request('POST', '/api-token', {
          token: d.token,
          json: { name: 'x', access: 'read', appTags: ['Bad Tag'] },
        })
      ).status,
    ).toBe(400);
    expect((await t.request('POST', '/api-token', { token: d.token, json: { name: 'x' } })).status).toBe(400);
    expect(
      (await t.request('POST', '/api-token', { token: d.token, json: { access: 'write' } })).status,
    ).toBe(400);
  });

  test('PUT /api-token/{id} changes only the fields sent', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const c = insertChannelRow(t, u.id);
    const created = await t.request('POST', '/api-token', {
      token: d.token,
      json: { name: 'n', access: 'read', appIds: [c], appTags: ['a'], expiresAt: '2026-03-01T00:00:00Z' },
    });
    const id = created.body.id;
    const renamed = await t.request('PUT', `/api-token/${id}`, { token: d.token, json: { name: 'renamed' } });
    expect(renamed.body).toMatchObject({
      name: 'renamed',
      access: 'read',
      appIds: [c],
      appTags: ['a'],
      expiresAt: '2026-03-01T00:00:00.000Z',
    });
    const widened = await t.request('PUT', `/api-token/${id}`, {
      token: d.token,
      json: { access: 'write', appIds: [], expiresAt: null },
    });
    expect(widened.body).toMatchObject({
      name: 'renamed',
      access: 'write',
      appIds: [],
      appTags: ['a'],
      expiresAt: null,
    });
    expect(
      (
        await t.request('PUT', `/api-token/${id}`, {
          token: d.token,
          json: { expiresAt: '2020-01-01T00:00:00Z' },
        })
      ).status,
    ).toBe(400);
  });

  test('an API token stops working when it expires', async () => {
    const d = await deviceToken(t, makeUser(t));
    const expiresAt = new Date(t.clock.now() + 60_000).toISOString();
    const api = await apiToken(t, d, { expiresAt });
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(200);
    t.clock.advance(60_000);
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(401);
  });

  test('POST /api-token/{id}/rotate gives a new value with the same settings', async () => {
    const d = await deviceToken(t, makeUser(t));
    const api = await apiToken(t, d, { name: 'rot', access: 'read' });
    const res = await t.request('POST', `/api-token/${api.id}/rotate`, { token: d.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: api.id,
      name: 'rot',
      access: 'read',
      token: expect.stringMatching(/^M/),
    });
    expect(res.body.token).not.toBe(api.token);
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(401);
    expect((await t.request('GET', '/current/user', { token: res.body.token })).status).toBe(200);
  });

  test('DELETE /api-token/{id} deletes and the token dies', async () => {
    const d = await deviceToken(t, makeUser(t));
    const api = await apiToken(t, d);
    const res = await t.request('DELETE', `/api-token/${api.id}`, { token: d.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(401);
    expect((await t.request('DELETE', `/api-token/${api.id}`, { token: d.token })).status).toBe(404);
  });

  test('API token routes answer 404 for another user token', async () => {
    const d = await deviceToken(t, makeUser(t));
    const api = await apiToken(t, d);
    const other = await deviceToken(t, makeUser(t));
    for (const [m, p] of [
      ['PUT', `/api-token/${api.id}`],
      ['POST', `/api-token/${api.id}/rotate`],
      ['DELETE', `/api-token/${api.id}`],
    ] as const) {
      const res = await t.request(m, p, { token: other.token, json: { name: 'x' } });
      expect(res.status).toBe(404);
      expect(res.body.errorDescription).toBe('API token not found');
    }
  });

  test('API token routes answer 403 for an API token and a channel key, 401 for Basic', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const api = await apiToken(t, d);
    const res = await t.request('GET', '/api-token', { token: api.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('API tokens cannot do this; sign in with a device');
    expect(
      (await t.request('POST', '/api-token', { token: api.token, json: { name: 'x', access: 'read' } }))
        .status,
    ).toBe(403);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    const byKey = await t.request('GET', '/api-token', { token: key });
    expect(byKey.status).toBe(403);
    expect(byKey.body.errorDescription).toBe(
      'this kind of token cannot be used for account-level operations',
    );
    expect((await t.request('GET', '/api-token', { basic: u })).status).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;
const invalidated: { kind: string; tokenId: number }[] = [];

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
  t.server.ctx.bus.on('token:invalidated', (e) => invalidated.push(e));
});
afterAll(async () => {
  await t.close();
});

describe('channel keys', () => {
  it('GET /application/{id}/token lists the primary key flagged primary, then issued keys', async () => {
    const c = await makeChannel(t, dev);
    t.clock.advance(1000);
    const future = t.clock.now() + 3_600_000;
    const issued = await t.request('POST', `/application/${c.id}/token`, {
      token: dev,
      json: { name: 'ci', canRead: true, canWrite: false, note: 'for CI', expiresAt: future },
    });
    expect(issued.status).toBe(200);
    expect(issued.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      name: 'ci',
      note: 'for CI',
      canRead: true,
      canWrite: false,
      primary: false,
      expiresAt: future,
      revoked: false,
      lastUsed: null,
      createdAt: new Date(t.clock.now()).toISOString(),
      token: expect.stringMatching(/^A[A-Za-z0-9]{22}$/),
    });
    const list = await t.request('GET', `/application/${c.id}/token`, { token: dev });
    expect(list.body.map((k: any) => [k.primary, k.name])).toEqual([
      [true, ''],
      [false, 'ci'],
    ]);
    expect(list.body[1].token).toMatch(/\*{16}/);
  });

  it("POST /application/{id}/token answers 400 for a past expiry or no permission, 404 for others' channels", async () => {
    const c = await makeChannel(t, dev);
    expect(
      (await t.request('POST', `/application/${c.id}/token`, { token: dev, json: { expiresAt: 1 } })).status,
    ).toBe(400);
    expect(
      (
        await t.request('POST', `/application/${c.id}/token`, {
          token: dev,
          json: { canRead: false, canWrite: false },
        })
      ).status,
    ).toBe(400);
    const theirs = await makeChannel(t, otherDev);
    expect(
      (await t.request('POST', `/application/${theirs.id}/token`, { token: dev, json: {} })).status,
    ).toBe(404);
    expect((await t.request('GET', `/application/${theirs.id}/token`, { token: dev })).status).toBe(404);
  });

  it('a key stops working after its expiry', async () => {
    const c = await makeChannel(t, dev);
    const k = await t.request('POST', `/application/${c.id}/token`, {
      token: dev,
      json: { expiresAt: t.clock.now() + 60_000 },
    });
    expect(
      (await t.request('POST', '/message', { token: k.body.token, json: { message: 'x' } })).status,
    ).toBe(200);
    t.clock.advance(60_000);
    expect(
      (await t.request('POST', '/message', { token: k.body.token, json: { message: 'x' } })).status,
    ).toBe(401);
  });

  it('PUT /token/{id} changes permissions, label and expiry', async () => {
    const c = await makeChannel(t, dev);
    const k = await t.request('POST', `/application/${c.id}/token`, { token: dev, json: { name: 'a' } });
    const res = await t.request('PUT', `/token/${k.body.id}`, {
      token: dev,
      json: { name: 'b', canRead: true, canWrite: false, note: 'n', expiresAt: 0 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'b', canRead: true, canWrite: false, note: 'n', expiresAt: 0 });
    expect(
      (await t.request('POST', '/message', { token: k.body.token, json: { message: 'x' } })).status,
    ).toBe(403);
    expect(
      (await t.request('PUT', `/token/${k.body.id}`, { token: otherDev, json: { name: 'x' } })).status,
    ).toBe(404);
  });

  it('DELETE /token/{id} revokes first, deletes on a repeated call, and answers 409 for the primary key', async () => {
    const c = await makeChannel(t, dev);
    const k = await t.request('POST', `/application/${c.id}/token`, { token: dev, json: {} });
    expect((await t.request('DELETE', `/token/${k.body.id}`, { token: otherDev })).status).toBe(404);
    const revoked = await t.request('DELETE', `/token/${k.body.id}`, { token: dev });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: k.body.id, revoked: true });
    expect(invalidated).toContainEqual({ kind: 'app', tokenId: k.body.id });
    expect(
      (await t.request('POST', '/message', { token: k.body.token, json: { message: 'x' } })).status,
    ).toBe(401);
    const deleted = await t.request('DELETE', `/token/${k.body.id}`, { token: dev });
    expect(deleted.body).toEqual({});
    expect((await t.request('DELETE', `/token/${k.body.id}`, { token: dev })).status).toBe(404);
    const primary = (await t.request('GET', `/application/${c.id}/token`, { token: dev })).body[0];
    const res = await t.request('DELETE', `/token/${primary.id}`, { token: dev });
    expect(res.status).toBe(409);
    expect(res.body.errorDescription).toBe("the channel's primary key cannot be revoked; rotate it instead");
  });

  it('POST /token/{id}/rotate gives a new value once with the same id and permissions; the old one stops', async () => {
    const c = await makeChannel(t, dev);
    const list = await t.request('GET', `/application/${c.id}/token`, { token: dev });
    const res = await t.request('POST', `/token/${list.body[0].id}/rotate`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: list.body[0].id, primary: true, canWrite: true, canRead: false });
    expect(res.body.token).not.toBe(c.token);
    expect((await t.request('POST', '/message', { token: c.token, json: { message: 'x' } })).status).toBe(
      401,
    );
    expect(
      (await t.request('POST', '/message', { token: res.body.token, json: { message: 'x' } })).status,
    ).toBe(200);
    expect(invalidated).toContainEqual({ kind: 'app', tokenId: list.body[0].id });
  });

  it('channel key routes answer 403 for a channel key, a read-only API token on writes, 401 without a token', async () => {
    const c = await makeChannel(t, dev);
    expect((await t.request('GET', `/application/${c.id}/token`, { token: c.token })).status).toBe(403);
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('GET', `/application/${c.id}/token`, { token: ro.token })).status).toBe(200);
    expect(
      (await t.request('POST', `/application/${c.id}/token`, { token: ro.token, json: {} })).status,
    ).toBe(403);
    expect((await t.request('GET', `/application/${c.id}/token`)).status).toBe(401);
  });
});

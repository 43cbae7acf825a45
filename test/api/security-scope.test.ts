import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 21, item 2: a scoped API token acts only inside its scope, creating and moving channels
// included (docs/api.md "What an API token reaches"); a read-only token changes and triggers nothing.

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const NO_PARENT = { error: 'Bad Request', errorCode: 400, errorDescription: 'parentId: no such channel' };
const restricted = (what: string) => ({
  error: 'Forbidden',
  errorCode: 403,
  errorDescription: `an API token with a restricted scope cannot ${what}`,
});

/** A user with a channel in scope by id, one by tag, one outside, and tokens scoped to them. */
async function account() {
  const u = makeUser(t);
  const phone = await deviceToken(t, u, 'phone');
  const byId = await makeChannel(t, phone.token, { name: 'by id' });
  const byTag = await makeChannel(t, phone.token, { name: 'by tag', tags: ['ops'] });
  const outside = await makeChannel(t, phone.token, { name: 'outside', tags: ['private'] });
  const idScoped = await apiToken(t, phone, { access: 'write', appIds: [byId.id] });
  const tagScoped = await apiToken(t, phone, { access: 'write', appTags: ['ops'] });
  return { u, phone, byId, byTag, outside, idScoped, tagScoped };
}

async function channelNames(token: string): Promise<string[]> {
  const res = await t.request('GET', '/application', { token });
  expect(res.status).toBe(200);
  return res.body.map((c: { name: string }) => c.name).filter((n: string) => n !== 'Belfry');
}

async function channelOf(token: string, id: number): Promise<{ parentId?: number; tags: string[] }> {
  const res = await t.request('GET', '/application', { token });
  return res.body.find((c: { id: number }) => c.id === id);
}

describe('creating channels with a scoped API token', () => {
  test('POST /application answers 403 for a token scoped by ids and creates no channel', async () => {
    const a = await account();
    for (const json of [
      { name: 'escape' },
      { name: 'escape', parentId: a.byId.id },
      { name: 'x', tags: ['ops'] },
    ]) {
      const res = await t.request('POST', '/application', { token: a.idScoped.token, json });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(restricted('create a channel without one of its tags'));
      expect(res.text).not.toMatch(/"token":"A/);
    }
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application answers 403 for a tag-scoped token when the channel carries none of its tags', async () => {
    const a = await account();
    for (const json of [{ name: 'escape' }, { name: 'escape', tags: ['private'] }]) {
      const res = await t.request('POST', '/application', { token: a.tagScoped.token, json });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(restricted('create a channel without one of its tags'));
    }
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application creates a channel with one of the tags of a tag-scoped token, which then sees it', async () => {
    const a = await account();
    const res = await t.request('POST', '/application', {
      token: a.tagScoped.token,
      json: { name: 'new ops', tags: ['ops', 'extra'], parentId: a.byTag.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^A[A-Za-z0-9]{22}$/);
    expect(res.body.parentId).toBe(a.byTag.id);
    expect(await channelNames(a.tagScoped.token)).toEqual(['by tag', 'new ops']);
  });

  test('POST /application answers 400 for a parentId outside the token scope, as for no such channel', async () => {
    const a = await account();
    const res = await t.request('POST', '/application', {
      token: a.tagScoped.token,
      json: { name: 'under outside', tags: ['ops'], parentId: a.outside.id },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(NO_PARENT);
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application still creates any channel for a device, Basic and an unscoped API token', async () => {
    const a = await account();
    const wide = await apiToken(t, a.phone, { access: 'write' });
    const byDevice = await t.request('POST', '/application', {
      token: a.phone.token,
      json: { name: 'd', parentId: a.outside.id },
    });
    const byBasic = await t.request('POST', '/application', { basic: a.u, json: { name: 'b' } });
    const byWide = await t.request('POST', '/application', { token: wide.token, json: { name: 'w' } });
    expect([byDevice.status, byBasic.status, byWide.status]).toEqual([200, 200, 200]);
  });
});

describe('changing channels with a scoped API token', () => {
  test('PUT /application/{id} answers 400 when a scoped token moves an in-scope channel under an out-of-scope parent', async () => {
    const a = await account();
    for (const [token, id] of [
      [a.idScoped.token, a.byId.id],
      [a.tagScoped.token, a.byTag.id],
    ] as const) {
      const res = await t.request('PUT', `/application/${id}`, { token, json: { parentId: a.outside.id } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(NO_PARENT);
      expect((await channelOf(a.phone.token, id)).parentId).toBeUndefined();
    }
  });

  test('PUT /application/{id} answers 403 when the new tags would take the channel out of a tag scope', async () => {
    const a = await account();
    const res = await t.request('PUT', `/application/${a.byTag.id}`, {
      token: a.tagScoped.token,
      json: { tags: ['private'] },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(restricted('take a channel out of its scope'));
    expect((await channelOf(a.phone.token, a.byTag.id)).tags).toEqual(['ops']);
    // Tags that keep it in scope, and any tags on a channel in scope by id, are fine.
    const keep = await t.request('PUT', `/application/${a.byTag.id}`, {
      token: a.tagScoped.token,
      json: { tags: ['ops', 'more'] },
    });
    expect(keep.status).toBe(200);
    const byId = await t.request('PUT', `/application/${a.byId.id}`, {
      token: a.idScoped.token,
      json: { tags: ['private'], parentId: null },
    });
    expect(byId.status).toBe(200);
    expect(byId.body.tags).toEqual(['private']);
  });

  test('PUT /application/{id} accepts a parent inside the token scope', async () => {
    const a = await account();
    const second = await makeChannel(t, a.phone.token, { name: 'second ops', tags: ['ops'] });
    const res = await t.request('PUT', `/application/${second.id}`, {
      token: a.tagScoped.token,
      json: { parentId: a.byTag.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.parentId).toBe(a.byTag.id);
  });
});

describe('read-only API tokens trigger nothing', () => {
  test('POST /application/{id}/delivery/test answers 403 for a read-only API token', async () => {
    const a = await account();
    const withAdapter = await makeChannel(t, a.phone.token, {
      name: 'delivering',
      deliveryConfig: { webhook: { enabled: true, url: 'https://example.com/hook' } },
    });
    const reader = await apiToken(t, a.phone, { access: 'read' });
    const res = await t.request('POST', `/application/${withAdapter.id}/delivery/test`, {
      token: reader.token,
      json: {},
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'token lacks the write permission',
    });
  });
});

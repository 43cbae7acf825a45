import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDeliveryConfig } from '../../server/features/channels/delivery-config';
import { ensureSystemChannel } from '../../server/features/channels/service';
import { UPLOAD_LIMIT_BYTES } from '../../server/lib/limits';
import { apiToken, deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let other: { token: string; userId: number };

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  const u = makeUser(t);
  other = { token: (await deviceToken(t, u)).token, userId: u.id };
});
afterAll(async () => {
  await t.close();
});

function upload(path: string, token: string, data: Buffer, name = 'logo.png') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)]), name);
  return t.request('POST', path, { token, body: form });
}

describe('POST /application', () => {
  it('POST /application creates a channel with its primary key shown once when the body is JSON', async () => {
    const res = await t.request('POST', '/application', {
      token: dev,
      json: {
        name: 'Backups',
        description: 'nightly',
        defaultPriority: 7,
        sortKey: 'b',
        tags: ['ops', 'ops', 'db'],
        id: 99,
        internal: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      token: expect.stringMatching(/^A[A-Za-z0-9]{22}$/),
      name: 'Backups',
      description: 'nightly',
      internal: false,
      image: '',
      defaultPriority: 7,
      lastUsed: null,
      sortKey: 'b',
      tags: ['ops', 'db'],
      deliveryConfig: {},
      hbTotal: 0,
      hbAlerting: 0,
      hbAlertingInfo: 0,
      hbPending: 0,
      hbStatus: 'none',
    });
    expect(res.body.id).not.toBe(99);
    const list = await t.request('GET', '/application', { token: dev });
    const listed = list.body.find((c: any) => c.id === res.body.id);
    expect(listed.token).toMatch(/^A[A-Za-z0-9]{2}\*{16}[A-Za-z0-9]{4}$/);
    expect(listed).not.toHaveProperty('parentId');
  });

  it('POST /application accepts a form body and Basic credentials', async () => {
    const parent = await makeChannel(t, dev);
    const res = await t.request('POST', '/application', {
      basic: t.admin,
      form: {
        name: 'Form',
        description: 'd',
        defaultPriority: '3',
        parentId: String(parent.id),
        sortKey: 'x',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Form',
      description: 'd',
      defaultPriority: 3,
      parentId: parent.id,
      sortKey: 'x',
    });
  });

  it('POST /application answers 400 when name is missing, tags are invalid or priority is out of range', async () => {
    for (const json of [
      {},
      { name: '  ' },
      { name: 'x', tags: ['Bad Tag'] },
      { name: 'x', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
      { name: 'x', defaultPriority: 11 },
      { name: 'x', deliveryConfig: { fax: {} } },
    ]) {
      const res = await t.request('POST', '/application', { token: dev, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.errorCode).toBe(400);
    }
  });

  it("POST /application answers 400 when parentId is someone else's channel", async () => {
    const theirs = await makeChannel(t, other.token);
    const res = await t.request('POST', '/application', {
      token: dev,
      json: { name: 'x', parentId: theirs.id },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('parentId: no such channel');
  });

  it('POST /application answers 403 for a read-only API token and a channel key, 401 for no token', async () => {
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('POST', '/application', { token: ro.token, json: { name: 'x' } })).status).toBe(
      403,
    );
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/application', { token: c.token, json: { name: 'x' } });
    expect(res.status).toBe(403);
    expect((await t.request('POST', '/application', { json: { name: 'x' } })).status).toBe(401);
  });
});

describe('GET /application', () => {
  it("GET /application lists own channels by sortKey then id and hides other users' channels", async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const b = await makeChannel(t, d, { name: 'b', sortKey: 'b' });
    const a = await makeChannel(t, d, { name: 'a', sortKey: 'a' });
    await makeChannel(t, other.token);
    const res = await t.request('GET', '/application', { token: d });
    expect(res.status).toBe(200);
    expect(res.body.map((c: any) => c.id)).toEqual([a.id, b.id]);
  });

  it('GET /application shows a channel key with read only its own channel, and refuses a key without read', async () => {
    const c = await makeChannel(t, dev);
    const key = await t.request('POST', `/application/${c.id}/token`, {
      token: dev,
      json: { canRead: true, canWrite: false },
    });
    const res = await t.request('GET', '/application', { token: key.body.token });
    expect(res.status).toBe(200);
    expect(res.body.map((x: any) => x.id)).toEqual([c.id]);
    const denied = await t.request('GET', '/application', { token: c.token });
    expect(denied.status).toBe(403);
    expect(denied.body.errorDescription).toBe('token lacks the read permission');
  });

  it('GET /application shows an API token with a scope only the channels of its appIds and appTags', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const one = await makeChannel(t, d);
    const tagged = await makeChannel(t, d, { tags: ['prod'] });
    await makeChannel(t, d);
    const scoped = await apiToken(t, { token: d }, { appIds: [one.id], appTags: ['prod'] });
    const res = await t.request('GET', '/application', { token: scoped.token });
    expect(res.body.map((x: any) => x.id).sort()).toEqual([one.id, tagged.id].sort());
  });
});

describe('PUT /application/{id}', () => {
  it('PUT /application/{id} changes the given fields and keeps the others', async () => {
    const c = await makeChannel(t, dev, { description: 'keep', sortKey: 's' });
    const res = await t.request('PUT', `/application/${c.id}`, {
      token: dev,
      json: { name: 'Renamed', tags: ['x'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', description: 'keep', sortKey: 's', tags: ['x'] });
  });

  it('PUT /application/{id} answers 400 when the parent would create a cycle, and accepts parentId null', async () => {
    const a = await makeChannel(t, dev);
    const b = await makeChannel(t, dev, { parentId: a.id });
    const c = await makeChannel(t, dev, { parentId: b.id });
    const cycle = await t.request('PUT', `/application/${a.id}`, { token: dev, json: { parentId: c.id } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.errorDescription).toBe('parentId: would create a cycle');
    const self = await t.request('PUT', `/application/${a.id}`, { token: dev, json: { parentId: a.id } });
    expect(self.status).toBe(400);
    const root = await t.request('PUT', `/application/${c.id}`, { token: dev, json: { parentId: null } });
    expect(root.status).toBe(200);
    expect(root.body).not.toHaveProperty('parentId');
  });

  it("PUT /application/{id} answers 404 for another user's channel and an unknown id", async () => {
    const theirs = await makeChannel(t, other.token);
    expect(
      (await t.request('PUT', `/application/${theirs.id}`, { token: dev, json: { name: 'x' } })).status,
    ).toBe(404);
    expect((await t.request('PUT', '/application/999999', { token: dev, json: { name: 'x' } })).status).toBe(
      404,
    );
  });

  it("PUT /application/{id} answers 404 for a channel outside the API token's scope", async () => {
    const inScope = await makeChannel(t, dev);
    const outside = await makeChannel(t, dev);
    const scoped = await apiToken(t, { token: dev }, { appIds: [inScope.id] });
    expect(
      (await t.request('PUT', `/application/${outside.id}`, { token: scoped.token, json: { name: 'x' } }))
        .status,
    ).toBe(404);
    expect(
      (await t.request('PUT', `/application/${inScope.id}`, { token: scoped.token, json: { name: 'x' } }))
        .status,
    ).toBe(200);
  });
});

describe('deliveryConfig', () => {
  it('PUT /application/{id} masks adapter secrets and keeps them when the mask is sent back', async () => {
    const c = await makeChannel(t, dev, {
      deliveryConfig: {
        slack: { webhookUrl: 'https://hooks.slack.example/T1/B2/secret' },
        email: { to: ['a@example.com'], enabled: false },
      },
    });
    expect(c.deliveryConfig).toEqual({
      slack: { enabled: true, minPriority: 0, delaySec: 300, webhookUrl: '********' },
      email: { enabled: false, minPriority: 0, delaySec: 300, to: ['a@example.com'] },
    });
    const res = await t.request('PUT', `/application/${c.id}`, {
      token: dev,
      json: { deliveryConfig: { slack: { webhookUrl: '********', minPriority: 5 } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.deliveryConfig).toEqual({
      slack: { enabled: true, minPriority: 5, delaySec: 300, webhookUrl: '********' },
    });
    const row = t.server.ctx.db.first<{ delivery_config: string }>(
      'SELECT delivery_config FROM channels WHERE id = ?',
      [c.id],
    )!;
    // Sealed at rest: the column holds no secret in clear, and the server still reads it.
    expect(row.delivery_config).not.toContain('hooks.slack.example');
    expect(JSON.parse(row.delivery_config).slack).toEqual({
      enabled: true,
      minPriority: 5,
      delaySec: 300,
      $sealed: expect.stringMatching(/^v1\./),
    });
    expect(openDeliveryConfig(t.server.ctx.secret, row.delivery_config).slack!.webhookUrl).toBe(
      'https://hooks.slack.example/T1/B2/secret',
    );
  });

  it('PUT /application/{id} answers 400 for a bad adapter setting or a mask with no stored secret', async () => {
    const c = await makeChannel(t, dev);
    const bad = await t.request('PUT', `/application/${c.id}`, {
      token: dev,
      json: { deliveryConfig: { telegram: { chatId: 1 } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toMatch(/^deliveryConfig\.telegram\.botToken: /);
    const mask = await t.request('PUT', `/application/${c.id}`, {
      token: dev,
      json: { deliveryConfig: { opsgenie: { apiKey: '********' } } },
    });
    expect(mask.status).toBe(400);
    expect(mask.body.errorDescription).toBe('deliveryConfig.opsgenie.apiKey: no stored secret to keep');
  });

  it('POST /application/{id}/delivery/test answers 400 when no adapter (or not the named one) is enabled', async () => {
    const none = await makeChannel(t, dev, {
      deliveryConfig: { email: { to: ['a@example.com'], enabled: false } },
    });
    const r1 = await t.request('POST', `/application/${none.id}/delivery/test`, { token: dev, json: {} });
    expect(r1.status).toBe(400);
    expect(r1.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: 'no enabled adapter to test',
    });
    const some = await makeChannel(t, dev, { deliveryConfig: { pagerduty: { routingKey: 'R0123' } } });
    const r3 = await t.request('POST', `/application/${some.id}/delivery/test`, {
      token: dev,
      json: { adapter: 'slack' },
    });
    expect(r3.status).toBe(400);
  });
});

describe('DELETE /application/{id}', () => {
  it('DELETE /application/{id} deletes the channel and its messages, and its children become roots', async () => {
    const parent = await makeChannel(t, dev);
    const child = await makeChannel(t, dev, { parentId: parent.id });
    const m = await sendMessage(t, parent.token);
    const res = await t.request('DELETE', `/application/${parent.id}`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const list = await t.request('GET', '/application', { token: dev });
    expect(list.body.find((c: any) => c.id === parent.id)).toBeUndefined();
    expect(list.body.find((c: any) => c.id === child.id)).not.toHaveProperty('parentId');
    expect(t.server.ctx.db.first('SELECT id FROM messages WHERE id = ?', [m.id])).toBeUndefined();
    expect(
      (await t.request('POST', '/message', { token: parent.token, json: { message: 'x' } })).status,
    ).toBe(401);
  });

  it("DELETE /application/{id} answers 404 for another user's channel", async () => {
    const theirs = await makeChannel(t, other.token);
    expect((await t.request('DELETE', `/application/${theirs.id}`, { token: dev })).status).toBe(404);
  });
});

describe('internal channel', () => {
  it('every write to the internal channel answers 403 while reading it works', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const sys = ensureSystemChannel(t.server.ctx, u.id);
    const list = await t.request('GET', '/application', { token: d });
    expect(list.body).toEqual([
      expect.objectContaining({ id: sys.id, internal: true, token: '', name: 'Belfry' }),
    ]);
    const writes: [string, string, unknown][] = [
      ['PUT', `/application/${sys.id}`, { name: 'x' }],
      ['DELETE', `/application/${sys.id}`, undefined],
      ['POST', `/application/${sys.id}/token`, { name: 'k' }],
      ['POST', `/application/${sys.id}/webhook`, { name: 'w' }],
      ['POST', `/application/${sys.id}/share`, { email: 'x@example.com', permission: 'view' }],
      ['POST', '/application', { name: 'child', parentId: sys.id }],
    ];
    for (const [method, path, json] of writes) {
      const res = await t.request(method, path, { token: d, ...(json === undefined ? {} : { json }) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.errorDescription).toBe('the system channel cannot be changed');
    }
    expect((await t.request('GET', `/application/${sys.id}/message`, { token: d })).status).toBe(200);
  });
});

describe('logo', () => {
  it('POST /application/{id}/image stores a PNG checked by content and serves it publicly', async () => {
    const c = await makeChannel(t, dev);
    const res = await upload(`/application/${c.id}/image`, dev, PNG, 'whatever.txt');
    expect(res.status).toBe(200);
    expect(res.body.image).toMatch(new RegExp(`^${t.url}/image/application/[a-f0-9]{32}\\.png$`));
    const img = await fetch(res.body.image);
    expect(img.status).toBe(200);
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    const second = await upload(`/application/${c.id}/image`, dev, PNG);
    expect((await fetch(res.body.image)).status).toBe(404);
    const del = await t.request('DELETE', `/application/${c.id}/image`, { token: dev });
    expect(del.status).toBe(200);
    expect(del.body.image).toBe('');
    expect((await fetch(second.body.image)).status).toBe(404);
    const again = await t.request('DELETE', `/application/${c.id}/image`, { token: dev });
    expect(again.status).toBe(400);
    expect(again.body.errorDescription).toBe('channel has no image');
  });

  it('POST /application/{id}/image answers 400 for HTML named .png and for a missing file field', async () => {
    const c = await makeChannel(t, dev);
    const html = await upload(
      `/application/${c.id}/image`,
      dev,
      Buffer.from('<html><script>alert(1)</script></html>'),
    );
    expect(html.status).toBe(400);
    expect(html.body.errorDescription).toBe('file is not a supported image (png, jpeg, gif, webp)');
    const none = await t.request('POST', `/application/${c.id}/image`, { token: dev, body: new FormData() });
    expect(none.status).toBe(400);
    expect(none.body.errorDescription).toBe('file is required');
    const theirs = await makeChannel(t, other.token);
    expect((await upload(`/application/${theirs.id}/image`, dev, PNG)).status).toBe(404);
  });

  it('POST /application/{id}/image answers 413 naming the upload limit when the file is too large', async () => {
    const c = await makeChannel(t, dev);
    const big = Buffer.concat([PNG, Buffer.alloc(UPLOAD_LIMIT_BYTES)]);
    const res = await upload(`/application/${c.id}/image`, dev, big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: 'Payload Too Large',
      errorCode: 413,
      errorDescription: `request body larger than ${UPLOAD_LIMIT_BYTES} bytes`,
    });
  });
});

describe('status and event sources', () => {
  it('GET /application/{id}/status reports no heartbeats and the last activity, recursively on request', async () => {
    const parent = await makeChannel(t, dev);
    const child = await makeChannel(t, dev, { parentId: parent.id });
    const empty = await t.request('GET', `/application/${parent.id}/status`, { token: dev });
    expect(empty.body).toEqual({
      appid: parent.id,
      hbTotal: 0,
      hbAlerting: 0,
      hbAlertingInfo: 0,
      hbPending: 0,
      hbStatus: 'none',
      lastActivity: null,
      messageCount: 0,
      channelIds: [parent.id],
      alerting: [],
    });
    t.clock.advance(1000);
    await sendMessage(t, child.token);
    const rec = await t.request('GET', `/application/${parent.id}/status?recursive=1`, { token: dev });
    expect(rec.body).toMatchObject({
      lastActivity: new Date(t.clock.now()).toISOString(),
      messageCount: 1,
      channelIds: [parent.id, child.id],
    });
    const list = await t.request('GET', '/application', { token: dev });
    expect(list.body.find((c: any) => c.id === child.id).lastUsed).toBe(
      new Date(t.clock.now()).toISOString(),
    );
  });

  it('GET /application/{id}/event-sources lists nothing yet and 404s for others', async () => {
    const c = await makeChannel(t, dev);
    const res = await t.request('GET', `/application/${c.id}/event-sources?recursive=1`, { token: dev });
    expect(res.body).toEqual({ appid: c.id, sources: [] });
    const theirs = await makeChannel(t, other.token);
    expect((await t.request('GET', `/application/${theirs.id}/event-sources`, { token: dev })).status).toBe(
      404,
    );
  });
});

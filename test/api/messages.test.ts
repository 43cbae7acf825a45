import { gotify } from 'gotify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents } from '../../server/features/quota/service';
import { apiToken, deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let otherDev: string;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  otherDev = (await deviceToken(t, makeUser(t))).token;
});
afterAll(async () => {
  await t.close();
});

async function freshUser() {
  const u = makeUser(t);
  return { ...u, dev: (await deviceToken(t, u)).token };
}

describe('POST /message', () => {
  it('POST /message stores the message and answers it with the channel default priority and name as title', async () => {
    const c = await makeChannel(t, dev, { name: 'Cron', defaultPriority: 6 });
    const res = await t.request('POST', '/message', {
      token: c.token,
      json: { message: 'done', id: 5, date: 'x', appid: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      message: 'done',
      title: 'Cron',
      priority: 6,
      date: new Date(t.clock.now()).toISOString(),
      senderName: 'Cron',
    });
    expect(res.body.id).not.toBe(5);
  });

  it('POST /message keeps extras unchanged and names the sending key', async () => {
    const c = await makeChannel(t, dev);
    const key = await t.request('POST', `/application/${c.id}/token`, {
      token: dev,
      json: { name: 'backup-script' },
    });
    const extras = {
      'client::display': { contentType: 'text/markdown' },
      nested: { n: [1, 2.5, 'x', null, { deep: true }] },
    };
    const res = await t.request('POST', '/message', {
      token: key.body.token,
      via: 'service-key',
      json: { message: 'm', title: 't', priority: 10, extras },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 't', priority: 10, senderName: 'backup-script', extras });
    const list = await t.request('GET', `/application/${c.id}/message`, { token: dev });
    expect(list.body.messages[0]).toEqual(res.body);
  });

  it('POST /message answers 400 for a form or urlencoded body, a missing message and a bad priority', async () => {
    const c = await makeChannel(t, dev);
    const form = new FormData();
    form.append('message', 'hi');
    const cases = [
      await t.request('POST', '/message', { token: c.token, form: { message: 'hi' } }),
      await t.request('POST', '/message', { token: c.token, body: form }),
      await t.request('POST', '/message', { token: c.token, json: {} }),
      await t.request('POST', '/message', { token: c.token, json: { message: '' } }),
      await t.request('POST', '/message', { token: c.token, json: { message: 'x', priority: 11 } }),
      await t.request('POST', '/message', { token: c.token, json: { message: 'x', priority: 'high' } }),
      await t.request('POST', '/message', { token: c.token, json: { message: 'x', extras: [1] } }),
    ];
    expect(cases.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400, 400]);
    expect(cases[0]!.body.errorDescription).toBe(
      'POST /message takes a JSON body (Content-Type: application/json)',
    );
    expect(cases[2]!.body.errorDescription).toBe('message: message is required');
    expect(
      t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages WHERE channel_id = ?', [c.id])!
        .n,
    ).toBe(0);
  });

  it('POST /message answers 401 for a device or API token and 403 for a key without write', async () => {
    const c = await makeChannel(t, dev);
    const api = await apiToken(t, { token: dev });
    const r1 = await t.request('POST', '/message', { token: dev, json: { message: 'x' } });
    expect(r1.status).toBe(401);
    expect(r1.body.errorDescription).toBe(
      'a device token (C…, from signing in) is not accepted here; this endpoint takes a channel key (A…) or a share key (S…)',
    );
    expect((await t.request('POST', '/message', { token: api.token, json: { message: 'x' } })).status).toBe(
      401,
    );
    expect((await t.request('POST', '/message', { basic: t.admin, json: { message: 'x' } })).status).toBe(
      401,
    );
    const ro = await t.request('POST', `/application/${c.id}/token`, {
      token: dev,
      json: { canRead: true, canWrite: false },
    });
    const r2 = await t.request('POST', '/message', { token: ro.body.token, json: { message: 'x' } });
    expect(r2.status).toBe(403);
    expect(r2.body.errorDescription).toBe('token lacks the write permission');
  });

  it('POST /message answers 429 daily event quota exceeded when the quota is spent, storing nothing', async () => {
    const u = await freshUser();
    const c = await makeChannel(t, u.dev);
    const limit = t.server.ctx.config.plans.free.eventsPerDay;
    t.server.ctx.db.transaction(() => consumeEvents(t.server.ctx, u.id, limit - 1));
    expect((await t.request('POST', '/message', { token: c.token, json: { message: 'last' } })).status).toBe(
      200,
    );
    const res = await t.request('POST', '/message', { token: c.token, json: { message: 'over' } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: 'Too Many Requests',
      errorCode: 429,
      errorDescription: 'daily event quota exceeded',
    });
    expect(
      t.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages WHERE channel_id = ?', [c.id])!
        .n,
    ).toBe(1);
  });

  it('concurrent POST /message (group-committed in shared batches) each get their own answer: 200, 429 past the quota', async () => {
    const u = await freshUser();
    const c = await makeChannel(t, u.dev);
    const other = await makeChannel(t, dev, { name: 'neighbour' });
    const limit = t.server.ctx.config.plans.free.eventsPerDay;
    t.server.ctx.db.transaction(() => consumeEvents(t.server.ctx, u.id, limit - 5));
    const mine = Array.from({ length: 12 }, (_, i) =>
      t.request('POST', '/message', { token: c.token, json: { message: `burst ${i}` } }),
    );
    const theirs = Array.from({ length: 4 }, (_, i) =>
      t.request('POST', '/message', { token: other.token, json: { message: `beside ${i}` } }),
    );
    const answers = await Promise.all(mine);
    expect((await Promise.all(theirs)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
    // What was answered 200 is stored, once each, and nothing of a refused one.
    const stored = t.server.ctx.db
      .all<{ id: number; message: string }>('SELECT id, message FROM messages WHERE channel_id = ?', [c.id])
      .sort((a, b) => a.id - b.id);
    expect(stored.map((m) => m.id)).toEqual(
      answers
        .filter((r) => r.status === 200)
        .map((r) => r.body.id)
        .sort((a: number, b: number) => a - b),
    );
    for (const r of answers.filter((a) => a.status === 200))
      expect(stored.find((m) => m.id === r.body.id)?.message).toBe(r.body.message);
  });

  it('POST /message works from the npm gotify client with ?token=', async () => {
    const c = await makeChannel(t, dev);
    await gotify({ server: t.url, app: c.token, title: 'npm', message: 'from gotify', priority: 4 });
    const list = await t.request('GET', `/application/${c.id}/message`, { token: dev });
    expect(list.body.messages[0]).toMatchObject({ title: 'npm', message: 'from gotify', priority: 4 });
  });

  it('POST /message answers 200 and keeps the message when a message:created listener throws (logged)', async () => {
    const c = await makeChannel(t, dev);
    const seen: number[] = [];
    const offBroken = t.server.ctx.bus.on('message:created', () => {
      throw new Error('broken subscriber');
    });
    const offAfter = t.server.ctx.bus.on('message:created', (e) => seen.push(e.message.id));
    try {
      const res = await t.request('POST', '/message', { token: c.token, json: { message: 'still here' } });
      expect(res.status).toBe(200);
      expect(seen).toEqual([res.body.id]); // the listener after the broken one still ran
      const list = await t.request('GET', `/application/${c.id}/message`, { token: dev });
      expect(list.body.messages.map((m: { id: number }) => m.id)).toEqual([res.body.id]);
      expect(
        t.log.lines.some((l) => l.includes('an event listener failed') && l.includes('broken subscriber')),
      ).toBe(true);
    } finally {
      offBroken();
      offAfter();
    }
  });
});

describe('paging', () => {
  let u: Awaited<ReturnType<typeof freshUser>>;
  let ids: number[];
  let a: { id: number; token: string };
  beforeAll(async () => {
    u = await freshUser();
    a = await makeChannel(t, u.dev);
    const b = await makeChannel(t, u.dev);
    ids = [];
    for (let i = 0; i < 12; i++)
      ids.push((await sendMessage(t, i % 2 ? b.token : a.token, { message: `m${i}` })).id);
  });

  it('GET /message pages newest first with since and next only while a next page exists', async () => {
    const first = await t.request('GET', '/message?limit=5', { token: u.dev });
    expect(first.status).toBe(200);
    expect(first.body.messages.map((m: any) => m.id)).toEqual(ids.slice(-5).reverse());
    expect(first.body.paging).toEqual({
      size: 5,
      limit: 5,
      since: ids[7],
      next: `${t.url}/message?limit=5&since=${ids[7]}`,
    });
    const seen: number[] = [...first.body.messages.map((m: any) => m.id)];
    let next = first.body.paging.next as string | undefined;
    let last: any;
    while (next) {
      const res = await t.request('GET', next.slice(t.url.length), { token: u.dev });
      seen.push(...res.body.messages.map((m: any) => m.id));
      next = res.body.paging.next;
      last = res.body;
    }
    expect(seen).toEqual([...ids].reverse());
    expect(last.paging).toEqual({ size: 2, limit: 5 });
  });

  it('GET /message treats since=0 as no cursor and answers 400 for a bad limit', async () => {
    const res = await t.request('GET', '/message?since=0&limit=200', { token: u.dev });
    expect(res.body.paging).toEqual({ size: 12, limit: 200 });
    for (const limit of ['0', '201', '-5', 'abc'])
      expect((await t.request('GET', `/message?limit=${limit}`, { token: u.dev })).status).toBe(400);
  });

  it('GET /message gives paging.since on every page, 0 on the last, to X-Gotify-Key requests', async () => {
    const res = await t.request('GET', '/message?limit=100&since=0', { token: u.dev, via: 'gotify-key' });
    expect(res.body.paging).toEqual({ size: 12, limit: 100, since: 0 });
    const mid = await t.request('GET', '/message?limit=3', { token: u.dev, via: 'legacy-key' });
    expect(mid.body.paging.since).toBe(ids[9]);
  });

  it('GET /application/{id}/message pages only that channel and keeps other query parameters in next', async () => {
    const res = await t.request('GET', `/application/${a.id}/message?limit=2&recursive=0`, { token: u.dev });
    expect(res.body.messages.map((m: any) => m.id)).toEqual([ids[10], ids[8]]);
    expect(res.body.paging.next).toBe(
      `${t.url}/application/${a.id}/message?limit=2&recursive=0&since=${ids[8]}`,
    );
    expect((await t.request('GET', `/application/${a.id}/message`, { token: otherDev })).status).toBe(404);
  });

  it('GET /message shows a channel key with read only its channel and another user nothing of this one', async () => {
    const key = await t.request('POST', `/application/${a.id}/token`, {
      token: u.dev,
      json: { canRead: true },
    });
    const res = await t.request('GET', '/message', { token: key.body.token });
    expect(res.body.messages.map((m: any) => m.appid)).toEqual(Array(6).fill(a.id));
    const theirs = await t.request('GET', '/message', { token: otherDev });
    expect(theirs.body.messages.filter((m: any) => ids.includes(m.id))).toEqual([]);
  });

  it('GET /message shows an API token only the channels of its scope', async () => {
    const scoped = await apiToken(t, { token: u.dev }, { appIds: [a.id], access: 'read' });
    const res = await t.request('GET', '/message', { token: scoped.token });
    expect(res.body.paging.size).toBe(6);
    expect(new Set(res.body.messages.map((m: any) => m.appid))).toEqual(new Set([a.id]));
  });

  it('GET /application/{id}/message?recursive=1 includes descendants', async () => {
    const child = await makeChannel(t, u.dev, { parentId: a.id });
    const m = await sendMessage(t, child.token);
    const plain = await t.request('GET', `/application/${a.id}/message`, { token: u.dev });
    expect(plain.body.messages.map((x: any) => x.id)).not.toContain(m.id);
    const rec = await t.request('GET', `/application/${a.id}/message?recursive=1`, { token: u.dev });
    expect(rec.body.messages[0].id).toBe(m.id);
    expect(rec.body.paging.size).toBe(7);
  });
});

describe('read marks', () => {
  it('POST /message/read marks messages read for the caller only; read is absent otherwise', async () => {
    const u = await freshUser();
    const c = await makeChannel(t, u.dev);
    const m1 = await sendMessage(t, c.token);
    const m2 = await sendMessage(t, c.token);
    const foreign = await sendMessage(t, (await makeChannel(t, otherDev)).token);
    const res = await t.request('POST', '/message/read', {
      token: u.dev,
      json: { ids: [m1.id, foreign.id, 999999] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ marked: 1 });
    const list = await t.request('GET', '/message', { token: u.dev });
    expect(list.body.messages).toEqual([
      expect.not.objectContaining({ read: expect.anything() }),
      expect.objectContaining({ id: m1.id, read: true }),
    ]);
    expect(list.body.messages[0].id).toBe(m2.id);
  });

  it('POST /message/read answers 403 for a read-only API token and 400 for an empty list', async () => {
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    const res = await t.request('POST', '/message/read', { token: ro.token, json: { ids: [1] } });
    expect(res.status).toBe(403);
    expect((await t.request('POST', '/message/read', { token: dev, json: { ids: [] } })).status).toBe(400);
  });

  it('POST /application/{id}/message/read marks the channel (and descendants with recursive) read', async () => {
    const u = await freshUser();
    const parent = await makeChannel(t, u.dev);
    const child = await makeChannel(t, u.dev, { parentId: parent.id });
    await sendMessage(t, parent.token);
    const c1 = await sendMessage(t, child.token);
    const r1 = await t.request('POST', `/application/${parent.id}/message/read`, { token: u.dev });
    expect(r1.body).toEqual({ appids: [parent.id] });
    let list = await t.request('GET', '/message', { token: u.dev });
    expect(list.body.messages.map((m: any) => m.read ?? false)).toEqual([false, true]);
    await t.request('POST', `/application/${parent.id}/message/read?recursive=1`, { token: u.dev });
    list = await t.request('GET', '/message', { token: u.dev });
    expect(list.body.messages.every((m: any) => m.read === true)).toBe(true);
    const later = await sendMessage(t, child.token);
    list = await t.request('GET', '/message', { token: u.dev });
    expect(list.body.messages[0]).toEqual(expect.objectContaining({ id: later.id }));
    expect(list.body.messages[0]).not.toHaveProperty('read');
    expect(c1.id).toBeLessThan(later.id);
  });

  it('POST /application/{id}/message/read answers 403 for an API token with a restricted scope', async () => {
    const c = await makeChannel(t, dev);
    const scoped = await apiToken(t, { token: dev }, { appIds: [c.id] });
    const res = await t.request('POST', `/application/${c.id}/message/read`, { token: scoped.token });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe(
      'an API token with a restricted scope cannot mark a whole channel read',
    );
  });
});

describe('deletes', () => {
  it("DELETE /message/{id} deletes one own message and 404s for others' and unknown ones", async () => {
    const c = await makeChannel(t, dev);
    const m = await sendMessage(t, c.token);
    const theirs = await sendMessage(t, (await makeChannel(t, otherDev)).token);
    expect((await t.request('DELETE', `/message/${theirs.id}`, { token: dev })).status).toBe(404);
    expect((await t.request('DELETE', '/message/999999', { token: dev })).status).toBe(404);
    const res = await t.request('DELETE', `/message/${m.id}`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: 1 });
    expect(t.server.ctx.db.first('SELECT id FROM messages WHERE id = ?', [theirs.id])).toBeDefined();
  });

  it("DELETE /application/{id}/message deletes the channel's messages, with descendants on recursive", async () => {
    const u = await freshUser();
    const parent = await makeChannel(t, u.dev);
    const child = await makeChannel(t, u.dev, { parentId: parent.id });
    await sendMessage(t, parent.token);
    await sendMessage(t, child.token);
    await sendMessage(t, child.token);
    expect((await t.request('DELETE', `/application/${parent.id}/message`, { token: u.dev })).body).toEqual({
      deleted: 1,
    });
    expect(
      (await t.request('DELETE', `/application/${parent.id}/message?recursive=1`, { token: u.dev })).body,
    ).toEqual({ deleted: 2 });
    expect((await t.request('DELETE', `/application/${parent.id}/message`, { token: otherDev })).status).toBe(
      404,
    );
  });

  it('DELETE /message deletes every message of the caller and none of another user', async () => {
    const u = await freshUser();
    const c = await makeChannel(t, u.dev);
    await sendMessage(t, c.token);
    await sendMessage(t, c.token);
    const theirs = await sendMessage(t, (await makeChannel(t, otherDev)).token);
    const res = await t.request('DELETE', '/message', { token: u.dev });
    expect(res.body).toEqual({ deleted: 2 });
    expect((await t.request('GET', '/message', { token: u.dev })).body.messages).toEqual([]);
    expect(t.server.ctx.db.first('SELECT id FROM messages WHERE id = ?', [theirs.id])).toBeDefined();
  });

  it('DELETE /message answers 403 for a read-only API token and a channel key', async () => {
    const ro = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('DELETE', '/message', { token: ro.token })).status).toBe(403);
    const c = await makeChannel(t, dev);
    expect((await t.request('DELETE', '/message', { token: c.token })).status).toBe(403);
  });
});

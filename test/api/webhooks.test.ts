import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remainingEvents } from '../../server/features/quota/service';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { request, startTestServer, type TestServer } from '../helpers/test-server';

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

async function makeWebhook(channelId: number, body: Record<string, unknown>) {
  const res = await t.request('POST', `/application/${channelId}/webhook`, { token: dev, json: body });
  if (res.status !== 200) throw new Error(res.text);
  return { ...res.body, path: new URL(res.body.url).pathname };
}

describe('webhook management', () => {
  it('POST /application/{id}/webhook creates a webhook whose URL is shown once', async () => {
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', `/application/${c.id}/webhook`, {
      token: dev,
      json: { name: 'Form' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      name: 'Form',
      mode: 'dynamic',
      title: '',
      text: '',
      priority: null,
      url: expect.stringMatching(new RegExp(`^${t.url}/webhook/W[A-Za-z0-9]{22}$`)),
      createdAt: new Date(t.clock.now()).toISOString(),
      lastUsed: null,
    });
    const list = await t.request('GET', `/application/${c.id}/webhook`, { token: dev });
    expect(list.body).toHaveLength(1);
    expect(list.body[0].url).toMatch(/\/webhook\/W[A-Za-z0-9]{2}\*{16}/);
  });

  it("POST /application/{id}/webhook answers 400 for a static webhook without text and 404 for others' channels", async () => {
    const c = await makeChannel(t, dev);
    expect(
      (
        await t.request('POST', `/application/${c.id}/webhook`, {
          token: dev,
          json: { name: 'x', mode: 'static' },
        })
      ).status,
    ).toBe(400);
    expect((await t.request('POST', `/application/${c.id}/webhook`, { token: dev, json: {} })).status).toBe(
      400,
    );
    const theirs = await makeChannel(t, otherDev);
    expect(
      (await t.request('POST', `/application/${theirs.id}/webhook`, { token: dev, json: { name: 'x' } }))
        .status,
    ).toBe(404);
  });

  it('PUT /webhook-config/{id} updates settings; DELETE stops the URL at once, other webhooks keep working', async () => {
    const c = await makeChannel(t, dev);
    const a = await makeWebhook(c.id, { name: 'a' });
    const b = await makeWebhook(c.id, { name: 'b' });
    const upd = await t.request('PUT', `/webhook-config/${a.id}`, {
      token: dev,
      json: { title: 'T', priority: 8 },
    });
    expect(upd.body).toMatchObject({ title: 'T', priority: 8, name: 'a' });
    expect(
      (await t.request('PUT', `/webhook-config/${a.id}`, { token: otherDev, json: { title: 'x' } })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `/webhook-config/${a.id}`, { token: dev })).body).toEqual({});
    const gone = await t.request('GET', `${a.path}?message=x`);
    expect(gone.status).toBe(404);
    expect(gone.body.errorDescription).toBe('webhook not found');
    expect((await t.request('GET', `${b.path}?message=x`)).status).toBe(200);
  });

  it('POST /webhook-config/{id}/rotate gives a new URL and retires the old one', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, { name: 'r' });
    const res = await t.request('POST', `/webhook-config/${w.id}/rotate`, { token: dev });
    expect(res.body.url).not.toBe(w.url);
    expect((await t.request('GET', `${w.path}?message=x`)).status).toBe(404);
    expect((await t.request('GET', `${new URL(res.body.url).pathname}?message=x`)).status).toBe(200);
  });
});

describe('GET|POST /webhook/{token}', () => {
  it('static mode sends the configured message and ignores any body or query', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, {
      name: 'Door',
      mode: 'static',
      title: 'Ring',
      text: 'Someone is at the door',
      priority: 9,
    });
    const res = await t.request('POST', `${w.path}?message=ignored&priority=zzz`, {
      json: { message: 'ignored', priority: 99 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      message: 'Someone is at the door',
      title: 'Ring',
      priority: 9,
      date: new Date(t.clock.now()).toISOString(),
      senderName: 'Door',
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('dynamic mode takes message, title and priority from the query, JSON, urlencoded and multipart bodies', async () => {
    const c = await makeChannel(t, dev, { defaultPriority: 2 });
    const w = await makeWebhook(c.id, { name: 'Dyn', title: 'Default title', priority: 6 });
    const q = await t.request('GET', `${w.path}?message=from%20query&priority=3`);
    expect(q.body).toMatchObject({ message: 'from query', title: 'Default title', priority: 3 });
    const j = await t.request('POST', w.path, { json: { message: 'json', title: 'J' } });
    expect(j.body).toMatchObject({ message: 'json', title: 'J', priority: 6 });
    const u = await t.request('POST', w.path, { form: { message: 'urlencoded', priority: '1' } });
    expect(u.body).toMatchObject({ message: 'urlencoded', priority: 1 });
    const fd = new FormData();
    fd.append('message', 'multipart');
    fd.append('title', 'M');
    const m = await t.request('POST', w.path, { body: fd });
    expect(m.body).toMatchObject({ message: 'multipart', title: 'M' });
    const plain = await t.request('POST', w.path, {
      body: 'message=text-plain',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(plain.status).toBe(400);
    expect(plain.body.errorDescription).toBe('message is required');
  });

  it('dynamic mode answers 400 for a bad priority and uses the default text when no message is given', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, { name: 'Dyn', text: 'fallback' });
    expect((await t.request('GET', `${w.path}?priority=11&message=x`)).status).toBe(400);
    expect((await t.request('GET', w.path)).body).toMatchObject({ message: 'fallback' });
  });

  it('a body that cannot be read is 400 with the error body in both modes, and nothing is sent', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, { name: 'Broken' });
    const broken = await t.request('POST', w.path, {
      body: '--x\r\nContent-Disposition: form-data; name="message"\r\n\r\nno closing boundary',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: 'invalid multipart body',
    });
    const withFile = new FormData();
    withFile.append('message', 'x');
    withFile.append('attachment', new Blob(['data']), 'a.txt');
    const file = await t.request('POST', w.path, { body: withFile });
    expect(file.status).toBe(400);
    expect(file.body.errorDescription).toBe('invalid multipart body: files are not accepted');
    const fixed = await makeWebhook(c.id, { name: 'Static', mode: 'static', text: 'ring' });
    const json = await t.request('POST', fixed.path, {
      body: '{"message": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(json.status).toBe(400);
    expect(json.body.errorDescription).toBe('malformed JSON body');
    const listed = await t.request('GET', `/application/${c.id}/message`, { token: dev });
    expect(listed.body.messages).toEqual([]);
  });

  it('a browser-style cross-origin POST needs no preflight and can read the answer', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, { name: 'Browser' });
    const res = await request(t.url, 'POST', w.path, {
      form: { message: 'from a page' },
      headers: { Origin: 'https://example.org' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const unknown = await request(t.url, 'GET', '/webhook/Wxxxxxxxxxxxxxxxxxxxxxx?message=x', {
      headers: { Origin: 'https://example.org' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a webhook message consumes quota and appears in the channel', async () => {
    const c = await makeChannel(t, dev);
    const w = await makeWebhook(c.id, { name: 'Q' });
    const before = remainingEvents(t.server.ctx, 1);
    const sent = await t.request('GET', `${w.path}?message=counted`);
    const list = await t.request('GET', `/application/${c.id}/message`, { token: dev });
    expect(list.body.messages[0]).toEqual(sent.body);
    expect(remainingEvents(t.server.ctx, 1)).toBe(before - 1);
  });
});

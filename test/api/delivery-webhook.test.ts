import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { type FakeHttp, startFakeHttp } from '../helpers/fake-http';
import { startTestServer, type TestServer } from '../helpers/test-server';

// End to end through the real `webhook` adapter (no override) to a loopback sink: the outbox's retry,
// the adapter's request and signature, and the read link it carries.
let t: TestServer;
let sink: FakeHttp;

beforeAll(async () => {
  t = await startTestServer();
  sink = await startFakeHttp();
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

it('a webhook re-delivery is retried after a 503 with the same X-Belfry-Delivery, signed, and its read link marks the message read', async () => {
  const dev = (await deviceToken(t)).token;
  let calls = 0;
  sink.on('POST', '/hook', () =>
    ++calls === 1 ? { status: 503, body: { message: 'busy' } } : { status: 200 },
  );
  const ch = await makeChannel(t, dev, {
    name: 'ops',
    deliveryConfig: { webhook: { url: `${sink.url}/hook`, secret: 's3cret', delaySec: 0 } },
  });
  const m = await sendMessage(t, ch.token, { title: 'Disk', message: 'full', priority: 7 });
  await t.server.scheduler.tick();
  expect(sink.requests).toHaveLength(1);
  let [d] = (await t.request('GET', `/application/${ch.id}/deliveries`, { token: dev })).body.deliveries;
  expect(d).toMatchObject({ status: 'queued', attempts: 1, lastError: expect.stringMatching(/^HTTP 503/) });
  expect(d.nextAttemptAt).toBe(new Date(t.clock.now() + 30_000).toISOString());
  t.clock.advance(30_000);
  await t.server.scheduler.tick();
  expect(sink.requests).toHaveLength(2);
  [d] = (await t.request('GET', `/application/${ch.id}/deliveries`, { token: dev })).body.deliveries;
  expect(d).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
  for (const req of sink.requests) {
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers['x-belfry-event']).toBe('message.redelivery');
    expect(req.headers['x-belfry-delivery']).toBe(String(d.id));
    const ts = req.headers['x-belfry-timestamp'] as string;
    expect(req.headers['x-belfry-signature']).toBe(
      `sha256=${createHmac('sha256', 's3cret').update(`${ts}.${req.body}`).digest('hex')}`,
    );
    expect(req.json()).toMatchObject({
      event: 'message.redelivery',
      message: { id: m.id, appid: ch.id, title: 'Disk', message: 'full', priority: 7 },
      channel: { id: ch.id, name: 'ops' },
      links: { message: `${t.server.ctx.publicUrl()}/inbox?channel=${ch.id}#message-${m.id}` },
    });
  }
  const read = new URL((sink.requests[1]!.json() as { links: { read: string } }).links.read);
  const page = await t.request('GET', `${read.pathname}${read.search}`, {
    headers: { Accept: 'application/json' },
  });
  expect(page.body).toEqual({ ok: true, messageId: m.id, title: 'Disk' });
  const list = await t.request('GET', `/application/${ch.id}/message`, { token: dev });
  expect(list.body.messages[0]).toMatchObject({ id: m.id, read: true });
});

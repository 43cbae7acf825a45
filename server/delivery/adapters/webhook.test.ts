import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, sendError, testIo } from '../../../test/helpers/delivery-io';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { signBody } from '../signature';
import { webhookAdapter } from './webhook';

const PATH = '/hooks/belfry?token=webhookQueryTokenSecret';

describe('webhook adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', '/hooks/', { status: 204, body: '' });
  });
  afterAll(() => fake.close());

  it('posts the §6.2 JSON with event, delivery id, timestamp, a verifiable signature and the configured headers', async () => {
    const t = testIo();
    const item = sampleItem({ extras: { 'client::display': { contentType: 'text/markdown' } } });
    const config = {
      url: `${fake.url}${PATH}`,
      secret: 'hmacSigningSecret',
      headers: { Authorization: 'Bearer headerSecretValue', 'X-Belfry-Delivery': 'forged' },
    };
    await webhookAdapter.send(t, config, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(PATH);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers['user-agent']).toMatch(/^Belfry\/\d/);
    expect(req.headers.authorization).toBe('Bearer headerSecretValue');
    expect(req.headers['x-belfry-event']).toBe('message.redelivery');
    expect(req.headers['x-belfry-delivery']).toBe('1001');
    const ts = String(Math.floor(t.ctx.clock.now() / 1000));
    expect(req.headers['x-belfry-timestamp']).toBe(ts);
    // What a receiver does: HMAC-SHA256(secret, "{timestamp}.{raw body}") in hex.
    expect(req.headers['x-belfry-signature']).toBe(signBody('hmacSigningSecret', Number(ts), req.body));
    expect(req.headers['x-belfry-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(req.json()).toEqual({
      event: 'message.redelivery',
      message: {
        id: 42,
        appid: 7,
        title: 'Disk almost full',
        message: item.message,
        priority: 6,
        date: '2026-01-15T11:59:00.000Z',
        extras: { 'client::display': { contentType: 'text/markdown' } },
      },
      channel: { id: 7, name: 'Infra' },
      links: { message: item.links.message, read: item.links.read },
    });
  });

  it('names digests and tests by their event, and sends no signature without a secret', async () => {
    await webhookAdapter.send(
      testIo(),
      { url: `${fake.url}${PATH}` },
      sampleItem({
        kind: 'test',
        messageId: null,
        links: { message: 'https://b.example/inbox?channel=7', read: null },
      }),
    );
    const req = fake.requests.at(-1)!;
    expect(req.headers['x-belfry-event']).toBe('delivery.test');
    expect(req.headers['x-belfry-signature']).toBeUndefined();
    expect(req.headers['x-belfry-timestamp']).toMatch(/^\d+$/);
    expect(req.json()).toMatchObject({
      event: 'delivery.test',
      message: { id: null },
      links: { read: null },
    });
    await webhookAdapter.send(
      testIo(),
      { url: `${fake.url}${PATH}` },
      sampleItem({ kind: 'digest', messageId: null }),
    );
    expect(fake.requests.at(-1)!.headers['x-belfry-event']).toBe('digest');
  });

  it('does not follow a redirect (a permanent error)', async () => {
    const f2 = await startFakeHttp();
    try {
      f2.on('POST', '/', { status: 302, headers: { Location: `${fake.url}/elsewhere` } });
      const before = fake.requests.length;
      await expect(webhookAdapter.send(testIo(), { url: `${f2.url}/x` }, sampleItem())).rejects.toMatchObject(
        {
          retryable: false,
          message: 'HTTP 302: redirects are not followed',
        },
      );
      expect(fake.requests.length).toBe(before);
    } finally {
      await f2.close();
    }
  });

  it('masks header values and the URL token when a reply echoes them', async () => {
    const f2 = await startFakeHttp();
    try {
      f2.on('POST', '/', (req) => ({
        status: 400,
        body: { message: `bad key ${String(req.headers['x-api-key'])} for ${req.path}` },
      }));
      const config = { url: `${f2.url}${PATH}`, headers: { 'X-Api-Key': 'headerSecretValue' } };
      const e = await sendError(webhookAdapter.send(testIo(), config, sampleItem()));
      expect(e.message).toBe('HTTP 400: bad key ******** for ********');
    } finally {
      await f2.close();
    }
  });

  describeHttpErrorClasses({
    adapter: webhookAdapter,
    target: (base) => ({
      config: {
        url: `${base}${PATH}`,
        secret: 'hmacSigningSecret',
        headers: { 'X-Api-Key': 'headerSecretValue' },
      },
    }),
    path: '/hooks/',
    secrets: ['webhookQueryTokenSecret', 'hmacSigningSecret', 'headerSecretValue'],
    permanent: { status: 410, body: 'endpoint gone', text: 'HTTP 410: endpoint gone' },
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { OPSGENIE_MESSAGE_MAX, opsgenieAdapter, opsgeniePriority } from './opsgenie';

const KEY = 'eb243592-faa2-4ba2-a551-opsgenieKeySecret';

describe('opsgenie adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', '/v2/alerts', (req) => {
      // Opsgenie's checks: the GenieKey, a message of 1-130 characters.
      if (req.headers.authorization !== `GenieKey ${KEY}`)
        return { status: 401, body: { message: 'Could not authenticate', took: 0.001, requestId: 'r1' } };
      const b = req.json() as { message?: string };
      if (!b.message || b.message.length > 130)
        return {
          status: 422,
          body: {
            message: 'Request body is not processable. Please check the errors.',
            errors: { message: 'Message can not be longer than 130 characters' },
          },
        };
      return { status: 202, body: { result: 'Request will be processed', took: 0.1, requestId: 'r2' } };
    });
  });
  afterAll(() => fake.close());
  const io = () => testIo({ apiUrls: { opsgenie: fake.url } });

  it('creates an alert with GenieKey auth, alias, description, priority and details', async () => {
    const item = sampleItem({ priority: 9 });
    await opsgenieAdapter.send(io(), { apiKey: KEY, region: 'us' }, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v2/alerts');
    expect(req.headers.authorization).toBe(`GenieKey ${KEY}`);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.json()).toEqual({
      message: 'Disk almost full',
      alias: 'belfry-msg-42',
      description: item.message,
      priority: 'P1',
      source: 'Belfry',
      details: { channel: 'Infra', link: item.links.message, readUrl: item.links.read },
    });
  });

  it('cuts the message to 130 characters and maps priorities P1-P5', async () => {
    await opsgenieAdapter.send(io(), { apiKey: KEY, region: 'eu' }, sampleItem({ title: 't'.repeat(500) }));
    expect(fake.requests.at(-1)!.json()).toMatchObject({ message: expect.any(String) });
    expect((fake.requests.at(-1)!.json() as { message: string }).message.length).toBe(OPSGENIE_MESSAGE_MAX);
    expect([0, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(opsgeniePriority)).toEqual([
      'P5',
      'P5',
      'P4',
      'P4',
      'P3',
      'P3',
      'P2',
      'P2',
      'P1',
      'P1',
    ]);
  });

  it('a bad key is permanent with Opsgenie’s reason and without the key', async () => {
    await expect(
      opsgenieAdapter.send(io(), { apiKey: 'wrongOpsgenieKey', region: 'us' }, sampleItem()),
    ).rejects.toMatchObject({
      retryable: false,
      message: 'HTTP 401: Could not authenticate',
    });
  });

  describeHttpErrorClasses({
    adapter: opsgenieAdapter,
    target: (base) => ({ config: { apiKey: KEY, region: 'us' }, apiUrls: { opsgenie: base } }),
    path: '/v2/alerts',
    secrets: [KEY, 'opsgenieKeySecret'],
    permanent: {
      status: 422,
      body: {
        message: 'Request body is not processable. Please check the errors.',
        errors: { message: 'Message can not be empty.' },
      },
      text: 'HTTP 422: Request body is not processable. Please check the errors.: Message can not be empty.',
    },
  });
});

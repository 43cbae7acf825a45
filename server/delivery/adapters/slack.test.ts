import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { slackAdapter } from './slack';

const PATH = '/services/T0001/B0001/XXXXsecretXXXX';

describe('slack adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', PATH, { status: 200, body: 'ok' });
  });
  afterAll(() => fake.close());

  it('posts Block Kit JSON to the webhook URL as Slack reads it', async () => {
    const item = sampleItem({ message: 'a <b> & c > d', priority: 8 });
    await slackAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(PATH);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    const body = req.json() as { text: string; blocks: Record<string, unknown>[] };
    expect(body.text).toBe('Disk almost full: a &lt;b&gt; &amp; c &gt; d');
    expect(body.blocks.length).toBeLessThanOrEqual(50);
    expect(body.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Disk almost full' },
    });
    expect(body.blocks[1]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: 'a &lt;b&gt; &amp; c &gt; d' },
    });
    expect(body.blocks[2]).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: 'Infra · priority 8' }],
    });
    expect(body.blocks[3]).toEqual({
      type: 'actions',
      elements: [
        { type: 'button', text: { type: 'plain_text', text: 'Open' }, url: item.links.message },
        { type: 'button', text: { type: 'plain_text', text: 'Mark as read' }, url: item.links.read },
      ],
    });
  });

  it('keeps Block Kit limits (header ≤ 150, section ≤ 3000) and leaves out Mark as read without a read link', async () => {
    const item = sampleItem({
      kind: 'digest',
      messageId: null,
      title: 'T'.repeat(400),
      message: 'm'.repeat(5000),
      links: { message: 'https://b.example/inbox?channel=7', read: null },
    });
    await slackAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const body = fake.requests.at(-1)!.json() as {
      blocks: { text?: { text: string }; elements?: unknown[] }[];
    };
    expect([...body.blocks[0]!.text!.text].length).toBe(150);
    expect([...body.blocks[1]!.text!.text].length).toBe(3000);
    expect(body.blocks[3]!.elements).toHaveLength(1);
  });

  describeHttpErrorClasses({
    adapter: slackAdapter,
    target: (base) => ({ config: { webhookUrl: `${base}${PATH}` } }),
    path: PATH,
    secrets: ['XXXXsecretXXXX', 'T0001/B0001'],
    permanent: { status: 404, body: 'no_service', text: 'HTTP 404: no_service' },
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { mattermostAdapter } from './mattermost';

const PATH = '/hooks/mmHookKeySecret123';

describe('mattermost adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', PATH, { status: 200, body: 'ok' });
  });
  afterAll(() => fake.close());

  it('posts Markdown text with the links, and channel/username when configured', async () => {
    const item = sampleItem();
    await mattermostAdapter.send(
      testIo(),
      { webhookUrl: `${fake.url}${PATH}`, channel: 'town-square', username: 'belfry' },
      item,
    );
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(PATH);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.json()).toEqual({
      text: `#### Disk almost full\n${item.message}\n\n[Open](${item.links.message}) · [Mark as read](${item.links.read})`,
      channel: 'town-square',
      username: 'belfry',
    });
    await mattermostAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    expect(Object.keys(fake.requests.at(-1)!.json() as object)).toEqual(['text']);
  });

  it('a question: a line of Markdown answer links and the deadline between the message and Open / Mark as read', async () => {
    const item = questionItem({ options: ['yes', 'no*'] });
    await mattermostAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe(PATH);
    expect(req.json()).toEqual({
      text:
        `#### Question\nRestart db-07 now?\n\n**Answer:** [yes](${answerLink('yes')}) · [no\\*](${answerLink('no*')})\n` +
        `Answer by 2026-01-15 12:59 UTC\n\n[Open](${item.links.message}) · [Mark as read](${item.links.read})`,
    });
    const text = questionItem({ type: 'text', options: [], format: 'json' });
    await mattermostAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, text);
    expect((fake.requests.at(-1)!.json() as { text: string }).text).toBe(
      `#### Question\nRestart db-07 now?\n\n**Answer:** [Answer in Belfry](${item.links.message})\n` +
        `Answer with JSON\nAnswer by 2026-01-15 12:59 UTC\n\n[Open](${item.links.message}) · [Mark as read](${item.links.read})`,
    );
  });

  describeHttpErrorClasses({
    adapter: mattermostAdapter,
    target: (base) => ({ config: { webhookUrl: `${base}${PATH}` } }),
    path: PATH,
    secrets: ['mmHookKeySecret123'],
    permanent: {
      status: 400,
      body: {
        id: 'web.incoming_webhook.parse.app_error',
        message: 'Unable to parse incoming data',
        status_code: 400,
      },
      text: 'HTTP 400: Unable to parse incoming data',
    },
  });
});

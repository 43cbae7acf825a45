import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, QUESTION_EXPIRES_AT, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { ManualClock } from '../../lib/clock';
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

  const sendQuestion = async (item = questionItem(), io = testIo()) => {
    await slackAdapter.send(io, { webhookUrl: `${fake.url}${PATH}` }, item);
    return fake.requests.at(-1)!.json() as { text: string; blocks: Record<string, unknown>[] };
  };
  const button = (text: string, url: string, primary = false) => ({
    type: 'button',
    text: { type: 'plain_text', text },
    url,
    ...(primary ? { style: 'primary' } : {}),
  });

  it('a choice question: the deadline and one link button per option (the default one primary) before the context', async () => {
    const item = questionItem();
    const body = await sendQuestion(item);
    expect(body.text).toBe('Question: Restart db-07 now?');
    expect(body.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'Question' } },
      { type: 'section', text: { type: 'mrkdwn', text: 'Restart db-07 now?' } },
      { type: 'section', text: { type: 'mrkdwn', text: 'Answer by 2026-01-15 12:59 UTC' } },
      {
        type: 'actions',
        elements: [
          button('yes', answerLink('yes'), true),
          button('no', answerLink('no')),
          button('later', answerLink('later')),
        ],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'Infra · priority 6' }] },
      {
        type: 'actions',
        elements: [button('Open', item.links.message), button('Mark as read', item.links.read!)],
      },
    ]);
  });

  it('a multi-select question: its options (escaped) and one "Answer in Belfry" button; button texts ≤ 75', async () => {
    const long = `${'o'.repeat(99)}>`;
    const body = await sendQuestion(questionItem({ type: 'multi', options: ['a & b', long] }));
    expect(body.blocks[2]).toEqual({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `Options: a &amp; b · ${'o'.repeat(99)}&gt; (one or more)\nAnswer by 2026-01-15 12:59 UTC`,
      },
    });
    expect(body.blocks[3]).toEqual({
      type: 'actions',
      elements: [button('Answer in Belfry', questionItem().links.message, true)],
    });
    const ten = Array.from({ length: 10 }, (_, i) => `${i}${'x'.repeat(99)}`);
    const many = await sendQuestion(questionItem({ options: ten }));
    const answers = (many.blocks[3] as { elements: { text: { text: string } }[] }).elements;
    expect(answers).toHaveLength(10);
    for (const b of answers) expect([...b.text.text].length).toBeLessThanOrEqual(75);
  });

  it('a question whose deadline passed before the send: "Closed at", its options, and no answer buttons', async () => {
    const io = testIo({ clock: new ManualClock(Date.parse(QUESTION_EXPIRES_AT)) });
    const body = await sendQuestion(questionItem(), io);
    expect(body.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context', 'actions']);
    expect(body.blocks[2]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: 'Options: yes · no · later\nClosed at 2026-01-15 12:59 UTC' },
    });
  });

  describeHttpErrorClasses({
    adapter: slackAdapter,
    target: (base) => ({ config: { webhookUrl: `${base}${PATH}` } }),
    path: PATH,
    secrets: ['XXXXsecretXXXX', 'T0001/B0001'],
    permanent: { status: 404, body: 'no_service', text: 'HTTP 404: no_service' },
  });
});

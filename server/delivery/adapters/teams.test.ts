import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { isConnectorUrl, messageCard, TEAMS_ACTIONS_PER_SET, teamsAdapter } from './teams';

const PATH = '/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=teamsSigSecret';

describe('teams adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', '/workflows/', { status: 202, body: '' });
  });
  afterAll(() => fake.close());

  it('posts an Adaptive Card 1.4 in the message envelope to a Workflows URL', async () => {
    const item = sampleItem();
    await teamsAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(PATH);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    const body = req.json() as {
      type: string;
      attachments: { contentType: string; content: Record<string, unknown> }[];
    };
    expect(body.type).toBe('message');
    expect(body.attachments).toHaveLength(1);
    expect(body.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const card = body.attachments[0]!.content;
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(card.body).toEqual([
      { type: 'TextBlock', size: 'Large', weight: 'Bolder', text: 'Disk almost full', wrap: true },
      { type: 'TextBlock', text: item.message, wrap: true },
      {
        type: 'FactSet',
        facts: [
          { title: 'Channel', value: 'Infra' },
          { title: 'Priority', value: '6' },
        ],
      },
    ]);
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open', url: item.links.message },
      { type: 'Action.OpenUrl', title: 'Mark as read', url: item.links.read },
    ]);
  });

  it('sends a MessageCard (summary required) only to *.webhook.office.com connector URLs', () => {
    expect(isConnectorUrl('https://contoso.webhook.office.com/webhookb2/x')).toBe(true);
    expect(isConnectorUrl('https://prod-1.westeurope.logic.azure.com/workflows/x')).toBe(false);
    expect(isConnectorUrl('https://webhook.office.com.evil.example/x')).toBe(false);
    const card = messageCard(sampleItem({ priority: 8 }));
    expect(card).toMatchObject({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'Disk almost full',
      themeColor: 'E74C3C',
      title: 'Disk almost full',
      text: 'db-07: /var/lib/postgresql is 91% full',
    });
    expect(card.potentialAction).toEqual([
      { '@type': 'OpenUri', name: 'Open', targets: [{ os: 'default', uri: sampleItem().links.message }] },
      {
        '@type': 'OpenUri',
        name: 'Mark as read',
        targets: [{ os: 'default', uri: sampleItem().links.read }],
      },
    ]);
  });

  it(`a choice question: the deadline and Action.OpenUrl answers in ActionSets of ≤ ${TEAMS_ACTIONS_PER_SET} (the default one positive)`, async () => {
    const options = ['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8'];
    const item = questionItem({ options, defaultOption: 'o7' });
    await teamsAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe(PATH);
    const card = (req.json() as { attachments: { content: Record<string, unknown> }[] }).attachments[0]!
      .content;
    const open = (o: string) => ({
      type: 'Action.OpenUrl',
      title: o,
      url: answerLink(o),
      ...(o === 'o7' ? { style: 'positive' } : {}),
    });
    expect(card.body).toEqual([
      { type: 'TextBlock', size: 'Large', weight: 'Bolder', text: 'Question', wrap: true },
      { type: 'TextBlock', text: 'Restart db-07 now?', wrap: true },
      { type: 'TextBlock', text: 'Answer by 2026-01-15 12:59 UTC', wrap: true, isSubtle: true },
      { type: 'ActionSet', actions: options.slice(0, 6).map(open) },
      { type: 'ActionSet', actions: options.slice(6).map(open) },
      {
        type: 'FactSet',
        facts: [
          { title: 'Channel', value: 'Infra' },
          { title: 'Priority', value: '6' },
        ],
      },
    ]);
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open', url: item.links.message },
      { type: 'Action.OpenUrl', title: 'Mark as read', url: item.links.read },
    ]);
  });

  it('a question in a MessageCard: answer links in a section of their own, potentialAction unchanged (≤ 4)', () => {
    const item = questionItem({ options: ['yes', 'no'] });
    const card = messageCard(item, Date.UTC(2026, 0, 15, 12));
    expect(card.sections).toEqual([
      { text: `[yes](${answerLink('yes')}) · [no](${answerLink('no')})\n\nAnswer by 2026-01-15 12:59 UTC` },
      {
        facts: [
          { name: 'Channel', value: 'Infra' },
          { name: 'Priority', value: '6' },
        ],
      },
    ]);
    expect(card.potentialAction).toHaveLength(2);
    const multi = messageCard(questionItem({ type: 'multi', options: ['a', 'b'] }));
    expect((multi.sections as { text?: string }[])[0]!.text).toBe(
      `[Answer in Belfry](${item.links.message})\n\nOptions: a · b (one or more)\n\nAnswer by 2026-01-15 12:59 UTC`,
    );
  });

  describeHttpErrorClasses({
    adapter: teamsAdapter,
    target: (base) => ({ config: { webhookUrl: `${base}${PATH}` } }),
    path: '/workflows/',
    secrets: ['teamsSigSecret'],
    permanent: {
      status: 404,
      body: { error: { code: 'WorkflowNotFound', message: 'The workflow was not found.' } },
      text: 'HTTP 404: The workflow was not found. (WorkflowNotFound)',
    },
  });
});

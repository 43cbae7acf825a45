import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { DISCORD_ANSWERS_MAX, discordAdapter } from './discord';

const PATH = '/api/webhooks/1234567890/discordWebhookTokenSecret';

describe('discord adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', PATH, { status: 204, body: '' });
  });
  afterAll(() => fake.close());

  it('executes the webhook with one embed, mentions disabled and the priority colour', async () => {
    const item = sampleItem({ priority: 9, message: '@everyone disk full' });
    await discordAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(PATH);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    const body = req.json() as Record<string, unknown>;
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.embeds).toEqual([
      {
        title: 'Disk almost full',
        description: `@everyone disk full\n[Mark as read](${item.links.read})`,
        url: item.links.message,
        color: 0xe74c3c,
        fields: [
          { name: 'Channel', value: 'Infra', inline: true },
          { name: 'Priority', value: '9', inline: true },
        ],
        timestamp: '2026-01-15T11:59:00.000Z',
      },
    ]);
  });

  it('colours orange from 5, grey below, and keeps title ≤ 256 and description ≤ 4096', async () => {
    const colour = async (priority: number, over = {}) => {
      await discordAdapter.send(
        testIo(),
        { webhookUrl: `${fake.url}${PATH}` },
        sampleItem({ priority, ...over }),
      );
      return (
        fake.requests.at(-1)!.json() as { embeds: { color: number; title: string; description: string }[] }
      ).embeds[0]!;
    };
    expect((await colour(5)).color).toBe(0xe67e22);
    expect((await colour(4)).color).toBe(0x95a5a6);
    const long = await colour(1, { title: 't'.repeat(300), message: 'm'.repeat(5000) });
    expect([...long.title].length).toBe(256);
    expect([...long.description].length).toBeLessThanOrEqual(4096);
    expect(long.description).toMatch(
      /\[Mark as read\]\(https:\/\/belfry\.example\.test\/m\/read\?token=signed\.read\.token\)$/,
    );
  });

  const embedOf = async (item: ReturnType<typeof questionItem>) => {
    await discordAdapter.send(testIo(), { webhookUrl: `${fake.url}${PATH}` }, item);
    return (fake.requests.at(-1)!.json() as { embeds: { description: string; title: string }[] }).embeds[0]!;
  };

  it('a choice question: Markdown answer links (webhooks cannot send buttons) and the deadline before Mark as read', async () => {
    const item = questionItem({ options: ['yes', '[no]'] });
    const embed = await embedOf(item);
    expect(embed.description).toBe(
      `Restart db-07 now?\n\n[yes](${answerLink('yes')}) · [\\[no\\]](${answerLink('[no]')})\n` +
        `Answer by 2026-01-15 12:59 UTC\n[Mark as read](${item.links.read})`,
    );
  });

  it(`answer links over ${DISCORD_ANSWERS_MAX} characters: one "Answer in Belfry" link and the options; description ≤ 4096`, async () => {
    const options = Array.from({ length: 10 }, (_, i) => `${i}${'x'.repeat(99)}`);
    const item = questionItem({ options }, { message: 'm'.repeat(5000) });
    const embed = await embedOf(item);
    expect([...embed.description].length).toBeLessThanOrEqual(4096);
    expect(embed.description).not.toContain('/a/answer');
    expect(embed.description).toMatch(
      /m…\n\n\[Answer in Belfry\]\(https:\/\/belfry\.example\.test\/inbox\?channel=7#message-42\)\nOptions: 0x{99} · 1x{99}.* · 9x{99}\nAnswer by 2026-01-15 12:59 UTC\n\[Mark as read\]/,
    );
  });

  describeHttpErrorClasses({
    adapter: discordAdapter,
    target: (base) => ({ config: { webhookUrl: `${base}${PATH}` } }),
    path: PATH,
    secrets: ['discordWebhookTokenSecret'],
    permanent: {
      status: 404,
      body: { message: 'Unknown Webhook', code: 10015 },
      text: 'HTTP 404: Unknown Webhook (10015)',
    },
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { TELEGRAM_TEXT_MAX, telegramAdapter } from './telegram';

const TOKEN = '123456:ABC-telegramBotTokenSecret';

describe('telegram adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', `/bot${TOKEN}/sendMessage`, (req) => {
      const b = req.json() as { chat_id?: unknown; text?: string };
      // As the Bot API does: chat_id and a text of 1-4096 characters after entity parsing are required.
      const parsed = (b.text ?? '').replace(/<[^>]+>/g, '').replace(/&(lt|gt|amp|quot);/g, '_');
      if (b.chat_id === undefined || !parsed || [...parsed].length > TELEGRAM_TEXT_MAX)
        return {
          status: 400,
          body: { ok: false, error_code: 400, description: 'Bad Request: message is too long' },
        };
      return { status: 200, body: { ok: true, result: { message_id: 1 } } };
    });
  });
  afterAll(() => fake.close());
  const io = () => testIo({ apiUrls: { telegram: fake.url } });

  it('calls sendMessage at /bot{token}/ with escaped HTML and the link keyboard', async () => {
    const item = sampleItem({ title: 'A <b>&', message: 'x < y & "z"' });
    await telegramAdapter.send(io(), { botToken: TOKEN, chatId: -1001234567890 }, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.json()).toEqual({
      chat_id: -1001234567890,
      parse_mode: 'HTML',
      text: '<b>A &lt;b&gt;&amp;</b>\nx &lt; y &amp; &quot;z&quot;',
      disable_notification: false,
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Open', url: item.links.message },
            { text: 'Mark read', url: item.links.read },
          ],
        ],
      },
    });
  });

  it('is silent below priority 4 and keeps the text within 4096 characters', async () => {
    await telegramAdapter.send(
      io(),
      { botToken: TOKEN, chatId: '@ops' },
      sampleItem({ priority: 3, message: 'm'.repeat(10_000) }),
    );
    const body = fake.requests.at(-1)!.json() as { disable_notification: boolean; chat_id: string };
    expect(body).toMatchObject({ disable_notification: true, chat_id: '@ops' });
  });

  it('a choice question: one keyboard row per option above Open / Mark read, the deadline in italics', async () => {
    const item = questionItem({ options: ['yes', 'a <b>'] });
    await telegramAdapter.send(io(), { botToken: TOKEN, chatId: 5 }, item);
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(req.json()).toEqual({
      chat_id: 5,
      parse_mode: 'HTML',
      text: '<b>Question</b>\nRestart db-07 now?\n\n<i>Answer by 2026-01-15 12:59 UTC</i>',
      disable_notification: false,
      reply_markup: {
        inline_keyboard: [
          [{ text: 'yes', url: answerLink('yes') }],
          [{ text: 'a <b>', url: answerLink('a <b>') }],
          [
            { text: 'Open', url: item.links.message },
            { text: 'Mark read', url: item.links.read },
          ],
        ],
      },
    });
  });

  it('a form question: "Answer in Belfry" and the fields (escaped), the text still within 4096 characters', async () => {
    const fields = [{ name: 'n', label: 'Size <GB>', type: 'number', required: true }];
    const item = questionItem({ type: 'form', options: [], fields }, { message: 'm'.repeat(10_000) });
    await telegramAdapter.send(io(), { botToken: TOKEN, chatId: 5 }, item);
    const req = fake.requests.at(-1)!;
    const body = req.json() as { text: string; reply_markup: { inline_keyboard: unknown[][] } };
    expect(body.text).toMatch(/m…\n\n<i>Form: Size &lt;GB&gt;\*\nAnswer by 2026-01-15 12:59 UTC<\/i>$/);
    expect(body.reply_markup.inline_keyboard[0]).toEqual([
      { text: 'Answer in Belfry', url: item.links.message },
    ]);
    expect(body.reply_markup.inline_keyboard).toHaveLength(2);
  });

  it('masks the bot token when a reply echoes the request path', async () => {
    const f2 = await startFakeHttp();
    try {
      f2.on('POST', '/', (req) => ({ status: 404, body: `Cannot POST ${req.path}` }));
      const sent = telegramAdapter.send(
        testIo({ apiUrls: { telegram: f2.url } }),
        { botToken: TOKEN, chatId: 1 },
        sampleItem(),
      );
      await expect(sent).rejects.toMatchObject({
        retryable: false,
        message: 'HTTP 404: Cannot POST ********',
      });
    } finally {
      await f2.close();
    }
  });

  describeHttpErrorClasses({
    adapter: telegramAdapter,
    target: (base) => ({ config: { botToken: TOKEN, chatId: 5 }, apiUrls: { telegram: base } }),
    path: `/bot${TOKEN}/sendMessage`,
    secrets: [TOKEN, 'telegramBotTokenSecret'],
    permanent: {
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      text: 'HTTP 403: Forbidden: bot was blocked by the user',
    },
  });
});

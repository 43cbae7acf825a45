import { afterAll, beforeAll, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { type FakeHttp, startFakeHttp } from '../helpers/fake-http';
import { startTestServer, type TestServer } from '../helpers/test-server';

// End to end through the outbox and the real Slack adapter (no override) to a loopback sink: a stored
// message's `service::question` extras reach the adapter, and the server's clock decides whether the
// question is still open when the re-delivery goes out. The extras are written as the questions feature
// writes them (wire rules §7.1).
let t: TestServer;
let sink: FakeHttp;
let dev: string;

beforeAll(async () => {
  t = await startTestServer();
  sink = await startFakeHttp();
  sink.on('POST', '/slack', { status: 200, body: 'ok' });
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
  await sink.close();
});

function question(expiresAt: number) {
  const link = (o: string) =>
    `${t.server.ctx.publicUrl()}/a/answer?token=${Buffer.from(o).toString('base64url')}.sig`;
  return {
    'service::question': {
      id: 1,
      type: 'choice',
      options: ['yes', 'no'],
      defaultOption: 'no',
      multiSelect: false,
      fields: [],
      format: 'text',
      expiresAt: new Date(expiresAt).toISOString(),
      links: { yes: link('yes'), no: link('no') },
    },
  };
}

type SlackBody = {
  blocks: { type: string; text?: { text: string }; elements?: Record<string, unknown>[] }[];
};

it('a re-delivered question reaches Slack with one answer button per option and its deadline', async () => {
  const ch = await makeChannel(t, dev, {
    deliveryConfig: { slack: { webhookUrl: `${sink.url}/slack`, delaySec: 0 } },
  });
  const extras = question(t.clock.now() + 3_600_000);
  await sendMessage(t, ch.token, { title: 'Question', message: 'Restart?', extras });
  await t.server.scheduler.tick();
  const body = sink.requests.at(-1)!.json() as SlackBody;
  expect(body.blocks.map((b) => b.type)).toEqual([
    'header',
    'section',
    'section',
    'actions',
    'context',
    'actions',
  ]);
  expect(body.blocks[2]!.text!.text).toBe(
    `Answer by ${new Date(t.clock.now() + 3_600_000).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  );
  const links = extras['service::question'].links;
  expect(body.blocks[3]!.elements).toEqual([
    { type: 'button', text: { type: 'plain_text', text: 'yes' }, url: links.yes },
    { type: 'button', text: { type: 'plain_text', text: 'no' }, url: links.no, style: 'primary' },
  ]);
});

it('a question whose deadline passed before its re-delivery goes out: no answer buttons, "Closed at"', async () => {
  const ch = await makeChannel(t, dev, {
    deliveryConfig: { slack: { webhookUrl: `${sink.url}/slack`, delaySec: 120 } },
  });
  const before = sink.requests.length;
  await sendMessage(t, ch.token, {
    title: 'Question',
    message: 'Restart?',
    extras: question(t.clock.now() + 60_000),
  });
  t.clock.advance(120_000);
  await t.server.scheduler.tick();
  expect(sink.requests).toHaveLength(before + 1);
  const body = sink.requests.at(-1)!.json() as SlackBody;
  expect(body.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context', 'actions']);
  expect(body.blocks[2]!.text!.text).toMatch(/^Options: yes · no\nClosed at \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
});

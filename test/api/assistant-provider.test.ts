import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProviderTimeout } from '../../server/features/assistant/provider';
import { apiToken, deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { type FakeAssistant, startFakeAssistant } from '../helpers/fake-assistant';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { downHeartbeat, HOUR } from './assistant-helpers';

/** The assistant with an OpenAI-compatible provider: a loopback fake that checks what a real one would. */
let t: TestServer;
let fake: FakeAssistant;
const KEY = 'sk-fake-provider-key';

beforeAll(async () => {
  fake = await startFakeAssistant({ model: 'llama-test', key: KEY });
  t = await startTestServer({
    config: { assistantUrl: fake.url, assistantModel: 'llama-test', assistantKey: KEY },
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function user() {
  const u = makeUser(t);
  const device = await deviceToken(t, u);
  return { ...u, device: device.token };
}

describe('chat through the provider', () => {
  it('posts {model, [system, last 20], temperature 0.2} with the bearer key and stores the reply', async () => {
    const u = await user();
    fake.answer({ content: 'All quiet on your 1 channel.' });
    const before = fake.requests.length;
    const res = await t.request('POST', '/assistant/chat', {
      token: u.device,
      json: { message: 'how are things?' },
    });
    expect(res.body).toEqual({
      threadId: expect.any(Number),
      reply: 'All quiet on your 1 channel.',
      provider: 'llama-test',
    });
    const sent = fake.requests[before]!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body.model).toBe('llama-test');
    expect(sent.body.temperature).toBe(0.2);
    expect(sent.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent.body.messages[1]!.content).toBe('how are things?');
    const threadId = res.body.threadId as number;
    // Ten more turns: the thread holds 22 messages, the provider gets the system prompt and the last 20.
    for (let i = 1; i <= 10; i++) {
      fake.answer({ content: `answer ${i}` });
      expect(
        (
          await t.request('POST', '/assistant/chat', {
            token: u.device,
            json: { threadId, message: `q${i}` },
          })
        ).status,
      ).toBe(200);
    }
    const last = fake.requests.at(-1)!.body.messages;
    expect(last).toHaveLength(21);
    expect(last[0]!.role).toBe('system');
    expect(last.slice(1, 3).map((m) => m.content)).toEqual(['All quiet on your 1 channel.', 'q1']);
    expect(last.at(-1)).toEqual({ role: 'user', content: 'q10' });
    const stored = await t.request('GET', `/assistant/threads/${threadId}/messages`, { token: u.device });
    expect(stored.body).toHaveLength(22);
    expect(stored.body.at(-1)).toMatchObject({ role: 'assistant', content: 'answer 10' });
    expect(fake.refused).toEqual([]);
  });

  it('the system prompt holds counts, names and statuses, never tokens, secrets, bodies, titles or addresses', async () => {
    const u = await user();
    const ch = await makeChannel(t, u.device, {
      name: 'payments',
      deliveryConfig: { webhook: { url: 'https://hooks.example/zz-hook-secret-path', delaySec: 86_400 } },
    });
    await sendMessage(t, ch.token, { title: 'TITLE-SECRET-4411', message: 'BODY-SECRET-9876 card 4242' });
    const hb = await downHeartbeat(t, u.device, ch.id, 'ledger backup', 2 * HOUR);
    const monitor = await t.request('POST', '/http-monitor', {
      token: u.device,
      json: {
        appid: ch.id,
        name: 'checkout api',
        url: 'https://checkout.example/health?token=URL-SECRET-555',
        headers: { Authorization: 'Bearer HEADER-SECRET-777' },
        paused: true,
      },
    });
    expect(monitor.status).toBe(200);
    const share = await t.request('POST', `/application/${ch.id}/share`, {
      token: u.device,
      json: { email: 'friend.leak@example.org', permission: 'view' },
    });
    const api = await apiToken(t, { token: u.device });
    fake.answer({ content: 'ledger backup is down.' });
    const before = fake.requests.length;
    const res = await t.request('POST', '/assistant/chat', {
      token: u.device,
      json: { message: 'what is wrong?' },
    });
    expect(res.status).toBe(200);
    const raw = fake.requests[before]!.raw;
    const system = fake.requests[before]!.body.messages[0]!.content;
    // What it should know.
    for (const known of [
      'payments',
      'ledger backup',
      'checkout api',
      '"status":"down"',
      'ledger backup is down',
    ])
      expect(system).toContain(known);
    // What it must never see.
    const secrets = [
      ch.token,
      hb.token,
      u.device,
      api.token,
      u.email,
      u.password,
      'friend.leak@example.org',
      'TITLE-SECRET-4411',
      'BODY-SECRET-9876',
      'zz-hook-secret-path',
      'URL-SECRET-555',
      'HEADER-SECRET-777',
      'checkout.example',
    ];
    expect(share.status).toBe(200);
    for (const s of secrets) expect(raw, s).not.toContain(s);
  });

  it('a failing provider: 502 assistant provider failed, the question stays stored without a reply', async () => {
    const u = await user();
    fake.answer({ status: 500, body: { error: { message: 'model overloaded' } } });
    const res = await t.request('POST', '/assistant/chat', { token: u.device, json: { message: 'hello?' } });
    expect(res.status).toBe(502);
    expect(res.body.errorDescription).toMatch(/^assistant provider failed: HTTP 500/);
    const threads = await t.request('GET', '/assistant/threads', { token: u.device });
    expect(threads.body).toHaveLength(1);
    const msgs = await t.request('GET', `/assistant/threads/${threads.body[0].id}/messages`, {
      token: u.device,
    });
    expect(msgs.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'hello?'],
    ]);
    // An answer without choices is a failure too.
    fake.answer({ status: 200, body: { object: 'chat.completion', choices: [] } });
    const empty = await t.request('POST', '/assistant/chat', { token: u.device, json: { message: 'again' } });
    expect([empty.status, empty.body.errorDescription]).toEqual([
      502,
      'assistant provider failed: the answer has no choices[0].message.content',
    ]);
  });

  it('a provider that does not answer in time: 502 naming the timeout', async () => {
    const u = await user();
    setProviderTimeout(t.server.ctx, 300);
    try {
      fake.answer({ hang: true });
      const res = await t.request('POST', '/assistant/chat', { token: u.device, json: { message: 'slow?' } });
      expect([res.status, res.body.errorDescription]).toEqual([
        502,
        'assistant provider failed: no answer within 300 ms',
      ]);
    } finally {
      setProviderTimeout(t.server.ctx, 60_000);
    }
  });
});

describe('insights polish', () => {
  async function downUser() {
    const u = await user();
    const ch = await makeChannel(t, u.device, { name: 'infra' });
    await downHeartbeat(t, u.device, ch.id, 'db backup', 3 * HOUR);
    return u;
  }

  it('polish=1 rewrites title and detail through the provider; links and kinds stay', async () => {
    const u = await downUser();
    fake.answer((r) => {
      const items = JSON.parse(r.body.messages[1]!.content).items as { n: number }[];
      return {
        content: `\`\`\`json\n${JSON.stringify({ items: items.map((i) => ({ n: i.n, title: 'Backup offline', detail: 'The db backup heartbeat has been silent for 3 hours.' })) })}\n\`\`\``,
      };
    });
    const plain = await t.request('GET', '/assistant/insights', { token: u.device });
    expect(plain.body).toMatchObject({ provider: 'local', polished: false, model: 'llama-test' });
    const res = await t.request('GET', '/assistant/insights?polish=1', { token: u.device });
    expect(res.body).toMatchObject({ provider: 'llama-test', polished: true });
    expect(res.body.items).toEqual([
      {
        kind: 'source_down',
        title: 'Backup offline',
        detail: 'The db backup heartbeat has been silent for 3 hours.',
        severity: 'critical',
        links: [expect.objectContaining({ label: 'db backup', kind: 'heartbeat' })],
      },
    ]);
  });

  it('a provider that fails or answers nonsense leaves the items unpolished (200, polished false)', async () => {
    const u = await downUser();
    fake.answer({ content: 'I would rather not.' });
    const res = await t.request('GET', '/assistant/insights?polish=1', { token: u.device });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ provider: 'local', polished: false });
    expect(res.body.items[0].title).toBe('db backup is down');
    fake.answer({ status: 503 });
    const failed = await t.request('GET', '/assistant/insights?polish=1&refresh=1', { token: u.device });
    expect([failed.status, failed.body.polished, failed.body.items[0].title]).toEqual([
      200,
      false,
      'db backup is down',
    ]);
  });
});

describe('provider settings', () => {
  it('without a key no authorization header is sent; a wrong key is a 502', async () => {
    const open = await startFakeAssistant({ model: 'open-model' });
    const t2 = await startTestServer({
      config: { assistantUrl: `${open.url}/`, assistantModel: 'open-model' },
    });
    const wrong = await startTestServer({
      config: { assistantUrl: fake.url, assistantModel: 'llama-test', assistantKey: 'sk-wrong' },
    });
    try {
      const dev = (await deviceToken(t2)).token;
      const res = await t2.request('POST', '/assistant/chat', { token: dev, json: { message: 'hi' } });
      expect(res.body).toMatchObject({ reply: 'fake reply', provider: 'open-model' });
      expect(open.requests[0]!.headers.authorization).toBeUndefined();
      expect(open.refused).toEqual([]);
      const dev2 = (await deviceToken(wrong)).token;
      const refused = fake.refused.length;
      const bad = await wrong.request('POST', '/assistant/chat', { token: dev2, json: { message: 'hi' } });
      expect([bad.status, bad.body.errorDescription]).toEqual([
        502,
        expect.stringMatching(/^assistant provider failed: HTTP 401/),
      ]);
      expect(fake.refused.length).toBe(refused + 1);
    } finally {
      await t2.close();
      await wrong.close();
      await open.close();
    }
  });
});

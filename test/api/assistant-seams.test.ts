import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import {
  type ChatRequest,
  type FakeAnswer,
  type FakeAssistant,
  startFakeAssistant,
} from '../helpers/fake-assistant';
import { type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { inboxUser, ok, sendMail } from './email-inboxes-helpers';

/**
 * The other families' assisted endpoints with the assistant's provider set (docs/assistant.md): each asks
 * it for strict JSON, checks the answer, and falls back to its local rules when the answer is unusable or
 * the provider fails (never a 5xx). Without a provider their own tests cover the local rules.
 */
let t: TestServer;
let fake: FakeAssistant;
let site: FakeTarget;
let dev: string;

/** What the fake answers, by the task its system prompt names; `override` replaces one task's answer. */
const override = new Map<string, FakeAnswer>();
const ANSWERS: [RegExp, string, unknown][] = [
  [/CSS selectors/, 'selectors', { selectors: ['#price-now', '.made-up-selector', 'div:nth-child('] }],
  [
    /curl command line/,
    'curl',
    { curl: `curl -X POST https://api.example/v1/orders -H 'Content-Type: application/json' -d '{"qty":1}'` },
  ],
  [/Playwright browser check/, 'browser', { step: { action: 'click', selector: '#checkout-button' } }],
  [
    /webhook router/,
    'router',
    {
      name: 'Pushes to main',
      match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }],
      title: 'Push to {{repository.name}}',
      message: '{{head_commit.message}}',
    },
  ],
  [
    /email inbox/,
    'inbox',
    { name: 'Invoices', match: { subject: 'invoice' }, title: 'Invoice: {{subject}}' },
  ],
  [
    /JavaScript error/,
    'analysis',
    {
      summary: 'The product list rendered before its data arrived.',
      likelyCause: 'A race.',
      suggestions: ['Guard it.'],
    },
  ],
];

function answerFor(r: ChatRequest): FakeAnswer {
  const system = r.body.messages[0]!.content;
  for (const [re, task, json] of ANSWERS)
    if (re.test(system))
      return override.get(task) ?? { content: `Here you go:\n\`\`\`json\n${JSON.stringify(json)}\n\`\`\`` };
  return { status: 400, body: { error: { message: `unexpected task: ${system.slice(0, 80)}` } } };
}

const lastTask = (re: RegExp) => fake.requests.filter((r) => re.test(r.body.messages[0]!.content)).at(-1);

beforeAll(async () => {
  fake = await startFakeAssistant({ model: 'seam-model', key: 'sk-seams' });
  fake.answer(answerFor);
  site = await startTarget((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      '<html><body><div class="box"><span id="price-now">1,299 EUR</span></div><p class="x1y2z3">1,299 EUR</p></body></html>',
    );
  });
  t = await startTestServer({
    config: {
      assistantUrl: fake.url,
      assistantModel: 'seam-model',
      assistantKey: 'sk-seams',
      smtpListen: '127.0.0.1:0',
    },
  });
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
  await fake.close();
  await site.close();
});

const post = (path: string, json: unknown, token = dev) => t.request('POST', path, { token, json });

describe('monitors', () => {
  it('suggest-selector: the provider’s selectors that hold on the page come first; the others are dropped', async () => {
    const res = await post('/content-monitor/suggest-selector', { url: `${site.url}/shop`, text: '1,299' });
    expect(res.status).toBe(200);
    const selectors = res.body.candidates.map((c: { selector: string }) => c.selector);
    expect(selectors[0]).toBe('#price-now');
    expect(selectors).not.toContain('.made-up-selector');
    expect(selectors).not.toContain('div:nth-child(');
    expect(res.body.candidates[0]).toEqual({ selector: '#price-now', text: '1,299 EUR', count: 1 });
    const asked = lastTask(/CSS selectors/)!;
    expect(asked.body.messages[1]!.content).toContain('1,299');
    expect(fake.refused).toEqual([]);
  });

  it('workflow build-step {description}: the provider’s curl line, parsed like a pasted one', async () => {
    const res = await post('/workflow-monitor/build-step', { description: 'create an order of one item' });
    expect(res.status).toBe(200);
    expect(res.body.step).toMatchObject({
      name: 'POST api.example/v1/orders',
      method: 'POST',
      url: 'https://api.example/v1/orders',
      body: '{"qty":1}',
    });
    // An answer that is not a curl line: the local rule (the description's first URL as a GET).
    override.set('curl', { content: '{"curl": "rm -rf /"}' });
    try {
      const local = await post('/workflow-monitor/build-step', {
        description: 'check https://status.example/health please',
      });
      expect(local.body.step).toMatchObject({ method: 'GET', url: 'https://status.example/health' });
    } finally {
      override.delete('curl');
    }
  });

  it('browser build-step: the provider’s step when it validates; a failing provider: the local rules', async () => {
    const res = await post('/browser-workflow/build-step', { description: 'go to checkout' });
    expect(res.status).toBe(200);
    expect(res.body.step).toMatchObject({ action: 'click', selector: '#checkout-button' });
    override.set('browser', { status: 500 });
    try {
      const local = await post('/browser-workflow/build-step', { description: 'click "Sign in"' });
      expect(local.status).toBe(200);
      expect(local.body.step).toMatchObject({ action: 'click', selector: 'text="Sign in"' });
    } finally {
      override.delete('browser');
    }
    // A step that fails validation (no selector for a click) is not taken either.
    override.set('browser', { content: '{"step": {"action": "click"}}' });
    try {
      const local = await post('/browser-workflow/build-step', { description: 'press Enter' });
      expect(local.body.step).toMatchObject({ action: 'press', value: 'Enter' });
    } finally {
      override.delete('browser');
    }
  });
});

describe('router and inbox drafts', () => {
  it('router from-event: name, match and templates from the provider, a condition must hold on the event', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const router = (await t.request('GET', '/webhook-router', { token: d })).body as { token: string };
    const body = {
      ref: 'refs/heads/main',
      repository: { name: 'belfry' },
      head_commit: { message: 'fix' },
      action: 'pushed',
    };
    const ev = await t.request('POST', `/router/${router.token}/github`, { json: body });
    expect(ev.status).toBe(200);
    const res = await post(`/webhook-router/rule/from-event/${ev.body.id}`, {}, d);
    expect(res.body.rule).toMatchObject({
      id: null,
      name: 'Pushes to main',
      pathPattern: '/github',
      method: 'POST',
      match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }],
      title: 'Push to {{repository.name}}',
      message: '{{head_commit.message}}',
    });
    // A condition that does not hold on the event: the provider's match is not taken, the local one is.
    override.set('router', {
      content: JSON.stringify({ match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/dev' }] }),
    });
    try {
      const local = await post(`/webhook-router/rule/from-event/${ev.body.id}`, {}, d);
      expect([local.status, local.body.rule.match, local.body.rule.name]).toEqual([
        200,
        [{ path: '$.action', op: 'equals', value: 'pushed' }],
        'POST /github (action pushed)',
      ]);
    } finally {
      override.delete('router');
    }
  });

  it('inbox from-event: the provider’s pattern when it matches the mail; nonsense: the local draft', async () => {
    const u = await inboxUser(t);
    const tok = u.device.token;
    await sendMail(t, {
      from: 'billing@shop.example',
      to: u.inbox.address,
      subject: 'Your invoice 1234',
      text: 'secret body',
    });
    const events = ok<{ events: { id: number }[] }>(
      await t.request('GET', `/email-inbox/event?inboxId=${u.inbox.id}`, { token: tok }),
      'events',
    );
    const eid = events.events[0]!.id;
    const res = await post(`/email-inbox/rule/from-event/${eid}`, {}, tok);
    expect(res.body.rule).toMatchObject({
      name: 'Invoices',
      match: { subject: 'invoice' },
      title: 'Invoice: {{subject}}',
      action: 'message',
    });
    expect(lastTask(/email inbox/)!.raw).not.toContain('secret body');
    override.set('inbox', { content: '{"match": {"subject": "/(a+)+$/"}, "name": 42}' });
    try {
      const local = await post(`/email-inbox/rule/from-event/${eid}`, {}, tok);
      expect(local.body.rule).toMatchObject({
        name: 'Your invoice 1234',
        match: { from: 'billing@shop.example', subject: '/^Your invoice \\d+$/i' },
        title: '{{subject}}',
      });
    } finally {
      override.delete('inbox');
    }
  });
});

describe('web-script analysis', () => {
  it('POST …/analyze uses the provider and names its model; a failed provider gives the local analysis', async () => {
    const appid = (await makeChannel(t, dev)).id;
    const s = (await post('/web-script', { name: 'shop', appid })).body as { id: number; token: string };
    const event = {
      type: 'error',
      message: "Uncaught TypeError: Cannot read properties of undefined (reading 'map')",
      stack: 'TypeError: x\n    at ProductList (https://shop.example/static/js/main.js:2:10)',
      url: 'https://shop.example/list?session=SESSION-SECRET-42',
    };
    const sent = await t.request('POST', `/script/${s.token}`, {
      body: JSON.stringify({ events: [event], flushReason: 'error' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(sent.status).toBe(200);
    const issue = (await t.request('GET', `/web-script/${s.id}/issues`, { token: dev })).body[0] as {
      id: number;
    };
    const base = `/web-script/${s.id}/issues/${issue.id}`;
    const a = await post(`${base}/analyze`, {});
    expect(a.body).toMatchObject({
      summary: 'The product list rendered before its data arrived.',
      likelyCause: 'A race.',
      suggestions: ['Guard it.'],
      provider: 'seam-model',
    });
    expect(lastTask(/JavaScript error/)!.raw).not.toContain('SESSION-SECRET-42');
    override.set('analysis', { status: 503 });
    try {
      const local = await post(`${base}/analyze`, { force: true });
      expect(local.status).toBe(200);
      expect(local.body.provider).toBe('local');
      expect(local.body.summary).toContain('"map"');
    } finally {
      override.delete('analysis');
    }
  });
});

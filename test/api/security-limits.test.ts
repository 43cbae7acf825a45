import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDeliveryConfig, SECRET_MASK } from '../../server/features/channels/delivery-config';
import { sealStoredDeliverySecrets } from '../../server/features/channels/service';
import { DEFAULT_PLANS } from '../../server/lib/limits';
import { apiToken, deviceToken, makeChannel, makeUser, sudo } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 21: per-plan caps on configuration objects (item 8), masked delivery secrets (item 9), sealed
// at rest (item 3), prototype keys in deliveryConfig (item 11).

let t: TestServer;
let admin: { token: string };
beforeAll(async () => {
  t = await startTestServer();
  admin = await deviceToken(t);
  await sudo(t, admin);
});
afterAll(() => t.close());

const FREE = DEFAULT_PLANS.free;

async function freeUser() {
  const u = makeUser(t);
  return { ...u, dev: (await deviceToken(t, u)).token };
}

function planLimit(what: string) {
  return { error: 'Forbidden', errorCode: 403, errorDescription: `plan limit reached: ${what}` };
}

async function raisePlan(userId: number, plan: 'free' | 'pro' | 'business') {
  const res = await t.request('POST', `/user/${userId}/plan`, { token: admin.token, json: { plan } });
  expect(res.status).toBe(200);
}

/** Calls `create(i)` until it answers something else than 200; returns how many succeeded and the refusal. */
async function fillUp(create: (i: number) => Promise<{ status: number; body: any }>, max: number) {
  for (let i = 0; i < max; i++) {
    const res = await create(i);
    if (res.status !== 200) return { created: i, refusal: res };
  }
  return { created: max, refusal: null };
}

describe('per-plan caps', () => {
  it('POST /application answers 403 plan limit at the free plan channel cap until an admin raises the plan', async () => {
    const u = await freeUser();
    const create = () => t.request('POST', '/application', { token: u.dev, json: { name: 'c' } });
    const { created, refusal } = await fillUp(create, FREE.channels + 1);
    expect(created).toBe(FREE.channels);
    expect(refusal?.status).toBe(403);
    expect(refusal?.body).toEqual(planLimit(`at most ${FREE.channels} channels on the free plan`));
    await raisePlan(u.id, 'pro');
    expect((await create()).status).toBe(200);
  });

  it('POST /application/{id}/webhook answers 403 plan limit at the free plan webhook cap until an admin raises the plan', async () => {
    const u = await freeUser();
    const c = await makeChannel(t, u.dev);
    const create = () =>
      t.request('POST', `/application/${c.id}/webhook`, { token: u.dev, json: { name: 'w' } });
    const { created, refusal } = await fillUp(create, FREE.webhooks + 1);
    expect(created).toBe(FREE.webhooks);
    expect(refusal?.body).toEqual(planLimit(`at most ${FREE.webhooks} public webhooks on the free plan`));
    await raisePlan(u.id, 'pro');
    expect((await create()).status).toBe(200);
  });

  it('POST /application/{id}/token answers 403 plan limit at the free plan key cap until an admin raises the plan', async () => {
    const u = await freeUser();
    const c = await makeChannel(t, u.dev);
    const create = () =>
      t.request('POST', `/application/${c.id}/token`, { token: u.dev, json: { name: 'k' } });
    const { created, refusal } = await fillUp(create, FREE.channelKeys + 1);
    expect(created).toBe(FREE.channelKeys);
    expect(refusal?.body).toEqual(planLimit(`at most ${FREE.channelKeys} channel keys on the free plan`));
    await raisePlan(u.id, 'pro');
    expect((await create()).status).toBe(200);
  });

  it('POST /application/{id}/share answers 403 plan limit at the free plan share cap until an admin raises the plan', async () => {
    const u = await freeUser();
    const c = await makeChannel(t, u.dev);
    const create = (i: number) =>
      t.request('POST', `/application/${c.id}/share`, {
        token: u.dev,
        json: { email: `friend${i}-${u.id}@example.com`, permission: 'view' },
      });
    const { created, refusal } = await fillUp(create, FREE.shares + 1);
    expect(created).toBe(FREE.shares);
    expect(refusal?.body).toEqual(planLimit(`at most ${FREE.shares} shares on the free plan`));
    await raisePlan(u.id, 'pro');
    expect((await create(FREE.shares + 1)).status).toBe(200);
  });

  it('POST /api-token answers 403 plan limit at the free plan API token cap until an admin raises the plan', async () => {
    const u = await freeUser();
    const create = () =>
      t.request('POST', '/api-token', { token: u.dev, json: { name: 'm', access: 'read' } });
    const { created, refusal } = await fillUp(create, FREE.apiTokens + 1);
    expect(created).toBe(FREE.apiTokens);
    expect(refusal?.body).toEqual(planLimit(`at most ${FREE.apiTokens} API tokens on the free plan`));
    await raisePlan(u.id, 'pro');
    expect((await create()).status).toBe(200);
  });

  it('POST and PUT /application answer 403 plan limit beyond the free plan configuration bytes, and nothing is stored', async () => {
    const u = await freeUser();
    // ~40 KB of header values per channel: the byte cap comes long before the channel cap.
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, 'v'.repeat(2000)]));
    const big = { webhook: { url: 'https://hooks.example/in', headers } };
    const create = () =>
      t.request('POST', '/application', { token: u.dev, json: { name: 'big', deliveryConfig: big } });
    const { created, refusal } = await fillUp(create, FREE.channels);
    expect(created).toBeGreaterThan(5);
    expect(created).toBeLessThan(FREE.channels);
    expect(refusal?.body).toEqual(
      planLimit(`at most ${FREE.configBytes} bytes of configuration on the free plan`),
    );
    const own = (await t.request('GET', '/application', { token: u.dev })).body as { id: number }[];
    expect(own).toHaveLength(created);
    // Growing an existing object is capped too; shrinking is always allowed.
    const small = await t.request('POST', '/application', { token: u.dev, json: { name: 's' } });
    expect(small.status).toBe(200);
    const grow = await t.request('PUT', `/application/${small.body.id}`, {
      token: u.dev,
      json: { description: 'd'.repeat(10_000), deliveryConfig: big },
    });
    expect(grow.status).toBe(403);
    const shrink = await t.request('PUT', `/application/${own[0]!.id}`, {
      token: u.dev,
      json: { deliveryConfig: {} },
    });
    expect(shrink.status).toBe(200);
    const breakdown = await t.request('GET', '/user/quota-breakdown', { token: u.dev });
    expect(breakdown.body.caps.configBytes.limit).toBe(FREE.configBytes);
    expect(breakdown.body.caps.configBytes.used).toBeLessThanOrEqual(FREE.configBytes);
    await raisePlan(u.id, 'pro');
    for (let i = 0; i < 10; i++) expect((await create()).status).toBe(200);
    // Back on free, now above its byte cap: trimming is allowed even while still above, growing is not.
    await raisePlan(u.id, 'free');
    const trim = await t.request('PUT', `/application/${own[1]!.id}`, {
      token: u.dev,
      json: { deliveryConfig: {} },
    });
    expect(trim.status).toBe(200);
    const used = (await t.request('GET', '/user/quota-breakdown', { token: u.dev })).body.caps.configBytes
      .used;
    expect(used).toBeGreaterThan(FREE.configBytes);
    const regrow = await t.request('PUT', `/application/${own[1]!.id}`, {
      token: u.dev,
      json: { description: 'x' },
    });
    expect(regrow.status).toBe(403);
  });

  it('POST and PUT /webhook-config answer 400 for a template beyond the plan webhookTemplateBytes', async () => {
    const u = await freeUser();
    const c = await makeChannel(t, u.dev);
    const tooBig = 'x'.repeat(FREE.webhookTemplateBytes + 1);
    const res = await t.request('POST', `/application/${c.id}/webhook`, {
      token: u.dev,
      json: { name: 'w', text: tooBig },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: `title and text: at most ${FREE.webhookTemplateBytes} bytes together on the free plan`,
    });
    // Bytes, not characters: 3-byte characters reach the cap at a third of the length.
    const wide = '€'.repeat(Math.floor(FREE.webhookTemplateBytes / 3) + 1);
    expect(
      (
        await t.request('POST', `/application/${c.id}/webhook`, {
          token: u.dev,
          json: { name: 'w', text: wide },
        })
      ).status,
    ).toBe(400);
    const ok = await t.request('POST', `/application/${c.id}/webhook`, { token: u.dev, json: { name: 'w' } });
    expect(ok.status).toBe(200);
    const put = await t.request('PUT', `/webhook-config/${ok.body.id}`, {
      token: u.dev,
      json: { title: tooBig },
    });
    expect(put.status).toBe(400);
    await raisePlan(u.id, 'pro');
    const later = await t.request('PUT', `/webhook-config/${ok.body.id}`, {
      token: u.dev,
      json: { text: tooBig },
    });
    expect(later.status).toBe(200);
  });

  it('plans.json in the data dir overrides the caps', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-caps-'));
    writeFileSync(join(dataDir, 'plans.json'), JSON.stringify({ free: { channels: 2, apiTokens: 1 } }));
    const s = await startTestServer({ dataDir });
    try {
      const u = makeUser(s);
      const dev = (await deviceToken(s, u)).token;
      const create = () => s.request('POST', '/application', { token: dev, json: { name: 'c' } });
      expect((await create()).status).toBe(200);
      expect((await create()).status).toBe(200);
      expect((await create()).body).toEqual(planLimit('at most 2 channels on the free plan'));
      await apiToken(s, { token: dev });
      const second = await s.request('POST', '/api-token', {
        token: dev,
        json: { name: 'm', access: 'read' },
      });
      expect(second.body).toEqual(planLimit('at most 1 API tokens on the free plan'));
    } finally {
      await s.close();
    }
  });

  it('GET /user/quota-breakdown shows each cap of the plan with what the user has', async () => {
    const u = await freeUser();
    const c = await makeChannel(t, u.dev, { name: 'abc' });
    await t.request('POST', `/application/${c.id}/webhook`, { token: u.dev, json: { name: 'w' } });
    await apiToken(t, { token: u.dev }, { name: 'tok' });
    const res = await t.request('GET', '/user/quota-breakdown', { token: u.dev });
    expect(res.body.caps).toEqual({
      channels: { used: 1, limit: FREE.channels },
      webhooks: { used: 1, limit: FREE.webhooks },
      channelKeys: { used: 0, limit: FREE.channelKeys },
      shares: { used: 0, limit: FREE.shares },
      apiTokens: { used: 1, limit: FREE.apiTokens },
      configBytes: { used: expect.any(Number), limit: FREE.configBytes },
      webhookTemplateBytes: { limit: FREE.webhookTemplateBytes },
    });
    // name "abc" + tags "[]" + deliveryConfig "{}" + webhook "w" + token "tok" + "[]" + "[]"
    expect(res.body.caps.configBytes.used).toBe(3 + 2 + 2 + 1 + 3 + 2 + 2);
  });
});

// Every secret below contains SEKRIT (or hunter2): no answer may contain either.
const SECRET_CONFIG = {
  webhook: {
    url: 'https://alice:hunter2@hooks.example/in?token=tok-SEKRIT&team=ops',
    secret: 'hmac-SEKRIT',
    headers: { Authorization: 'Bearer hdr-SEKRIT', 'X-Team': 'ops' },
  },
  slack: { webhookUrl: 'https://hooks.slack.example/T1/B2/slack-SEKRIT' },
  discord: { webhookUrl: 'https://discord.example/api/webhooks/1/discord-SEKRIT' },
  teams: { webhookUrl: 'https://teams.example/webhook/teams-SEKRIT' },
  mattermost: { webhookUrl: 'https://mm.example/hooks/mm-SEKRIT', channel: 'town' },
  telegram: { botToken: 'tg-SEKRIT', chatId: 42 },
  sms: { accountSid: 'AC1', authToken: 'sms-SEKRIT', from: '+1234567', to: '+7654321' },
  call: { accountSid: 'AC1', authToken: 'call-SEKRIT', from: '+1234567', to: '+7654321' },
  pagerduty: { routingKey: 'pd-SEKRIT' },
  opsgenie: { apiKey: 'og-SEKRIT', region: 'eu' },
  email: { to: ['ops@example.com'] },
};
const M = SECRET_MASK;
const D = { enabled: true, minPriority: 0, delaySec: 300 };
const MASKED = {
  webhook: {
    ...D,
    url: `https://${M}:${M}@hooks.example/in?token=${M}&team=ops`,
    secret: M,
    headers: { Authorization: M, 'X-Team': M },
  },
  slack: { ...D, webhookUrl: M },
  discord: { ...D, webhookUrl: M },
  teams: { ...D, webhookUrl: M },
  mattermost: { ...D, webhookUrl: M, channel: 'town' },
  telegram: { ...D, botToken: M, chatId: 42 },
  sms: { ...D, provider: 'twilio', accountSid: 'AC1', authToken: M, from: '+1234567', to: '+7654321' },
  call: { ...D, provider: 'twilio', accountSid: 'AC1', authToken: M, from: '+1234567', to: '+7654321' },
  pagerduty: { ...D, routingKey: M, region: 'us' },
  opsgenie: { ...D, apiKey: M, region: 'eu' },
  email: { ...D, to: ['ops@example.com'] },
};

function storedConfig(channelId: number) {
  const row = t.server.ctx.db.first<{ delivery_config: string }>(
    'SELECT delivery_config FROM channels WHERE id = ?',
    [channelId],
  )!;
  return { raw: row.delivery_config, open: openDeliveryConfig(t.server.ctx.secret, row.delivery_config) };
}

describe('deliveryConfig secrets', () => {
  let owner: { id: number; email: string; password: string; dev: string };
  let channel: { id: number; token: string };
  beforeAll(async () => {
    owner = { ...makeUser(t, { plan: 'pro' }), dev: '' };
    owner.dev = (await deviceToken(t, owner)).token;
    channel = await makeChannel(t, owner.dev, { deliveryConfig: SECRET_CONFIG });
  });

  async function channelAs(token: string) {
    const res = await t.request('GET', '/application', { token });
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/SEKRIT|hunter2/);
    return (res.body as { id: number }[]).find((c) => c.id === channel.id)!;
  }

  it('GET /application shows the owner device every secret masked, URL credentials and secret query values included', async () => {
    expect(((await channelAs(owner.dev)) as any).deliveryConfig).toEqual(MASKED);
  });

  it('POST /application answers the masked config to its creator, Basic included', async () => {
    const res = await t.request('POST', '/application', {
      basic: owner,
      json: { name: 'basic', deliveryConfig: SECRET_CONFIG },
    });
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/SEKRIT|hunter2/);
    expect(res.body.deliveryConfig).toEqual(MASKED);
  });

  it('GET /application shows a write API token the masked config and a read-only token none', async () => {
    const write = await apiToken(t, { token: owner.dev }, { access: 'write' });
    expect(((await channelAs(write.token)) as any).deliveryConfig).toEqual(MASKED);
    const read = await apiToken(t, { token: owner.dev }, { access: 'read' });
    expect(await channelAs(read.token)).not.toHaveProperty('deliveryConfig');
  });

  it('GET /application shows a channel key with read no deliveryConfig', async () => {
    const key = await t.request('POST', `/application/${channel.id}/token`, {
      token: owner.dev,
      json: { canRead: true, canWrite: false },
    });
    expect(key.status).toBe(200);
    expect(await channelAs(key.body.token)).not.toHaveProperty('deliveryConfig');
  });

  it('GET /application shows a share recipient no deliveryConfig', async () => {
    const friend = makeUser(t);
    const friendDev = (await deviceToken(t, friend)).token;
    const share = await t.request('POST', `/application/${channel.id}/share`, {
      token: owner.dev,
      json: { email: friend.email, permission: 'send', canShare: true },
    });
    const acc = await t.request('POST', `/share/${share.body.id}/accept`, { token: friendDev });
    expect(acc.status).toBe(200);
    expect(acc.text).not.toMatch(/SEKRIT|hunter2/);
    expect(acc.body).not.toHaveProperty('deliveryConfig');
    expect(await channelAs(friendDev)).not.toHaveProperty('deliveryConfig');
  });

  it('PUT /application/{id} with the masked config read back keeps every stored secret', async () => {
    const c = await makeChannel(t, owner.dev, { deliveryConfig: SECRET_CONFIG });
    const res = await t.request('PUT', `/application/${c.id}`, {
      token: owner.dev,
      json: { name: 'renamed', deliveryConfig: c.deliveryConfig },
    });
    expect(res.status).toBe(200);
    expect(res.body.deliveryConfig).toEqual(MASKED);
    const { open } = storedConfig(c.id);
    for (const [name, value] of Object.entries(SECRET_CONFIG)) expect(open[name]).toMatchObject(value);
  });

  it('PUT /application/{id} refuses masked secrets sent to a changed webhook url', async () => {
    const c = await makeChannel(t, owner.dev, { deliveryConfig: { webhook: SECRET_CONFIG.webhook } });
    const masked = (c.deliveryConfig as typeof MASKED).webhook;
    const moved = await t.request('PUT', `/application/${c.id}`, {
      token: owner.dev,
      json: { deliveryConfig: { webhook: { ...masked, url: 'https://attacker.example/in' } } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.errorDescription).toBe(
      'deliveryConfig.webhook: the url changed; enter its secrets again instead of the mask',
    );
    const otherUrl = await t.request('PUT', `/application/${c.id}`, {
      token: owner.dev,
      json: { deliveryConfig: { webhook: { url: `https://${M}:${M}@attacker.example/in` } } },
    });
    expect(otherUrl.status).toBe(400);
    expect(otherUrl.body.errorDescription).toBe(
      'deliveryConfig.webhook.url: masked credentials of another URL; enter them again',
    );
    // New secrets with the new url are fine, and a header mask keeps only that header.
    const fresh = await t.request('PUT', `/application/${c.id}`, {
      token: owner.dev,
      json: {
        deliveryConfig: {
          webhook: { url: 'https://new.example/in', secret: 'new-secret', headers: { 'X-Team': 'blue' } },
        },
      },
    });
    expect(fresh.status).toBe(200);
    const keep = await t.request('PUT', `/application/${c.id}`, {
      token: owner.dev,
      json: { deliveryConfig: { webhook: { ...fresh.body.deliveryConfig.webhook, minPriority: 3 } } },
    });
    expect(keep.status).toBe(200);
    expect(storedConfig(c.id).open.webhook).toMatchObject({
      url: 'https://new.example/in',
      secret: 'new-secret',
      headers: { 'X-Team': 'blue' },
      minPriority: 3,
    });
  });

  it('stores every adapter secret sealed: neither the column nor belfry.db after a snapshot holds one in clear', async () => {
    const { raw } = storedConfig(channel.id);
    expect(raw).not.toMatch(/SEKRIT|hunter2|hooks\.example/);
    await t.server.store.snapshot();
    const file = readFileSync(join(t.dataDir, 'belfry.db'));
    expect(file.includes('SEKRIT')).toBe(false);
    expect(file.includes('hunter2')).toBe(false);
  });

  it('reads a row written before sealing and seals it at start', async () => {
    const c = await makeChannel(t, owner.dev);
    const legacy = JSON.stringify({ pagerduty: { ...D, routingKey: 'legacy-SEKRIT', region: 'us' } });
    t.server.ctx.db.transaction(() =>
      t.server.ctx.db.run('UPDATE channels SET delivery_config = ? WHERE id = ?', [legacy, c.id]),
    );
    const before = (await channelAs(owner.dev)) as any;
    expect(before.id).not.toBe(c.id);
    const list = await t.request('GET', '/application', { token: owner.dev });
    expect(list.text).not.toContain('legacy-SEKRIT');
    expect(list.body.find((x: { id: number }) => x.id === c.id).deliveryConfig).toEqual({
      pagerduty: { ...D, routingKey: M, region: 'us' },
    });
    expect(sealStoredDeliverySecrets(t.server.ctx)).toBe(1);
    expect(storedConfig(c.id).raw).not.toContain('legacy-SEKRIT');
    expect(storedConfig(c.id).open.pagerduty!.routingKey).toBe('legacy-SEKRIT');
    expect(sealStoredDeliverySecrets(t.server.ctx)).toBe(0);
  });
});

describe('prototype keys in deliveryConfig', () => {
  const cases: [string, string][] = [
    ['{"__proto__": {}}', 'deliveryConfig.__proto__: reserved name'],
    ['{"constructor": {}}', 'deliveryConfig.constructor: reserved name'],
    ['{"prototype": {}}', 'deliveryConfig.prototype: reserved name'],
    ['{"toString": {}}', 'deliveryConfig.toString: unknown adapter'],
    [
      '{"webhook": {"url": "https://a.example", "__proto__": {"enabled": false}}}',
      'deliveryConfig.webhook.__proto__: reserved name',
    ],
    [
      '{"webhook": {"url": "https://a.example", "headers": {"constructor": "x"}}}',
      'deliveryConfig.webhook.headers.constructor: reserved name',
    ],
    [
      '{"webhook": {"url": "https://a.example", "headers": {"__proto__": "x"}}}',
      'deliveryConfig.webhook.headers.__proto__: reserved name',
    ],
  ];
  for (const [config, description] of cases)
    it(`POST and PUT /application answer 400 for deliveryConfig ${config}`, async () => {
      const dev = admin.token;
      const body = `{"name": "proto", "deliveryConfig": ${config}}`;
      const headers = { 'content-type': 'application/json' };
      const created = await t.request('POST', '/application', { token: dev, body, headers });
      expect(created.status).toBe(400);
      expect(created.body).toMatchObject({ error: 'Bad Request', errorCode: 400 });
      expect(created.body.errorDescription.startsWith(description)).toBe(true);
      const c = await makeChannel(t, dev);
      const updated = await t.request('PUT', `/application/${c.id}`, { token: dev, body, headers });
      expect(updated.status).toBe(400);
      expect(updated.body.errorDescription.startsWith(description)).toBe(true);
    });
});

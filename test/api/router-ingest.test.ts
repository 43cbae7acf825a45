import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeEvents, remainingEvents } from '../../server/features/quota/service';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { addRule, deliver, fixture, messageById, ok, routerUser } from './router-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

describe('router ingest with real senders', () => {
  it('POST /router/{token}/github routes a GitHub push by its X-GitHub-Event header and $.ref', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, {
      name: 'GitHub main',
      appid: u.channel.id,
      pathPattern: '/github',
      match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }],
      title: '{{headers.x-github-event}} to {{repository.full_name}}',
      message: '{{pusher.name}}: {{head_commit.message}} ({{body.commits[0].modified}})',
      priority: 4,
    });
    const push = fixture('github-push');
    const res = await deliver(t, u.token, '/github', push);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const answer = res.body as { id: number; matchedRuleId: number; messageId: number };
    expect(answer).toEqual({ id: expect.any(Number), matchedRuleId: rule.id, messageId: expect.any(Number) });
    expect(await messageById(t, u.device.token, answer.messageId)).toEqual({
      id: answer.messageId,
      appid: u.channel.id,
      title: 'push to octo-org/belfry-demo',
      message: 'octocat: Fix the retry loop (["server/retry.ts"])',
      priority: 4,
      date: expect.any(String),
      senderName: 'GitHub main',
      extras: { 'service::source': { kind: 'router-rule', id: rule.id, event: 'routed' } },
    });
    // Another branch does not match: the event is kept, no message (no default channel).
    const other = { ...push, body: { ...push.body, ref: 'refs/heads/feature' } };
    const res2 = await deliver(t, u.token, '/github', other);
    expect(res2.body).toEqual({ id: expect.any(Number), matchedRuleId: null, messageId: null });
  });

  it('a workflow_run failure matches $.workflow_run.conclusion equals "failure", a success does not', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, {
      name: 'CI failed',
      appid: u.channel.id,
      pathPattern: '/github',
      method: 'post',
      match: [
        { path: '$.action', op: 'equals', value: 'completed' },
        { path: '$.workflow_run.conclusion', op: 'equals', value: 'failure' },
      ],
      title: '{{workflow_run.name}} failed on {{workflow_run.head_branch}}',
      message: '{{workflow_run.html_url}}',
    });
    expect(rule.method).toBe('POST');
    const run = fixture('github-workflow-run');
    const failed = await deliver(t, u.token, '/github', run);
    expect(failed.body.matchedRuleId).toBe(rule.id);
    const m = await messageById(t, u.device.token, failed.body.messageId);
    expect([m?.title, m?.message, m?.priority]).toEqual([
      'CI failed on main',
      'https://github.com/octo-org/belfry-demo/actions/runs/9123456789',
      6, // the channel's default priority (rule priority null)
    ]);
    const wr = run.body.workflow_run as Record<string, unknown>;
    const success = { ...run, body: { ...run.body, workflow_run: { ...wr, conclusion: 'success' } } };
    expect((await deliver(t, u.token, '/github', success)).body.matchedRuleId).toBeNull();
  });

  it('a GitLab pipeline routes by object_kind, a Stripe event by type, a Docker Hub push by $.push_data.tag', async () => {
    const u = await routerUser(t);
    const gitlab = await addRule(t, u.device.token, {
      name: 'GitLab',
      appid: u.channel.id,
      pathPattern: '/gitlab/*',
      match: [{ path: '$.object_kind', op: 'equals', value: 'pipeline' }],
      title: '{{headers.x-gitlab-event}}: {{project.path_with_namespace}} {{object_attributes.status}}',
      message:
        '{{object_attributes.url}} stages {{object_attributes.stages}} took {{object_attributes.duration}} s',
    });
    const stripe = await addRule(t, u.device.token, {
      name: 'Stripe',
      appid: u.channel.id,
      pathPattern: '/stripe',
      match: [{ path: '$.type', op: 'equals', value: 'invoice.payment_failed' }],
      title: 'Payment failed: {{data.object.customer_email}}',
      message: '{{data.object.amount_due}} {{data.object.currency}} ({{data.object.hosted_invoice_url}})',
      priority: 8,
    });
    const docker = await addRule(t, u.device.token, {
      name: 'Docker Hub',
      appid: u.channel.id,
      pathPattern: '/docker/**',
      match: [
        { path: '$.push_data.tag', op: 'equals', value: 'latest' },
        { path: '$.repository.is_private', op: 'equals', value: true },
      ],
      title: '{{repository.repo_name}}:{{push_data.tag}} pushed by {{push_data.pusher}}',
    });
    const g = await deliver(t, u.token, '/gitlab/pipelines', fixture('gitlab-pipeline'));
    expect(g.body.matchedRuleId).toBe(gitlab.id);
    const gm = await messageById(t, u.device.token, g.body.messageId);
    expect([gm?.title, gm?.message]).toEqual([
      'Pipeline Hook: gitlab-org/gitlab-test failed',
      'http://example.com/gitlab-org/gitlab-test/-/pipelines/31 stages ["build","test","deploy"] took 63 s',
    ]);
    const s = await deliver(t, u.token, '/stripe', fixture('stripe-event'));
    expect(s.body.matchedRuleId).toBe(stripe.id);
    const sm = await messageById(t, u.device.token, s.body.messageId);
    expect([sm?.title, sm?.message, sm?.priority]).toEqual([
      'Payment failed: jenny.rosen@example.com',
      '2000 eur (https://invoice.stripe.com/i/acct_1032D82eZvKYlo2C/test_YWNjdF8x)',
      8,
    ]);
    const d = await deliver(t, u.token, '/docker/hub/testhook', fixture('dockerhub-push'));
    expect(d.body.matchedRuleId).toBe(docker.id);
    const dm = await messageById(t, u.device.token, d.body.messageId);
    expect(dm?.title).toBe('svendowideit/testhook:latest pushed by trustedbuilder');
    // No message template: the body as indented JSON, cut to 4,000 characters.
    expect(dm?.message).toBe(JSON.stringify(fixture('dockerhub-push').body, null, 2));
    // `true` is not "true": no coercion.
    const rule = await t.request('PUT', `/webhook-router/rule/${docker.id}`, {
      token: u.device.token,
      json: { match: [{ path: '$.repository.is_private', op: 'equals', value: 'true' }] },
    });
    expect(rule.status).toBe(200);
    expect(
      (await deliver(t, u.token, '/docker/hub/testhook', fixture('dockerhub-push'))).body.matchedRuleId,
    ).toBeNull();
  });

  it('the stored event keeps headers lower-cased without credentials, the query, the path and the parsed body', async () => {
    const u = await routerUser(t);
    const stripe = fixture('stripe-event');
    const res = await t.request('POST', `/router/${u.token}/stripe/live?mode=test&tag=a&tag=b`, {
      headers: {
        ...stripe.headers,
        Authorization: `Bearer ${u.device.token}`,
        Cookie: 'service-client-token=x',
        'X-Service-Key': 'secret',
        'X-Gotify-Key': 'secret',
        'X-Legacy-Key': 'secret',
        'Proxy-Authorization': 'Basic eA==',
        'X-Long': 'v'.repeat(1_500),
      },
      body: JSON.stringify(stripe.body),
    });
    expect(res.status).toBe(200);
    const event = ok(
      await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
      'event',
    );
    expect(event).toMatchObject({
      id: res.body.id,
      path: '/stripe/live',
      method: 'POST',
      query: { mode: 'test', tag: ['a', 'b'] },
      body: stripe.body,
      matchedRuleId: null,
      appid: null,
      messageId: null,
      size: Buffer.byteLength(JSON.stringify(stripe.body)),
      receivedAt: expect.stringMatching(/Z$/),
    });
    const headers = event.headers as Record<string, string>;
    expect(headers['stripe-signature']).toBe(stripe.headers['Stripe-Signature']);
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers['x-long']).toBe('v'.repeat(1_000));
    for (const secret of [
      'authorization',
      'cookie',
      'x-service-key',
      'x-gotify-key',
      'x-legacy-key',
      'proxy-authorization',
    ])
      expect(headers).not.toHaveProperty(secret);
    expect(headers).not.toHaveProperty('connection');
  });

  it('a JSON body is stored as its text on both lanes: BOM dropped, multi-byte text kept, malformed UTF-8 as U+FFFD', async () => {
    const u = await routerUser(t);
    const json = JSON.stringify({ city: 'Zürich ☃', emoji: '🔔' });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
    // A lone 0xff inside a string: not UTF-8; the parsed body and the stored text both hold U+FFFD.
    const broken = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('b"}')]);
    const cases = [
      { method: 'POST', bytes: bom, text: json, size: bom.length }, // lean lane
      { method: 'PUT', bytes: bom, text: json, size: bom.length }, // express
      { method: 'POST', bytes: broken, text: '{"name":"a\ufffdb"}', size: broken.length },
      { method: 'PUT', bytes: broken, text: '{"name":"a\ufffdb"}', size: broken.length },
    ];
    for (const c of cases) {
      const res = await t.request(c.method, `/router/${u.token}/bytes`, {
        headers: { 'Content-Type': 'application/json' },
        body: new Uint8Array(c.bytes),
      });
      expect(res.status, `${c.method} ${c.text}`).toBe(200);
      const event = ok(
        await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
        'event',
      );
      expect(event.body).toEqual(JSON.parse(c.text));
      expect(event.size).toBe(c.size);
      const row = t.server.ctx.db.first<{ body: string; kind: string }>(
        'SELECT body, typeof(body) AS kind FROM router_events WHERE id = ?',
        [res.body.id],
      );
      expect(row).toEqual({ body: c.text, kind: 'text' });
    }
  });

  it('an event keeps at most 50 headers', async () => {
    const u = await routerUser(t);
    const many: Record<string, string> = {};
    for (let i = 0; i < 70; i++) many[`x-h${i}`] = String(i);
    const res = await t.request('POST', `/router/${u.token}/many`, { headers: many, json: { a: 1 } });
    const event = ok(
      await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
      'event',
    );
    expect(Object.keys(event.headers as object)).toHaveLength(50);
  });
});

describe('router ingest bodies, methods and patterns', () => {
  it('form and text bodies are stored as an object and as text, and templates read the form fields', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, {
      name: 'form',
      appid: u.channel.id,
      pathPattern: '/form',
      match: [{ path: '$.status', op: 'equals', value: 'down' }],
      title: '{{host}} is {{status}}',
      message: '{{body}}',
    });
    const form = await t.request('POST', `/router/${u.token}/form`, {
      form: { host: 'db1', status: 'down' },
    });
    expect(form.body.matchedRuleId).toBe(rule.id);
    const fm = await messageById(t, u.device.token, form.body.messageId);
    expect([fm?.title, fm?.message]).toEqual(['db1 is down', '{"host":"db1","status":"down"}']);
    const text = await t.request('PUT', `/router/${u.token}/log`, {
      headers: { 'Content-Type': 'text/plain' },
      body: 'disk full on /var',
    });
    expect(text.status).toBe(200);
    const ev = ok(
      await t.request('GET', `/webhook-router/event/${text.body.id}`, { token: u.device.token }),
      'event',
    );
    expect([ev.method, ev.body, ev.size]).toEqual(['PUT', 'disk full on /var', 17]);
    const xml = await t.request('PATCH', `/router/${u.token}/x`, {
      headers: { 'Content-Type': 'application/xml' },
      body: '<a>1</a>',
    });
    const xe = ok(
      await t.request('GET', `/webhook-router/event/${xml.body.id}`, { token: u.device.token }),
      'event',
    );
    expect([xe.method, xe.body]).toEqual(['PATCH', '<a>1</a>']);
  });

  it('GET ingest without a body stores body null and templates read the query', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, {
      name: 'cron',
      appid: u.channel.id,
      method: 'GET',
      pathPattern: '/cron/*',
      title: '{{method}} {{path}} {{query.job}}',
      message: 'job {{query.job}} said {{query.msg}}{{missing.key}}',
    });
    const res = await t.request('GET', `/router/${u.token}/cron/nightly?job=backup&msg=ok`);
    expect(res.body.matchedRuleId).toBe(rule.id);
    const m = await messageById(t, u.device.token, res.body.messageId);
    expect([m?.title, m?.message]).toEqual(['GET /cron/nightly backup', 'job backup said ok']);
    const ev = ok(
      await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
      'event',
    );
    expect([ev.body, ev.size, ev.query]).toEqual([null, 0, { job: 'backup', msg: 'ok' }]);
    // The method filter: a POST to the same path is not this rule's.
    expect(
      (await t.request('POST', `/router/${u.token}/cron/nightly`, { json: {} })).body.matchedRuleId,
    ).toBeNull();
  });

  it('the first enabled rule by position wins; a disabled rule is skipped', async () => {
    const u = await routerUser(t);
    const first = await addRule(t, u.device.token, {
      name: 'first',
      appid: u.channel.id,
      pathPattern: '/a/**',
    });
    const second = await addRule(t, u.device.token, { name: 'second', appid: u.channel.id });
    expect([first.position, second.position]).toEqual([1, 2]);
    expect((await t.request('POST', `/router/${u.token}/a/b`, { json: {} })).body.matchedRuleId).toBe(
      first.id,
    );
    expect((await t.request('POST', `/router/${u.token}/z`, { json: {} })).body.matchedRuleId).toBe(
      second.id,
    );
    // Moving `second` to position 1 makes it first.
    const moved = await t.request('PUT', `/webhook-router/rule/${second.id}`, {
      token: u.device.token,
      json: { position: 1 },
    });
    expect(moved.body.position).toBe(1);
    expect((await t.request('POST', `/router/${u.token}/a/b`, { json: {} })).body.matchedRuleId).toBe(
      second.id,
    );
    await t.request('PUT', `/webhook-router/rule/${second.id}`, {
      token: u.device.token,
      json: { enabled: false },
    });
    expect((await t.request('POST', `/router/${u.token}/a/b`, { json: {} })).body.matchedRuleId).toBe(
      first.id,
    );
  });

  it('glob * matches one segment, ** any number, and * inside a segment part of it', async () => {
    const u = await routerUser(t);
    const one = await addRule(t, u.device.token, {
      name: 'one',
      appid: u.channel.id,
      pathPattern: '/hooks/*',
    });
    const deep = await addRule(t, u.device.token, {
      name: 'deep',
      appid: u.channel.id,
      pathPattern: '/hooks/**/end',
    });
    const part = await addRule(t, u.device.token, {
      name: 'part',
      appid: u.channel.id,
      pathPattern: '/build-*/ok',
    });
    const hit = async (path: string) =>
      (await t.request('POST', `/router/${u.token}${path}`, { json: {} })).body.matchedRuleId as
        | number
        | null;
    expect(await hit('/hooks/x')).toBe(one.id);
    expect(await hit('/hooks/x/')).toBe(one.id);
    expect(await hit('/hooks/x/y')).toBeNull();
    expect(await hit('/hooks/end')).toBe(one.id);
    expect(await hit('/hooks/x/y/end')).toBe(deep.id);
    expect(await hit('/hooks')).toBeNull();
    expect(await hit('/build-42/ok')).toBe(part.id);
    expect(await hit('/build/ok')).toBeNull();
    expect(await hit('/build-1/ok/more')).toBeNull();
  });

  it('exists and notExists test the presence of a body path', async () => {
    const u = await routerUser(t);
    const has = await addRule(t, u.device.token, {
      name: 'has',
      appid: u.channel.id,
      match: [
        { path: '$.alerts[0].labels', op: 'exists' },
        { path: '$["dry-run"]', op: 'notExists' },
      ],
    });
    const hit = async (body: unknown) =>
      (await t.request('POST', `/router/${u.token}/am`, { json: body })).body.matchedRuleId as number | null;
    expect(await hit({ alerts: [{ labels: {} }] })).toBe(has.id);
    expect(await hit({ alerts: [{ labels: null }] })).toBe(has.id);
    expect(await hit({ alerts: [] })).toBeNull();
    expect(await hit({ alerts: [{ labels: {} }], 'dry-run': false })).toBeNull();
  });

  it('no rule matched: a message into defaultAppid with the default title and text, sent as Webhook router', async () => {
    const u = await routerUser(t);
    const fallback = await makeChannel(t, u.device.token, { name: 'inbox', defaultPriority: 3 });
    ok(
      await t.request('PUT', '/webhook-router', {
        token: u.device.token,
        json: { defaultAppid: fallback.id },
      }),
      'default',
    );
    const res = await t.request('POST', `/router/${u.token}/anything/here`, { json: { hello: 'world' } });
    expect(res.body).toEqual({ id: expect.any(Number), matchedRuleId: null, messageId: expect.any(Number) });
    const m = await messageById(t, u.device.token, res.body.messageId);
    const router = ok(await t.request('GET', '/webhook-router', { token: u.device.token }), 'router');
    expect(m).toEqual({
      id: res.body.messageId,
      appid: fallback.id,
      title: 'POST /anything/here',
      message: '{\n  "hello": "world"\n}',
      priority: 3,
      date: expect.any(String),
      senderName: 'Webhook router',
      extras: { 'service::source': { kind: 'webhook-router', id: expect.any(Number), event: 'routed' } },
    });
    expect(router.defaultAppid).toBe(fallback.id);
    const ev = ok(
      await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
      'event',
    );
    expect([ev.appid, ev.messageId]).toEqual([fallback.id, res.body.messageId]);
    // A bodiless GET: the default text names the request.
    const get = await t.request('GET', `/router/${u.token}/ping`);
    expect((await messageById(t, u.device.token, get.body.messageId))?.message).toBe('GET /ping');
  });

  it('a body over 64 KiB is 413 and nothing is stored; a body up to it is kept', async () => {
    const u = await routerUser(t);
    const big = await t.request('POST', `/router/${u.token}/big`, { json: { blob: 'x'.repeat(70_000) } });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({
      error: 'Payload Too Large',
      errorCode: 413,
      errorDescription: 'request body larger than 65536 bytes',
    });
    const bigText = await t.request('PUT', `/router/${u.token}/big`, {
      headers: { 'Content-Type': 'text/plain' },
      body: 'y'.repeat(65_537),
    });
    expect(bigText.status).toBe(413);
    const fits = await t.request('PUT', `/router/${u.token}/big`, {
      headers: { 'Content-Type': 'text/plain' },
      body: 'y'.repeat(65_536),
    });
    expect(fits.status).toBe(200);
    const events = ok(await t.request('GET', '/webhook-router/event', { token: u.device.token }), 'events');
    expect(events.events.map((e: { size: number }) => e.size)).toEqual([65_536]);
  });

  it('a gzip-compressed text body is decoded before it is stored', async () => {
    const u = await routerUser(t);
    const { gzipSync } = await import('node:zlib');
    const res = await t.request('POST', `/router/${u.token}/gz`, {
      headers: { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' },
      body: new Uint8Array(gzipSync('compressed hello')),
    });
    expect(res.status).toBe(200);
    const ev = ok(
      await t.request('GET', `/webhook-router/event/${res.body.id}`, { token: u.device.token }),
      'event',
    );
    expect(ev.body).toBe('compressed hello');
  });
});

describe('router ingest refusals', () => {
  it('quota spent: 429 daily event quota exceeded, the event kept with messageId null', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, { name: 'all', appid: u.channel.id });
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.user.id, remainingEvents(ctx, u.user.id)));
    const res = await t.request('POST', `/router/${u.token}/q`, { json: { n: 1 } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: 'Too Many Requests',
      errorCode: 429,
      errorDescription: 'daily event quota exceeded',
    });
    const events = ok(await t.request('GET', '/webhook-router/event', { token: u.device.token }), 'events');
    expect(events.events).toHaveLength(1);
    expect(events.events[0]).toMatchObject({
      path: '/q',
      matchedRuleId: rule.id,
      appid: u.channel.id,
      messageId: null,
    });
    // Event-only requests (no rule, no default) spend no quota and still answer 200.
    await t.request('PUT', `/webhook-router/rule/${rule.id}`, {
      token: u.device.token,
      json: { enabled: false },
    });
    expect((await t.request('POST', `/router/${u.token}/q`, { json: {} })).status).toBe(200);
  });

  it('concurrent events (stored in shared batches) each get their own answer: 200, 429 past the quota, 404', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, { name: 'burst', appid: u.channel.id });
    const ctx = t.server.ctx;
    ctx.db.transaction(() => consumeEvents(ctx, u.user.id, remainingEvents(ctx, u.user.id) - 10));
    const sends = Array.from({ length: 20 }, (_, i) =>
      t.request('POST', `/router/${u.token}/burst`, { json: { n: i } }),
    );
    const strays = Array.from({ length: 5 }, () =>
      t.request('POST', `/router/R${'y'.repeat(22)}/burst`, { json: {} }),
    );
    const answers = await Promise.all(sends);
    expect((await Promise.all(strays)).map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    for (const r of answers.filter((a) => a.status === 200))
      expect(r.body).toEqual({
        id: expect.any(Number),
        matchedRuleId: rule.id,
        messageId: expect.any(Number),
      });
    // Every event is kept, the ten past the quota without a message; nothing of one leaked into another.
    const events = ok(
      await t.request('GET', '/webhook-router/event?limit=100', { token: u.device.token }),
      'ev',
    );
    expect(events.events).toHaveLength(20);
    expect(events.events.filter((e: { messageId: number | null }) => e.messageId === null)).toHaveLength(10);
    const ids = new Set(answers.filter((a) => a.status === 200).map((a) => (a.body as { id: number }).id));
    expect(ids.size).toBe(10);
  });

  it('unknown token, another kind of token, a disabled router and a rotated token are 404 router not found', async () => {
    const u = await routerUser(t);
    const notFound = { error: 'Not Found', errorCode: 404, errorDescription: 'router not found' };
    expect((await t.request('POST', `/router/R${'x'.repeat(22)}/a`, { json: {} })).body).toEqual(notFound);
    expect((await t.request('POST', `/router/${u.channel.token}/a`, { json: {} })).body).toEqual(notFound);
    expect((await t.request('GET', `/router/${u.router.token.slice(0, -1)}/a`)).body).toEqual(notFound);
    // Credentials in headers are not read: a device token does not open the router.
    expect((await t.request('POST', `/router/nope/a`, { token: u.device.token, json: {} })).body).toEqual(
      notFound,
    );
    ok(
      await t.request('PUT', '/webhook-router', { token: u.device.token, json: { enabled: false } }),
      'disable',
    );
    expect((await t.request('POST', `/router/${u.token}/a`, { json: {} })).body).toEqual(notFound);
    expect((await t.request('PUT', `/router/${u.token}/a`, { json: {} })).status).toBe(404);
    ok(
      await t.request('PUT', '/webhook-router', { token: u.device.token, json: { enabled: true } }),
      'enable',
    );
    expect((await t.request('POST', `/router/${u.token}/a`, { json: {} })).status).toBe(200);
    const rotated = ok(
      await t.request('POST', '/webhook-router/rotate-token', { token: u.device.token }),
      'rotate',
    );
    expect(rotated.token).not.toBe(u.token);
    expect(rotated.url).toBe(`${t.url}/router/${rotated.token}`);
    expect((await t.request('POST', `/router/${u.token}/a`, { json: {} })).body).toEqual(notFound);
    expect((await t.request('POST', `/router/${rotated.token}/a`, { json: {} })).status).toBe(200);
  });

  it('malformed JSON is 400 and stores nothing', async () => {
    const u = await routerUser(t);
    const res = await t.request('POST', `/router/${u.token}/x`, {
      headers: { 'Content-Type': 'application/json' },
      body: '{"a": ',
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('malformed JSON body');
    const events = ok(await t.request('GET', '/webhook-router/event', { token: u.device.token }), 'events');
    expect(events.events).toEqual([]);
  });

  it("a user's router never routes into a channel of another user", async () => {
    const u = await routerUser(t);
    const other = makeUser(t);
    const od = await deviceToken(t, other);
    const theirs = await makeChannel(t, od.token);
    const res = await t.request('POST', '/webhook-router/rule', {
      token: u.device.token,
      json: { name: 'x', appid: theirs.id },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('appid: no such channel');
    const def = await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: theirs.id },
    });
    expect(def.body.errorDescription).toBe('defaultAppid: no such channel');
  });
});

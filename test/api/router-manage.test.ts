import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { addRule, deliver, fixture, ok, routerUser } from './router-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const masked = (token: string) => `${token.slice(0, 3)}${'*'.repeat(16)}${token.slice(-4)}`;

describe('the router singleton', () => {
  it('GET /webhook-router creates the router on first call with the full token, then shows it masked', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const first = ok(await t.request('GET', '/webhook-router', { token: d.token }), 'first');
    expect(first).toEqual({
      token: expect.stringMatching(/^R[A-Za-z0-9]{22}$/),
      url: `${t.url}/router/${first.token}`,
      enabled: true,
      defaultAppid: null,
      createdAt: expect.stringMatching(/Z$/),
    });
    const again = ok(await t.request('GET', '/webhook-router', { token: d.token }), 'again');
    expect(again).toEqual({
      ...first,
      token: masked(first.token),
      url: `${t.url}/router/${masked(first.token)}`,
    });
    // Only the digest is kept.
    const row = t.server.ctx.db.first<{ token_digest: string }>(
      'SELECT * FROM webhook_routers WHERE user_id = ?',
      [u.id],
    );
    expect(JSON.stringify(row)).not.toContain(first.token);
  });

  it('PUT /webhook-router sets enabled and defaultAppid, null clears it; bad values are 400 <field>:', async () => {
    const u = await routerUser(t);
    const put = (json: unknown) => t.request('PUT', '/webhook-router', { token: u.device.token, json });
    const set = ok(await put({ defaultAppid: u.channel.id, enabled: false }), 'set');
    expect([set.enabled, set.defaultAppid, set.token]).toEqual([false, u.channel.id, masked(u.token)]);
    expect(ok(await put({ defaultAppid: null }), 'clear').defaultAppid).toBeNull();
    expect(ok(await put({}), 'empty').enabled).toBe(false);
    expect((await put({ enabled: 'yes' })).body.errorDescription).toMatch(/^enabled: /);
    expect((await put({ defaultAppid: 999_999 })).body.errorDescription).toBe(
      'defaultAppid: no such channel',
    );
    const channels = ok(await t.request('GET', '/application', { token: u.device.token }), 'channels');
    const internal = channels.find((c: { internal?: boolean }) => c.internal);
    if (internal) expect((await put({ defaultAppid: internal.id })).status).toBe(403);
  });

  it('a scoped API token gets 403 on every /webhook-router route; an unscoped one is accepted', async () => {
    const u = await routerUser(t);
    const scoped = await apiToken(t, u.device, { appIds: [u.channel.id] });
    const forbidden = {
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'an API token with a restricted scope cannot do this',
    };
    for (const [method, path] of [
      ['GET', '/webhook-router'],
      ['PUT', '/webhook-router'],
      ['POST', '/webhook-router/rotate-token'],
      ['GET', '/webhook-router/rule'],
      ['POST', '/webhook-router/rule'],
      ['GET', '/webhook-router/event'],
      ['GET', '/webhook-router/message'],
    ] as const) {
      const res = await t.request(method, path, {
        token: scoped.token,
        ...(method === 'GET' ? {} : { json: {} }),
      });
      expect([method, path, res.body]).toEqual([method, path, forbidden]);
    }
    const plain = await apiToken(t, u.device);
    expect((await t.request('GET', '/webhook-router/rule', { token: plain.token })).status).toBe(200);
    const readOnly = await apiToken(t, u.device, { access: 'read' });
    expect((await t.request('POST', '/webhook-router/rotate-token', { token: readOnly.token })).status).toBe(
      403,
    );
    // A read-only token reads the router once it exists (masked), but never creates one.
    const read = await t.request('GET', '/webhook-router', { token: readOnly.token });
    expect(read.status).toBe(200);
    expect(read.body.token).not.toBe(u.token);
    expect(read.body.token).toMatch(/\*{4}/);
    const fresh = makeUser(t);
    const freshDevice = await deviceToken(t, fresh, 'fresh');
    const freshRead = await apiToken(t, freshDevice, { access: 'read' });
    expect(await t.request('GET', '/webhook-router', { token: freshRead.token })).toMatchObject({
      status: 404,
      body: { errorDescription: 'router not found' },
    });
    expect(
      t.server.ctx.db.first('SELECT id FROM webhook_routers WHERE user_id = ?', [fresh.id]),
    ).toBeUndefined();
    expect((await t.request('GET', '/webhook-router', { token: freshDevice.token })).status).toBe(200);
    // A channel key is refused (403), no credential 401.
    expect((await t.request('GET', '/webhook-router', { token: u.channel.token })).status).toBe(403);
    expect((await t.request('GET', '/webhook-router')).status).toBe(401);
  });
});

describe('router rules', () => {
  it('POST /webhook-router/rule creates a rule with the defaults of §11', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, { name: '  everything  ', appid: u.channel.id });
    expect(rule).toEqual({
      id: expect.any(Number),
      name: 'everything',
      pathPattern: '**',
      method: null,
      match: [],
      appid: u.channel.id,
      title: '{{method}} {{path}}',
      message: null,
      priority: null,
      enabled: true,
      position: 1,
      createdAt: expect.stringMatching(/Z$/),
    });
    const list = ok(await t.request('GET', '/webhook-router/rule', { token: u.device.token }), 'list');
    expect(list).toEqual([rule]);
  });

  it('rule validation answers 400 <field>: <problem>', async () => {
    const u = await routerUser(t);
    const bad = async (json: Record<string, unknown>) =>
      (
        await t.request('POST', '/webhook-router/rule', {
          token: u.device.token,
          json: { name: 'r', appid: u.channel.id, ...json },
        })
      ).body.errorDescription as string;
    expect(await bad({ name: undefined })).toBe('name: required');
    expect(await bad({ name: '   ' })).toMatch(/^name: /);
    expect(await bad({ appid: undefined })).toBe('appid: required');
    expect(await bad({ appid: 999_999 })).toBe('appid: no such channel');
    expect(await bad({ method: 'DELETE' })).toMatch(/^method: /);
    expect(await bad({ pathPattern: 'no-slash' })).toMatch(/^pathPattern: /);
    expect(await bad({ pathPattern: '/a?b=1' })).toMatch(/^pathPattern: /);
    expect(await bad({ pathPattern: '/a**' })).toMatch(/^pathPattern: /);
    expect(await bad({ match: 'x' })).toMatch(/^match: /);
    expect(await bad({ match: [{ path: 'ref', op: 'equals', value: 1 }] })).toBe(
      'match[0].path: must start with $',
    );
    expect(await bad({ match: [{ path: '$.a', op: 'equals' }] })).toBe('match[0].value: required');
    expect(
      await bad({
        match: [
          { path: '$.a', op: 'exists' },
          { path: '$.b', op: 'like' },
        ],
      }),
    ).toMatch(/^match\[1\]\.op: /);
    expect(await bad({ match: [{ path: '$.a[', op: 'exists' }] })).toMatch(/^match\[0\]\.path: /);
    expect(await bad({ match: Array.from({ length: 11 }, () => ({ path: '$.a', op: 'exists' })) })).toBe(
      'match: at most 10 conditions',
    );
    expect(await bad({ title: 'x'.repeat(1_001) })).toMatch(/^title: /);
    expect(await bad({ message: 'x'.repeat(10_001) })).toMatch(/^message: /);
    expect(await bad({ priority: 11 })).toMatch(/^priority: /);
    expect(await bad({ position: 0 })).toMatch(/^position: /);
    expect(await bad({ enabled: 'no' })).toMatch(/^enabled: /);
  });

  it('positions stay 1..n: insert at a position, move with PUT position, close gaps on delete', async () => {
    const u = await routerUser(t);
    const a = await addRule(t, u.device.token, { name: 'a', appid: u.channel.id });
    const b = await addRule(t, u.device.token, { name: 'b', appid: u.channel.id });
    const c = await addRule(t, u.device.token, { name: 'c', appid: u.channel.id, position: 1 });
    const order = async () =>
      ok<{ name: string; position: number }[]>(
        await t.request('GET', '/webhook-router/rule', { token: u.device.token }),
        'list',
      ).map((r) => `${r.position}:${r.name}`);
    expect(await order()).toEqual(['1:c', '2:a', '3:b']);
    await t.request('PUT', `/webhook-router/rule/${c.id}`, { token: u.device.token, json: { position: 99 } });
    expect(await order()).toEqual(['1:a', '2:b', '3:c']);
    await t.request('PUT', `/webhook-router/rule/${b.id}`, {
      token: u.device.token,
      json: { position: 1, name: 'b2' },
    });
    expect(await order()).toEqual(['1:b2', '2:a', '3:c']);
    expect(
      ok(await t.request('DELETE', `/webhook-router/rule/${a.id}`, { token: u.device.token }), 'del'),
    ).toEqual({});
    expect(await order()).toEqual(['1:b2', '2:c']);
    expect(
      (await t.request('DELETE', `/webhook-router/rule/${a.id}`, { token: u.device.token })).body
        .errorDescription,
    ).toBe('router rule not found');
  });

  it('PUT changes only the fields sent; null clears method, message and priority', async () => {
    const u = await routerUser(t);
    const r = await addRule(t, u.device.token, {
      name: 'r',
      appid: u.channel.id,
      method: 'POST',
      message: '{{x}}',
      priority: 9,
      match: [{ path: '$.x', op: 'exists' }],
    });
    const changed = ok(
      await t.request('PUT', `/webhook-router/rule/${r.id}`, {
        token: u.device.token,
        json: { method: null, message: null, priority: null, title: 'T' },
      }),
      'put',
    );
    expect(changed).toEqual({ ...r, method: null, message: null, priority: null, title: 'T' });
  });

  it('at most 200 rules per user: 403 limit reached', async () => {
    const u = await routerUser(t);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => {
      for (let i = 1; i <= 200; i++)
        ctx.db.run(
          `INSERT INTO router_rules (user_id, channel_id, name, path_pattern, title, position, created_at)
           VALUES (?, ?, ?, '**', '', ?, 0)`,
          [u.user.id, u.channel.id, `r${i}`, i],
        );
    });
    const res = await t.request('POST', '/webhook-router/rule', {
      token: u.device.token,
      json: { name: 'x', appid: u.channel.id },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('limit reached: at most 200 router rules per user');
  });

  it("someone else's rule and event are 404", async () => {
    const a = await routerUser(t);
    const b = await routerUser(t);
    const rule = await addRule(t, a.device.token, { name: 'a', appid: a.channel.id });
    const ev = ok(await t.request('POST', `/router/${a.token}/x`, { json: { action: 'opened' } }), 'ingest');
    for (const [method, path, what] of [
      ['PUT', `/webhook-router/rule/${rule.id}`, 'router rule'],
      ['DELETE', `/webhook-router/rule/${rule.id}`, 'router rule'],
      ['GET', `/webhook-router/event/${ev.id}`, 'router event'],
      ['DELETE', `/webhook-router/event/${ev.id}`, 'router event'],
      ['POST', `/webhook-router/rule/from-event/${ev.id}`, 'router event'],
      ['DELETE', `/webhook-router/message/${ev.messageId}`, 'message'],
    ] as const) {
      const res = await t.request(method, path, {
        token: b.device.token,
        ...(method === 'GET' ? {} : { json: {} }),
      });
      expect([path, res.status, res.body.errorDescription]).toEqual([path, 404, `${what} not found`]);
    }
    expect(
      ok(await t.request('GET', '/webhook-router/event', { token: b.device.token }), 'b events').events,
    ).toEqual([]);
  });

  it('deleting a channel deletes its rules and clears defaultAppid; the router then keeps events only', async () => {
    const u = await routerUser(t);
    const other = await makeChannel(t, u.device.token, { name: 'other' });
    const gone = await addRule(t, u.device.token, { name: 'gone', appid: u.channel.id, pathPattern: '/a' });
    const stays = await addRule(t, u.device.token, { name: 'stays', appid: other.id, pathPattern: '/b' });
    await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: u.channel.id },
    });
    // The compiled rules are cached: one ingest before the delete fills the cache.
    expect((await t.request('POST', `/router/${u.token}/a`, { json: {} })).body.matchedRuleId).toBe(gone.id);
    expect(
      (await t.request('DELETE', `/application/${u.channel.id}`, { token: u.device.token })).status,
    ).toBe(200);
    const rules = ok(await t.request('GET', '/webhook-router/rule', { token: u.device.token }), 'rules');
    expect(rules.map((r: { id: number; position: number }) => r.id)).toEqual([stays.id]);
    expect(
      ok(await t.request('GET', '/webhook-router', { token: u.device.token }), 'router').defaultAppid,
    ).toBeNull();
    expect((await t.request('POST', `/router/${u.token}/a`, { json: {} })).body).toEqual({
      id: expect.any(Number),
      matchedRuleId: null,
      messageId: null,
    });
    expect((await t.request('POST', `/router/${u.token}/b`, { json: {} })).body.matchedRuleId).toBe(stays.id);
  });

  it("rules appear in their channel's event sources as router-rule, the router in its default channel's", async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, { name: 'CI', appid: u.channel.id, enabled: false });
    await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: u.channel.id },
    });
    t.clock.advance(1_000);
    await t.request('POST', `/router/${u.token}/x`, { json: {} });
    const res = ok(
      await t.request('GET', `/application/${u.channel.id}/event-sources`, { token: u.device.token }),
      'sources',
    );
    expect(res.sources).toEqual([
      {
        kind: 'router-rule',
        id: rule.id,
        name: 'CI',
        appid: u.channel.id,
        status: 'paused',
        paused: true,
        lastCheckAt: null,
      },
      {
        kind: 'webhook-router',
        id: expect.any(Number),
        name: 'Webhook router',
        appid: u.channel.id,
        status: 'active',
        paused: false,
        lastCheckAt: new Date(t.clock.now()).toISOString(),
      },
    ]);
  });
});

describe('router events, messages and drafts', () => {
  it('GET /webhook-router/event pages newest first with limit and since like GET /message', async () => {
    const u = await routerUser(t);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(ok(await t.request('POST', `/router/${u.token}/p${i}`, { json: { i } }), 'ingest').id);
    const page1 = ok(
      await t.request('GET', '/webhook-router/event?limit=2', { token: u.device.token }),
      'p1',
    );
    expect(page1.paging).toEqual({
      size: 2,
      limit: 2,
      since: ids[3],
      next: expect.stringContaining(`/webhook-router/event?limit=2&since=${ids[3]}`),
    });
    expect(page1.events.map((e: { id: number; path: string }) => [e.id, e.path])).toEqual([
      [ids[4], '/p4'],
      [ids[3], '/p3'],
    ]);
    const page3 = ok(
      await t.request('GET', `/webhook-router/event?limit=2&since=${ids[1]}`, { token: u.device.token }),
      'p3',
    );
    expect(page3).toMatchObject({ paging: { size: 1, limit: 2 }, events: [{ id: ids[0], body: { i: 0 } }] });
    expect(page3.paging).not.toHaveProperty('next');
    expect((await t.request('GET', '/webhook-router/event?limit=0', { token: u.device.token })).status).toBe(
      400,
    );
    expect(
      ok(await t.request('DELETE', `/webhook-router/event/${ids[0]}`, { token: u.device.token }), 'del'),
    ).toEqual({});
    expect(
      (await t.request('GET', `/webhook-router/event/${ids[0]}`, { token: u.device.token })).status,
    ).toBe(404);
  });

  it('GET /webhook-router/message lists routed messages with routerEventId and ruleId; DELETE removes one', async () => {
    const u = await routerUser(t);
    const rule = await addRule(t, u.device.token, { name: 'r', appid: u.channel.id, pathPattern: '/r' });
    await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: u.channel.id },
    });
    const e1 = ok(await t.request('POST', `/router/${u.token}/r`, { json: { a: 1 } }), 'e1');
    const e2 = ok(await t.request('POST', `/router/${u.token}/other`, { json: { a: 2 } }), 'e2');
    // An ordinary message in the same channel is not the router's.
    await t.request('POST', '/message', { token: u.channel.token, json: { message: 'not routed' } });
    const list = ok(await t.request('GET', '/webhook-router/message', { token: u.device.token }), 'list');
    expect(list.paging).toEqual({ size: 2, limit: 100 });
    expect(list.messages).toEqual([
      expect.objectContaining({
        id: e2.messageId,
        routerEventId: e2.id,
        ruleId: null,
        senderName: 'Webhook router',
      }),
      expect.objectContaining({
        id: e1.messageId,
        routerEventId: e1.id,
        ruleId: rule.id,
        senderName: 'r',
        title: 'POST /r',
      }),
    ]);
    const page = ok(
      await t.request('GET', '/webhook-router/message?limit=1', { token: u.device.token }),
      'page',
    );
    expect(page.paging.since).toBe(e2.messageId);
    expect(
      ok(
        await t.request('DELETE', `/webhook-router/message/${e1.messageId}`, { token: u.device.token }),
        'del',
      ),
    ).toEqual({});
    const after = ok(await t.request('GET', '/webhook-router/message', { token: u.device.token }), 'after');
    expect(after.messages.map((m: { id: number }) => m.id)).toEqual([e2.messageId]);
    const plain = ok(await t.request('GET', '/message', { token: u.device.token }), 'plain');
    const notRouted = plain.messages.find((m: { message: string }) => m.message === 'not routed');
    expect(
      (await t.request('DELETE', `/webhook-router/message/${notRouted.id}`, { token: u.device.token }))
        .status,
    ).toBe(404);
  });

  it('from-event drafts a rule from the first of action, event, type, status, object_kind and the text keys', async () => {
    const u = await routerUser(t);
    await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: u.channel.id },
    });
    const draft = async (path: string, body: unknown, method = 'POST') => {
      const ev = ok(await t.request(method, `/router/${u.token}${path}`, { json: body }), 'ingest');
      return ok(
        await t.request('POST', `/webhook-router/rule/from-event/${ev.id}`, {
          token: u.device.token,
          json: {},
        }),
        'draft',
      ).rule;
    };
    const cases: [unknown, string | null][] = [
      [{ object_kind: 'k', status: 's', type: 't', event: 'e', action: 'a' }, 'action'],
      [{ object_kind: 'k', status: 's', type: 't', event: 'e' }, 'event'],
      [{ object_kind: 'k', status: 's', type: 't' }, 'type'],
      [{ object_kind: 'k', status: 's' }, 'status'],
      [{ object_kind: 'k' }, 'object_kind'],
      [{ action: 7, status: { nested: true } }, null],
    ];
    for (const [body, key] of cases) {
      const rule = await draft('/d', body);
      const value = key === null ? undefined : (body as Record<string, string>)[key];
      expect([key, rule.match]).toEqual([
        key,
        key === null ? [] : [{ path: `$.${key}`, op: 'equals', value }],
      ]);
    }
    const gh = fixture('github-workflow-run');
    const ev = ok(await deliver(t, u.token, '/github', gh), 'gh');
    const ghDraft = ok(
      await t.request('POST', `/webhook-router/rule/from-event/${ev.id}`, {
        token: u.device.token,
        json: { save: false },
      }),
      'draft',
    ).rule;
    expect(ghDraft).toEqual({
      id: null,
      name: 'POST /github (action completed)',
      appid: u.channel.id,
      pathPattern: '/github',
      method: 'POST',
      match: [{ path: '$.action', op: 'equals', value: 'completed' }],
      title: '{{method}} {{path}}',
      message: null,
      priority: null,
      enabled: true,
      position: null,
      createdAt: null,
    });
    // Title and text keys, each in its order.
    const titles: [Record<string, string>, string][] = [
      [{ name: 'n', summary: 's', subject: 'j', title: 't' }, '{{title}}'],
      [{ name: 'n', summary: 's', subject: 'j' }, '{{subject}}'],
      [{ name: 'n', summary: 's' }, '{{summary}}'],
      [{ name: 'n' }, '{{name}}'],
    ];
    for (const [body, title] of titles) expect((await draft('/t', body)).title).toBe(title);
    const texts: [Record<string, string>, string][] = [
      [{ description: 'd', text: 'x', message: 'm' }, '{{message}}'],
      [{ description: 'd', text: 'x' }, '{{text}}'],
      [{ description: 'd' }, '{{description}}'],
    ];
    for (const [body, message] of texts) expect((await draft('/m', body)).message).toBe(message);
    // Nothing saved by drafting.
    expect(ok(await t.request('GET', '/webhook-router/rule', { token: u.device.token }), 'rules')).toEqual(
      [],
    );
  });

  it('from-event with save creates the rule (then appid must be valid), and it routes the next such event', async () => {
    const u = await routerUser(t);
    const stripe = fixture('stripe-event');
    const ev = ok(await deliver(t, u.token, '/stripe', stripe), 'ingest');
    const noDefault = await t.request('POST', `/webhook-router/rule/from-event/${ev.id}`, {
      token: u.device.token,
      json: { save: true },
    });
    expect([noDefault.status, noDefault.body.errorDescription]).toEqual([400, 'appid: no such channel']);
    await t.request('PUT', '/webhook-router', {
      token: u.device.token,
      json: { defaultAppid: u.channel.id },
    });
    const saved = ok(
      await t.request('POST', `/webhook-router/rule/from-event/${ev.id}`, {
        token: u.device.token,
        json: { save: true },
      }),
      'save',
    ).rule;
    expect(saved).toMatchObject({
      id: expect.any(Number),
      appid: u.channel.id,
      pathPattern: '/stripe',
      method: 'POST',
      match: [{ path: '$.type', op: 'equals', value: 'invoice.payment_failed' }],
      position: 1,
    });
    expect((await deliver(t, u.token, '/stripe', stripe)).body.matchedRuleId).toBe(saved.id);
  });

  it('retention: events older than 30 days go, and all but the newest 1,000 of a user', async () => {
    const u = await routerUser(t);
    const ctx = t.server.ctx;
    const now = t.clock.now();
    const insert = (n: number, at: number) =>
      ctx.db.transaction(() => {
        for (let i = 0; i < n; i++)
          ctx.db.run(
            `INSERT INTO router_events (user_id, path, method, query, headers, body_kind, size, received_at)
             VALUES (?, '/old', 'GET', '{}', '{}', 'none', 0, ?)`,
            [u.user.id, at],
          );
      });
    insert(5, now - 31 * 86_400_000);
    insert(1_003, now - 86_400_000);
    const young = ok(await t.request('POST', `/router/${u.token}/young`, { json: {} }), 'young').id;
    const count = () =>
      ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM router_events WHERE user_id = ?', [u.user.id])!
        .n;
    expect(count()).toBe(1_009);
    await t.server.scheduler.runNow('retention');
    expect(count()).toBe(1_000);
    const newest = ok(
      await t.request('GET', '/webhook-router/event?limit=1', { token: u.device.token }),
      'newest',
    );
    expect(newest.events[0].id).toBe(young);
    const oldest = ctx.db.first<{ at: number }>(
      'SELECT MIN(received_at) AS at FROM router_events WHERE user_id = ?',
      [u.user.id],
    )!.at;
    expect(oldest).toBe(now - 86_400_000);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import { request, startTestServer, type TestServer } from '../helpers/test-server';
import { addRule, deliver, fixture, ok, routerUser } from './router-helpers';

/**
 * A router rule (or the default channel) on a channel shared with the router's owner, when the owner
 * loses `send` there (§0.3: revoke, leave, downgrade): the rule is paused (disabled), the default channel
 * is cleared, and routed events no longer post into the channel: they fall through to the next rule, the
 * default channel, or stay unmatched (event only). Also: how an event's text survives storage and replay.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

type Loss = 'revoke' | 'leave' | 'downgrade';

/** A channel of another user shared with `recipient` with `send`, accepted; `lose` takes `send` away. */
async function sharedChannel(recipient: { user: { email: string }; device: { token: string } }) {
  const owner = makeUser(t);
  const ownerDev = (await deviceToken(t, owner)).token;
  const c = await makeChannel(t, ownerDev, { name: 'team' });
  const share = ok<{ id: number }>(
    await t.request('POST', `/application/${c.id}/share`, {
      token: ownerDev,
      json: { email: recipient.user.email, permission: 'send' },
    }),
    'share',
  );
  ok(await t.request('POST', `/share/${share.id}/accept`, { token: recipient.device.token }), 'accept');
  const lose = async (how: Loss) => {
    const res =
      how === 'revoke'
        ? await t.request('DELETE', `/share/${share.id}`, { token: ownerDev })
        : how === 'leave'
          ? await t.request('POST', '/share/leave', { token: recipient.device.token, json: { appid: c.id } })
          : await t.request('PUT', `/share/${share.id}`, { token: ownerDev, json: { permission: 'view' } });
    ok(res, how);
  };
  return { id: c.id, lose };
}

function countIn(appid: number): number {
  return t.server.ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE channel_id = ?', [
    appid,
  ])!.n;
}

describe('router rules on a shared channel that the owner loses', () => {
  for (const how of ['revoke', 'leave', 'downgrade'] as const)
    it(`${how}: the rule is disabled and routed events go to the default channel instead`, async () => {
      const u = await routerUser(t);
      const shared = await sharedChannel(u);
      const push = fixture('github-push');
      const rule = await addRule(t, u.device.token, {
        name: 'to the team',
        appid: shared.id,
        pathPattern: '/github',
      });
      ok(
        await t.request('PUT', '/webhook-router', {
          token: u.device.token,
          json: { defaultAppid: u.channel.id },
        }),
        'put',
      );
      const before = ok<{ matchedRuleId: number; messageId: number }>(
        await deliver(t, u.token, '/github', push),
        'ingest',
      );
      expect(before.matchedRuleId).toBe(rule.id);
      expect(countIn(shared.id)).toBe(1);

      await shared.lose(how);
      const rules = ok<{ id: number; enabled: boolean }[]>(
        await t.request('GET', '/webhook-router/rule', { token: u.device.token }),
        'rules',
      );
      expect(rules.find((r) => r.id === rule.id)?.enabled).toBe(false);
      const after = ok<{ id: number; matchedRuleId: number | null; messageId: number | null }>(
        await deliver(t, u.token, '/github', push),
        'ingest',
      );
      expect(after).toEqual({ id: expect.any(Number), matchedRuleId: null, messageId: expect.any(Number) });
      expect(countIn(shared.id)).toBe(1);
      const event = ok<{ appid: number | null }>(
        await t.request('GET', `/webhook-router/event/${after.id}`, { token: u.device.token }),
        'event',
      );
      expect(event.appid).toBe(u.channel.id);
      // Re-enabling the rule is refused while the channel is not routable for the owner.
      const reenable = await t.request('PUT', `/webhook-router/rule/${rule.id}`, {
        token: u.device.token,
        json: { appid: shared.id, enabled: true },
      });
      expect(reenable.status).toBe(400);
      expect(reenable.body.errorDescription).toBe('appid: no such channel');
    });

  it('a later rule still matches when the first one lost its channel', async () => {
    const u = await routerUser(t);
    const shared = await sharedChannel(u);
    await addRule(t, u.device.token, { name: 'team', appid: shared.id, pathPattern: '/github' });
    const mine = await addRule(t, u.device.token, { name: 'mine', appid: u.channel.id, pathPattern: '/**' });
    await shared.lose('revoke');
    const after = ok<{ matchedRuleId: number; messageId: number }>(
      await deliver(t, u.token, '/github', fixture('github-push')),
      'ingest',
    );
    expect(after.matchedRuleId).toBe(mine.id);
    expect(countIn(shared.id)).toBe(0);
    expect(countIn(u.channel.id)).toBe(1);
  });

  it('a default channel that is lost becomes null: unmatched events are stored without a message', async () => {
    const u = await routerUser(t);
    const shared = await sharedChannel(u);
    ok(
      await t.request('PUT', '/webhook-router', { token: u.device.token, json: { defaultAppid: shared.id } }),
      'put',
    );
    const before = ok<{ messageId: number }>(
      await deliver(t, u.token, '/anything', fixture('stripe-event')),
      'in',
    );
    expect(before.messageId).toEqual(expect.any(Number));
    await shared.lose('downgrade');
    const router = ok<{ defaultAppid: number | null }>(
      await t.request('GET', '/webhook-router', { token: u.device.token }),
      'router',
    );
    expect(router.defaultAppid).toBeNull();
    const after = ok<{ matchedRuleId: number | null; messageId: number | null }>(
      await deliver(t, u.token, '/anything', fixture('stripe-event')),
      'in',
    );
    expect(after).toMatchObject({ matchedRuleId: null, messageId: null });
    expect(countIn(shared.id)).toBe(1);
  });
});

describe('event storage', () => {
  it('non-ASCII bodies and headers are stored as text and come back the same after a restart (journal replay)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-router-'));
    const own = await startTestServer({ dataDir });
    try {
      const u = await routerUser(own);
      const body = { title: 'Zürich 東京 🚀', lone: 'a\ud800b' };
      const res = await own.request('POST', `/router/${u.token}/intl?q=${encodeURIComponent('ä')}`, {
        headers: { 'content-type': 'application/json', 'x-note': 'caf\u00e9' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      const id = (res.body as { id: number }).id;
      const row = () =>
        own.server.ctx.db.first<{ h: string; b: string; tb: string }>(
          'SELECT typeof(headers) AS h, typeof(body) AS b, body AS tb FROM router_events WHERE id = ?',
          [id],
        );
      expect(row()).toMatchObject({ h: 'text', b: 'text' });
      const before = ok<{ body: unknown; headers: Record<string, string>; query: unknown }>(
        await own.request('GET', `/webhook-router/event/${id}`, { token: u.device.token }),
        'event',
      );
      // JSON.stringify escapes a lone surrogate (\ud800), so the stored text is well-formed and equal.
      expect(before.body).toEqual(body);
      expect(before.headers['x-note']).toBe('café');
      expect(before.query).toEqual({ q: 'ä' });
      await own.close();
      const again = await startTestServer({ dataDir, clock: own.clock });
      try {
        const after = await request(again.url, 'GET', `/webhook-router/event/${id}`, {
          token: u.device.token,
        });
        expect(after.body).toEqual(before);
      } finally {
        await again.close();
      }
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

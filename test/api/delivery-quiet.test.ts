import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/lib/clock';
import { deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { type FakeDeliveryAdapter, installFakeAdapter } from '../helpers/fake-delivery-adapter';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Quiet hours on the server (wire rules §6.4): held entries, breakthrough, release, the digest.

let t: TestServer;
let hook: FakeDeliveryAdapter;
let slack: FakeDeliveryAdapter;

const iso = (ms: number) => new Date(ms).toISOString();
const WEBHOOK = { url: 'https://example.com/hook', delaySec: 0 };
const SLACK = { webhookUrl: 'https://hooks.slack.example/T/B/x', delaySec: 0 };

beforeEach(async () => {
  // 2026-01-16 is a Friday.
  t = await startTestServer({ clock: new ManualClock(Date.parse('2026-01-16T12:00:00Z')) });
  hook = installFakeAdapter(t, 'webhook');
  slack = installFakeAdapter(t, 'slack');
});
afterEach(async () => {
  await t.close();
});

async function at(instant: string) {
  t.clock.set(Date.parse(instant));
  await t.server.scheduler.tick();
}

async function user(quiet: Record<string, unknown>) {
  const dev = (await deviceToken(t, makeUser(t))).token;
  const res = await t.request('PUT', '/current/user/quiet-hours', {
    token: dev,
    json: { enabled: true, ...quiet },
  });
  expect(res.status, res.text).toBe(200);
  return dev;
}

async function log(dev: string, appid: number) {
  return (await t.request('GET', `/application/${appid}/deliveries`, { token: dev })).body
    .deliveries as Record<string, unknown>[];
}

describe('quiet hours hold re-deliveries (§6.4)', () => {
  it('holds below breakthroughPriority until the window end on a DST day in Europe/Berlin, then sends (digest off)', async () => {
    // 2026-03-29: Berlin moves from CET (UTC+1) to CEST (UTC+2) at 02:00; 08:00 local is 06:00 UTC.
    await at('2026-03-28T21:00:00Z');
    const dev = await user({
      timezone: 'Europe/Berlin',
      start: '23:00',
      end: '08:00',
      breakthroughPriority: 8,
    });
    const ch = await makeChannel(t, dev, { deliveryConfig: { webhook: WEBHOOK } });
    await at('2026-03-28T22:30:00Z'); // 23:30 CET
    const low = await sendMessage(t, ch.token, { priority: 7 });
    const urgent = await sendMessage(t, ch.token, { priority: 8 });
    await t.server.scheduler.tick();
    expect(hook.sends.map((s) => s.item.messageId)).toEqual([urgent.id]);
    const held = (await log(dev, ch.id)).find((d) => d.messageId === low.id)!;
    expect(held).toMatchObject({
      status: 'queued',
      attempts: 0,
      heldUntil: '2026-03-29T06:00:00.000Z',
      nextAttemptAt: '2026-03-29T06:00:00.000Z',
    });
    await at('2026-03-29T05:59:59Z');
    expect(hook.sends).toHaveLength(1);
    await at('2026-03-29T06:00:00Z');
    expect(hook.sends.map((s) => s.item.messageId)).toEqual([urgent.id, low.id]);
    expect((await log(dev, ch.id)).find((d) => d.messageId === low.id)).toMatchObject({
      status: 'sent',
      sentAt: '2026-03-29T06:00:00.000Z',
    });
  });

  it('turning quiet hours off releases held entries at once', async () => {
    const dev = await user({ timezone: 'UTC', start: '11:00', end: '15:00' });
    const ch = await makeChannel(t, dev, { deliveryConfig: { webhook: WEBHOOK } });
    const m = await sendMessage(t, ch.token, { priority: 3 });
    await t.server.scheduler.tick();
    expect((await log(dev, ch.id))[0]).toMatchObject({
      status: 'queued',
      heldUntil: '2026-01-16T15:00:00.000Z',
    });
    await t.request('PUT', '/current/user/quiet-hours', { token: dev, json: { enabled: false } });
    await t.server.scheduler.tick();
    expect(hook.sends.map((s) => s.item.messageId)).toEqual([m.id]);
    expect((await log(dev, ch.id))[0]).toMatchObject({
      status: 'sent',
      heldUntil: null,
      sentAt: iso(t.clock.now()),
    });
  });

  it('at the end of a midnight-spanning window with digest on: one digest per channel and adapter and one internal message', async () => {
    // Friday only: Friday 22:00 to Saturday 06:00 UTC is quiet, Saturday night is not.
    const dev = await user({ timezone: 'UTC', start: '22:00', end: '06:00', days: [5], digest: true });
    const ops = await makeChannel(t, dev, {
      name: 'ops',
      deliveryConfig: { webhook: WEBHOOK, slack: SLACK },
    });
    const web = await makeChannel(t, dev, { name: 'web', deliveryConfig: { webhook: WEBHOOK } });
    await at('2026-01-16T23:00:00Z');
    const a = await sendMessage(t, ops.token, { title: 'Disk', message: 'full', priority: 5 });
    await at('2026-01-17T01:30:00Z');
    const b = await sendMessage(t, ops.token, { title: 'Load', message: 'x'.repeat(300), priority: 5 });
    const c = await sendMessage(t, web.token, { title: '5xx', message: 'errors up', priority: 5 });
    const read = await sendMessage(t, web.token, { title: 'seen', message: 'already', priority: 5 });
    await t.server.scheduler.tick();
    await t.request('POST', '/message/read', { token: dev, json: { ids: [read.id] } });
    expect(hook.sends).toEqual([]);
    expect(slack.sends).toEqual([]);
    await at('2026-01-17T06:00:00Z');
    const digests = [...hook.sends, ...slack.sends].map((s) => ({
      adapter: s === slack.sends[0] ? 'slack' : 'webhook',
      channel: s.item.channel.name,
      kind: s.item.kind,
      messageId: s.item.messageId,
      title: s.item.title,
      message: s.item.message,
      read: s.item.links.read,
    }));
    expect(digests).toEqual(
      expect.arrayContaining([
        {
          adapter: 'webhook',
          channel: 'ops',
          kind: 'digest',
          messageId: null,
          title: 'Digest: 2 messages held during quiet hours',
          message: `- 23:00 Disk: full\n- 01:30 Load: ${'x'.repeat(199)}…`,
          read: null,
        },
        {
          adapter: 'slack',
          channel: 'ops',
          kind: 'digest',
          messageId: null,
          title: 'Digest: 2 messages held during quiet hours',
          message: `- 23:00 Disk: full\n- 01:30 Load: ${'x'.repeat(199)}…`,
          read: null,
        },
        {
          adapter: 'webhook',
          channel: 'web',
          kind: 'digest',
          messageId: null,
          title: 'Digest: 1 message held during quiet hours',
          message: '- 01:30 5xx: errors up',
          read: null,
        },
      ]),
    );
    expect(digests).toHaveLength(3);
    const opsLog = await log(dev, ops.id);
    expect(opsLog.filter((d) => d.kind === 'redelivery').map((d) => [d.status, d.cancelReason])).toEqual([
      ['cancelled', 'digest'],
      ['cancelled', 'digest'],
      ['cancelled', 'digest'],
      ['cancelled', 'digest'],
    ]);
    expect(opsLog.filter((d) => d.kind === 'digest').map((d) => [d.adapter, d.status, d.messageId])).toEqual([
      ['slack', 'sent', null],
      ['webhook', 'sent', null],
    ]);
    expect((await log(dev, web.id)).find((d) => d.messageId === read.id)).toMatchObject({
      cancelReason: 'read',
    });
    const inbox = await t.request('GET', '/message?limit=100', { token: dev });
    const notices = inbox.body.messages.filter(
      (m: { extras?: Record<string, unknown> }) => m.extras?.['service::digest'],
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      title: 'Digest: 3 messages held during quiet hours',
      priority: 5,
      message: `- [ops] 23:00 Disk: full\n- [ops] 01:30 Load: ${'x'.repeat(199)}…\n- [web] 01:30 5xx: errors up`,
      extras: {
        'service::digest': {
          from: '2026-01-16T22:00:00.000Z',
          to: '2026-01-17T06:00:00.000Z',
          count: 3,
          messageIds: [a.id, b.id, c.id],
        },
      },
    });
    // Saturday night is not in the window (days count by the start day): sent at once.
    await at('2026-01-17T23:00:00Z');
    const late = await sendMessage(t, web.token, { priority: 5 });
    await t.server.scheduler.tick();
    expect(hook.sends.at(-1)!.item.messageId).toBe(late.id);
  });

  it('the digest lists at most 50 lines, then `… and {k} more`', async () => {
    const dev = await user({ timezone: 'UTC', start: '11:00', end: '13:00', digest: true });
    const ch = await makeChannel(t, dev, { deliveryConfig: { webhook: WEBHOOK } });
    for (let i = 0; i < 53; i++)
      await sendMessage(t, ch.token, { title: `m${i}`, message: 'x', priority: 1 });
    await t.server.scheduler.tick();
    await at('2026-01-16T13:00:00Z');
    expect(hook.sends).toHaveLength(1);
    const lines = hook.sends[0]!.item.message.split('\n');
    expect(lines).toHaveLength(51);
    expect(lines[49]).toBe('- 12:00 m49: x');
    expect(lines[50]).toBe('… and 3 more');
  });
});

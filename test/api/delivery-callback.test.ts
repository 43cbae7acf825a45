import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackBody, enqueueCallback } from '../../server/delivery/outbox/callbacks';
import { buildInfo } from '../../server/lib/version';
import { deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { type FakeHttp, type RecordedRequest, startFakeHttp } from '../helpers/fake-http';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Question callbacks (wire rules §7.5) through the real outbox and HTTP client to a loopback receiver that
// checks each request as a real receiver would: the headers, the exact body, and the HMAC signature.

let t: TestServer;
let rx: FakeHttp;
let dev: string;
let adminId: number;

const SEC = 1_000;
const HOUR = 3_600 * SEC;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer({ config: { retryBaseSec: 1 } });
  rx = await startFakeHttp();
  dev = (await deviceToken(t)).token;
  adminId = t.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [
    t.admin.email,
  ])!.id;
});
afterAll(async () => {
  await t.close();
  await rx.close();
});

async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

async function log(s: TestServer, token: string, appid: number, query = '') {
  const res = await s.request('GET', `/application/${appid}/deliveries${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.deliveries as Record<string, unknown>[];
}

let seq = 0;
/** A channel, a message in it, a body and a receiver path of their own; the receiver answers `replies` in turn (then 200). */
async function setup(replies: { status: number; headers?: Record<string, string>; body?: unknown }[] = []) {
  const ch = await makeChannel(t, dev);
  const m = await sendMessage(t, ch.token, { title: 'Deploy?', message: 'ship it' });
  const path = `/cb/${++seq}/`;
  const left = [...replies];
  rx.on('POST', path, () => left.shift() ?? { status: 200 });
  const body: CallbackBody = {
    id: 900 + seq,
    status: 'answered',
    answer: { choice: 'ja ✓', note: 'ünïcode "quoted"' },
    answeredAt: iso(t.clock.now()),
    clientMessageId: `cm-${seq}`,
  };
  return {
    ch,
    m,
    path,
    url: `${rx.url}${path}`,
    body,
    requests: () => rx.requests.filter((r) => r.path === path),
  };
}

function enqueue(
  s: TestServer,
  over: {
    userId: number;
    appid: number;
    messageId: number | null;
    url: string;
    secret: string | null;
    body: CallbackBody;
  },
): number {
  const ctx = s.server.ctx;
  return ctx.db.transaction(() => enqueueCallback(ctx, over));
}

/** What a receiver checks: method, headers, the exact body bytes, the timestamp of this attempt, the signature. */
function verify(
  req: RecordedRequest,
  want: { entryId: number; body: CallbackBody; secret: string | null; sentAtMs: number },
): void {
  expect(req.method).toBe('POST');
  expect(req.headers['content-type']).toBe('application/json');
  expect(req.headers['user-agent']).toBe(`Belfry/${buildInfo(t.server.ctx.config).version}`);
  expect(req.headers['x-belfry-delivery']).toBe(String(want.entryId));
  const ts = req.headers['x-belfry-timestamp'] as string;
  expect(ts).toBe(String(Math.floor(want.sentAtMs / 1000)));
  expect(req.body).toBe(JSON.stringify(want.body));
  expect(req.json()).toEqual(want.body);
  const sig = req.headers['x-belfry-signature'];
  if (want.secret === null) {
    expect(sig).toBeUndefined();
    return;
  }
  expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
  const expected = createHmac('sha256', want.secret).update(`${ts}.${req.body}`).digest();
  const given = Buffer.from((sig as string).slice('sha256='.length), 'hex');
  expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
}

describe('sending (§7.5)', () => {
  it('a due callback is POSTed signed, marked sent and shown in the channel’s deliveries log', async () => {
    const s = await setup();
    const created = t.clock.now();
    const id = enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: 'k3y',
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect(s.requests()).toHaveLength(1);
    verify(s.requests()[0]!, { entryId: id, body: s.body, secret: 'k3y', sentAtMs: created });
    expect(await log(t, dev, s.ch.id)).toEqual([
      {
        id,
        messageId: s.m.id,
        appid: s.ch.id,
        adapter: 'callback',
        kind: 'callback',
        status: 'sent',
        attempts: 1,
        createdAt: iso(created),
        nextAttemptAt: null,
        heldUntil: null,
        lastAttemptAt: iso(created),
        lastError: null,
        sentAt: iso(created),
      },
    ]);
    expect((await log(t, dev, s.ch.id, '?status=sent')).map((d) => d.id)).toEqual([id]);
    // The secret is sealed at rest.
    const payload = t.server.ctx.db.first<{ payload: string }>(
      'SELECT payload FROM deliveries WHERE id = ?',
      [id],
    )!;
    expect(payload.payload).not.toContain('k3y');
  });

  it('a callback without a secret has a timestamp and no signature header', async () => {
    const s = await setup();
    const id = enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect(s.requests()).toHaveLength(1);
    verify(s.requests()[0]!, { entryId: id, body: s.body, secret: null, sentAtMs: t.clock.now() });
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({ id, status: 'sent' });
  });

  it('a 503 is retried after BASE·2^(n−1) s with the same X-Belfry-Delivery, the same body and a new timestamp', async () => {
    const s = await setup([
      { status: 503, body: { message: 'busy' } },
      { status: 500, body: 'oops' },
    ]);
    const first = t.clock.now();
    const id = enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: 's',
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: 'HTTP 503: busy',
      lastAttemptAt: iso(first),
      nextAttemptAt: iso(first + 1 * SEC),
    });
    await advance(999);
    expect(s.requests()).toHaveLength(1);
    await advance(1);
    const second = t.clock.now();
    expect(s.requests()).toHaveLength(2);
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'queued',
      attempts: 2,
      lastError: 'HTTP 500: oops',
      nextAttemptAt: iso(second + 2 * SEC),
    });
    await advance(2 * SEC);
    const third = t.clock.now();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      id,
      status: 'sent',
      attempts: 3,
      lastError: null,
      sentAt: iso(third),
    });
    const reqs = s.requests();
    expect(reqs).toHaveLength(3);
    for (const [i, at] of [first, second, third].entries())
      verify(reqs[i]!, { entryId: id, body: s.body, secret: 's', sentAtMs: at });
    expect(new Set(reqs.map((r) => r.headers['x-belfry-timestamp'])).size).toBe(3);
  });

  it('a 429 waits for its Retry-After when larger than the backoff, capped at an hour', async () => {
    const s = await setup([
      { status: 429, headers: { 'Retry-After': '120' } },
      { status: 429, headers: { 'Retry-After': '99999' } },
    ]);
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'queued',
      lastError: expect.stringMatching(/^HTTP 429: /),
      nextAttemptAt: iso(t.clock.now() + 120 * SEC),
    });
    await advance(119 * SEC);
    expect(s.requests()).toHaveLength(1);
    await advance(1 * SEC);
    expect(s.requests()).toHaveLength(2);
    expect((await log(t, dev, s.ch.id))[0]!.nextAttemptAt).toBe(iso(t.clock.now() + HOUR));
    await advance(HOUR);
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({ status: 'sent', attempts: 3 });
  });

  it('a 404 fails at once (permanent) and is never tried again', async () => {
    const s = await setup([{ status: 404, body: { error: 'no such hook' } }]);
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'HTTP 404: no such hook',
      nextAttemptAt: null,
    });
    await advance(HOUR);
    expect(s.requests()).toHaveLength(1);
  });

  it('a 302 is not followed: the entry fails at once and the Location is never requested', async () => {
    const s = await setup([{ status: 302, headers: { Location: `${rx.url}/moved-${seq}` } }]);
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'HTTP 302: redirects are not followed',
    });
    await advance(HOUR);
    expect(s.requests()).toHaveLength(1);
    expect(rx.requests.filter((r) => r.path.startsWith('/moved-'))).toEqual([]);
  });

  it('a refused connection is retried with the backoff', async () => {
    const s = await setup();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: `http://127.0.0.1:${port}/cb`,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: `connect ECONNREFUSED 127.0.0.1:${port}`,
      nextAttemptAt: iso(t.clock.now() + 1 * SEC),
    });
    await advance(1 * SEC);
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      status: 'queued',
      attempts: 2,
      nextAttemptAt: iso(t.clock.now() + 2 * SEC),
    });
  });

  it('gives up when the next attempt would be later than createdAt + 24 h', async () => {
    const s = await setup(Array.from({ length: 80 }, () => ({ status: 503, body: { message: 'down' } })));
    const created = t.clock.now();
    // BASE 1: 1, 2, 4 … 2048 s, then 3600 s each; the attempt whose next try would pass created + 24 h fails.
    let at = created;
    let attempts = 0;
    for (let n = 1; ; n++) {
      attempts++;
      const d = Math.min(2 ** (n - 1), 3_600);
      if (at + d * SEC > created + 24 * HOUR) break;
      at += d * SEC;
    }
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    for (let i = 0; i < 80; i++) {
      const [d] = await log(t, dev, s.ch.id);
      if (d!.status !== 'queued') break;
      t.clock.set(Date.parse(d!.nextAttemptAt as string));
      await t.server.scheduler.tick();
    }
    const [d] = await log(t, dev, s.ch.id);
    expect(d).toMatchObject({
      status: 'failed',
      attempts,
      lastError: 'gave up after 24 h: HTTP 503: down',
      lastAttemptAt: iso(at),
      nextAttemptAt: null,
    });
    expect(s.requests()).toHaveLength(attempts);
  });
});

describe('what does not stop a callback, and what does', () => {
  it('a read mark and deleting the message do not cancel a callback waiting for its retry', async () => {
    const s = await setup([{ status: 503, body: { message: 'busy' } }]);
    const id = enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({ id, status: 'queued', attempts: 1 });
    const read = await t.request('POST', '/message/read', { token: dev, json: { ids: [s.m.id] } });
    expect(read.status, read.text).toBe(200);
    const read2 = await t.request('POST', `/application/${s.ch.id}/message/read`, { token: dev, json: {} });
    expect(read2.status, read2.text).toBe(200);
    const del = await t.request('DELETE', `/message/${s.m.id}`, { token: dev });
    expect(del.status, del.text).toBe(200);
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({ id, status: 'queued', messageId: s.m.id });
    await advance(1 * SEC);
    expect(s.requests()).toHaveLength(2);
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({ id, status: 'sent', attempts: 2 });
  });

  it('a callback due inside quiet hours is sent while the re-delivery is held', async () => {
    const who = makeUser(t);
    const udev = (await deviceToken(t, who)).token;
    const hh = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const q = await t.request('PUT', '/current/user/quiet-hours', {
      token: udev,
      json: {
        enabled: true,
        timezone: 'UTC',
        start: hh(t.clock.now() - HOUR),
        end: hh(t.clock.now() + 3 * HOUR),
      },
    });
    expect(q.status, q.text).toBe(200);
    const path = `/cb/${++seq}/`;
    const ch = await makeChannel(t, udev, {
      deliveryConfig: { webhook: { url: `${rx.url}/hook-${seq}`, delaySec: 0 } },
    });
    const m = await sendMessage(t, ch.token, { priority: 5 });
    const body: CallbackBody = {
      id: 2,
      status: 'cancelled',
      answer: null,
      answeredAt: null,
      clientMessageId: null,
    };
    enqueue(t, {
      userId: who.id,
      appid: ch.id,
      messageId: m.id,
      url: `${rx.url}${path}`,
      secret: null,
      body,
    });
    await t.server.scheduler.tick();
    expect(rx.requests.filter((r) => r.path === path)).toHaveLength(1);
    expect(rx.requests.filter((r) => r.path === `/hook-${seq}`)).toEqual([]);
    const rows = await log(t, udev, ch.id);
    expect(rows.map((d) => [d.kind, d.status, d.heldUntil !== null])).toEqual([
      ['callback', 'sent', false],
      ['redelivery', 'queued', true],
    ]);
  });

  it('deleting the channel takes its queued callback with it: no retry is sent', async () => {
    const s = await setup([{ status: 503, body: { message: 'busy' } }]);
    enqueue(t, {
      userId: adminId,
      appid: s.ch.id,
      messageId: s.m.id,
      url: s.url,
      secret: null,
      body: s.body,
    });
    await t.server.scheduler.tick();
    expect((await log(t, dev, s.ch.id))[0]).toMatchObject({
      kind: 'callback',
      status: 'queued',
      attempts: 1,
    });
    expect((await t.request('DELETE', `/application/${s.ch.id}`, { token: dev })).status).toBe(200);
    const left = t.server.ctx.db.first<{ n: number }>(
      'SELECT count(*) AS n FROM deliveries WHERE appid = ?',
      [s.ch.id],
    )!;
    expect(left.n).toBe(0);
    await advance(HOUR);
    expect(s.requests()).toHaveLength(1);
  });
});

describe('BELFRY_BLOCK_PRIVATE_TARGETS', () => {
  it('refuses a loopback callback of a non-admin owner (failed, permanent) and sends an administrator’s', async () => {
    const b = await startTestServer({ config: { blockPrivateTargets: true } });
    try {
      const who = makeUser(b);
      const udev = (await deviceToken(b, who)).token;
      const adev = (await deviceToken(b)).token;
      const admin = b.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [
        b.admin.email,
      ])!;
      const path = `/cb/${++seq}/`;
      const body: CallbackBody = {
        id: 3,
        status: 'answered',
        answer: 'yes',
        answeredAt: iso(b.clock.now()),
        clientMessageId: null,
      };
      const userCh = await makeChannel(b, udev);
      const adminCh = await makeChannel(b, adev);
      enqueue(b, {
        userId: who.id,
        appid: userCh.id,
        messageId: null,
        url: `${rx.url}${path}`,
        secret: 'x',
        body,
      });
      enqueue(b, {
        userId: admin.id,
        appid: adminCh.id,
        messageId: null,
        url: `${rx.url}${path}`,
        secret: 'x',
        body,
      });
      await b.server.scheduler.tick();
      expect((await log(b, udev, userCh.id))[0]).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: 'private address refused',
        messageId: null,
      });
      expect((await log(b, adev, adminCh.id))[0]).toMatchObject({ status: 'sent', attempts: 1 });
      expect(rx.requests.filter((r) => r.path === path)).toHaveLength(1);
    } finally {
      await b.close();
    }
  });
});

describe('restart', () => {
  it('a callback interrupted by the stop stays `sending` and is queued and sent again at start-up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'belfry-callback-'));
    // A receiver that never answers the first request (the stop aborts it) and answers 200 afterwards.
    const hung: ServerResponse[] = [];
    const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
    const slow = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (seen.length === 1) hung.push(res);
        else res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/cb`;
    try {
      const s1 = await startTestServer({ dataDir });
      const d1 = (await deviceToken(s1)).token;
      const owner = s1.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [
        s1.admin.email,
      ])!;
      const ch = await makeChannel(s1, d1);
      const body: CallbackBody = {
        id: 4,
        status: 'answered',
        answer: 'b',
        answeredAt: iso(s1.clock.now()),
        clientMessageId: 'r',
      };
      const id = enqueue(s1, { userId: owner.id, appid: ch.id, messageId: null, url, secret: 'z', body });
      void s1.server.scheduler.tick();
      await expect.poll(() => seen.length).toBe(1);
      expect(s1.server.ctx.db.first('SELECT status, attempts FROM deliveries WHERE id = ?', [id])).toEqual({
        status: 'sending',
        attempts: 1,
      });
      await s1.close();
      const s2 = await startTestServer({ dataDir, clock: s1.clock });
      try {
        expect(s2.log.lines.some((l) => l.includes('interrupted deliveries queued again'))).toBe(true);
        await s2.server.scheduler.tick();
        expect(seen).toHaveLength(2);
        expect(seen.map((r) => r.headers['x-belfry-delivery'])).toEqual([String(id), String(id)]);
        expect(seen[1]!.body).toBe(JSON.stringify(body));
        const ts = seen[1]!.headers['x-belfry-timestamp'] as string;
        expect(seen[1]!.headers['x-belfry-signature']).toBe(
          `sha256=${createHmac('sha256', 'z').update(`${ts}.${seen[1]!.body}`).digest('hex')}`,
        );
        const d2 = (await deviceToken(s2)).token;
        expect((await log(s2, d2, ch.id))[0]).toMatchObject({ id, status: 'sent', attempts: 2 });
      } finally {
        await s2.close();
      }
    } finally {
      for (const res of hung) res.destroy();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('end to end (POST /ask → answer → callback)', () => {
  it('answering a question with callbackUrl and callbackSecret POSTs the signed outcome once, not cancelled by the answer’s read mark', async () => {
    const ch = await makeChannel(t, dev);
    const path = `/cb/${++seq}/`;
    rx.on('POST', path, { status: 204 });
    const asked = await t.request('POST', '/ask', {
      token: ch.token,
      json: {
        question: 'Deploy build 42?',
        options: ['yes', 'no'],
        clientMessageId: 'deploy-42',
        callbackUrl: `${rx.url}${path}`,
        callbackSecret: 'cb-s3cret',
      },
    });
    expect(asked.status, asked.text).toBe(200);
    await advance(5 * SEC);
    expect(rx.requests.filter((r) => r.path === path)).toEqual([]);
    const answeredAt = t.clock.now();
    const ans = await t.request('POST', `/ask-question/${asked.body.id}/answer`, {
      token: dev,
      json: { answer: 'yes' },
    });
    expect(ans.status, ans.text).toBe(200);
    await t.server.scheduler.tick();
    const reqs = rx.requests.filter((r) => r.path === path);
    expect(reqs).toHaveLength(1);
    const [entry] = await log(t, dev, ch.id);
    expect(entry).toMatchObject({
      messageId: asked.body.messageId,
      adapter: 'callback',
      kind: 'callback',
      status: 'sent',
      attempts: 1,
    });
    verify(reqs[0]!, {
      entryId: entry!.id as number,
      body: {
        id: asked.body.id,
        status: 'answered',
        answer: 'yes',
        answeredAt: iso(answeredAt),
        clientMessageId: 'deploy-42',
      },
      secret: 'cb-s3cret',
      sentAtMs: answeredAt,
    });
    await advance(HOUR);
    expect(rx.requests.filter((r) => r.path === path)).toHaveLength(1);
  });
});

import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../server/config';
import type { AppContext } from '../../server/context';
import {
  type DeliveryAdapter,
  DeliveryError,
  type DeliveryItem,
  type SendIo,
} from '../../server/delivery/adapter';
import { ManualClock } from '../../server/lib/clock';
import { memoryLogger } from '../../server/lib/log';
import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http';

/**
 * A minimal SendIo for adapter unit tests: a context with a real parsed config (BELFRY_DELIVERY_API_URLS,
 * SMTP URL as given), a ManualClock and a memory log; private targets allowed unless told otherwise.
 */
export function testIo(
  opts: {
    apiUrls?: Record<string, string>;
    smtpUrl?: string;
    allowPrivate?: boolean;
    signal?: AbortSignal;
    clock?: ManualClock;
  } = {},
): SendIo & { ctx: AppContext & { clock: ManualClock } } {
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: '/nonexistent-belfry-test-dir',
      deliveryApiUrls: opts.apiUrls ?? {},
      ...(opts.smtpUrl ? { smtpUrl: opts.smtpUrl } : {}),
      mailFrom: 'belfry@example.test',
    },
  });
  const ctx = {
    config,
    clock: opts.clock ?? new ManualClock(),
    log: memoryLogger(),
    publicUrl: () => 'https://belfry.example.test',
  } as unknown as AppContext & { clock: ManualClock };
  return {
    ctx,
    signal: opts.signal ?? new AbortController().signal,
    allowPrivate: opts.allowPrivate ?? true,
  };
}

/** A re-delivery of message 42 of channel 7 "Infra". */
export function sampleItem(over: Partial<DeliveryItem> = {}): DeliveryItem {
  return {
    outboxId: 1001,
    kind: 'redelivery',
    messageId: 42,
    title: 'Disk almost full',
    message: 'db-07: /var/lib/postgresql is 91% full',
    priority: 6,
    date: Date.UTC(2026, 0, 15, 11, 59, 0),
    channel: { id: 7, name: 'Infra' },
    links: {
      message: 'https://belfry.example.test/inbox?channel=7#message-42',
      read: 'https://belfry.example.test/m/read?token=signed.read.token',
    },
    ...over,
  };
}

/** The DeliveryError a send threw (fails the test when it resolved or threw something else). */
export async function sendError(p: Promise<void>): Promise<DeliveryError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DeliveryError);
    return err as DeliveryError;
  }
  throw new Error('expected the send to fail');
}

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface HttpAdapterCase {
  adapter: DeliveryAdapter;
  /** The adapter's settings and BELFRY_DELIVERY_API_URLS sending to `base` (`http://127.0.0.1:{port}`). */
  target(base: string): { config: Record<string, unknown>; apiUrls?: Record<string, string> };
  /** The path the request goes to (error replies are routed there). */
  path: string;
  /** Secret values of `target`'s settings that no error text may contain. */
  secrets: string[];
  /** The service's own permanent refusal and the error text expected from it. */
  permanent: { status: number; body: unknown; text: string };
}

/**
 * The error classes every HTTP adapter shares (§6.1, docs/api.md): the service's permanent 4xx with its
 * reason, 429 with Retry-After in seconds and as an HTTP-date, 5xx retryable, a refused connection, a
 * timeout through the aborted signal, the private-address refusal, and no secret in any error text.
 */
export function describeHttpErrorClasses(c: HttpAdapterCase): void {
  let fake: FakeHttp;
  const texts: string[] = [];
  beforeAll(async () => {
    fake = await startFakeHttp();
  });
  afterAll(async () => {
    await fake.close();
  });
  const run = async (io: SendIo, base = fake.url) => {
    const e = await sendError(c.adapter.send(io, c.target(base).config, sampleItem()));
    texts.push(e.message);
    return e;
  };
  const ioFor = (base: string, over: Parameters<typeof testIo>[0] = {}) =>
    testIo({ apiUrls: c.target(base).apiUrls, ...over });

  it(`${c.adapter.name}: a permanent refusal carries the service's reason and is not retried`, async () => {
    fake.on('POST', c.path, { status: c.permanent.status, body: c.permanent.body });
    const e = await run(ioFor(fake.url));
    expect(e.message).toBe(c.permanent.text);
    expect(e.retryable).toBe(false);
    expect(e.retryAfterSec).toBeUndefined();
  });

  it(`${c.adapter.name}: 429 is retried after Retry-After (seconds and HTTP-date)`, async () => {
    const f2 = await startFakeHttp();
    try {
      let n = 0;
      const io = ioFor(f2.url);
      const at = new Date(io.ctx.clock.now() + 120_000).toUTCString();
      f2.on('POST', c.path, () =>
        ++n === 1
          ? { status: 429, headers: { 'Retry-After': '7' }, body: { message: 'rate limited' } }
          : { status: 429, headers: { 'Retry-After': at }, body: 'rate limited' },
      );
      const e1 = await run(io, f2.url);
      expect(e1.retryable).toBe(true);
      expect(e1.retryAfterSec).toBe(7);
      expect(e1.message).toBe('HTTP 429: rate limited');
      const e2 = await run(io, f2.url);
      expect(e2.retryAfterSec).toBe(120);
    } finally {
      await f2.close();
    }
  });

  it(`${c.adapter.name}: 5xx is retryable`, async () => {
    const f2 = await startFakeHttp();
    try {
      f2.on('POST', c.path, { status: 503, body: '' });
      const e = await run(ioFor(f2.url), f2.url);
      expect(e).toMatchObject({ retryable: true, message: 'HTTP 503: Service Unavailable' });
      expect(e.retryAfterSec).toBeUndefined();
    } finally {
      await f2.close();
    }
  });

  it(`${c.adapter.name}: a refused connection is retryable`, async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const e = await run(ioFor(base), base);
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it(`${c.adapter.name}: a send still unanswered when the signal aborts is a retryable timeout`, async () => {
    const f2 = await startFakeHttp();
    try {
      f2.on('POST', c.path, { status: 200, delayMs: 10_000 });
      const ac = new AbortController();
      const sent = run(ioFor(f2.url, { signal: ac.signal }), f2.url);
      await f2.waitFor(1);
      ac.abort();
      const e = await sent;
      expect(e).toMatchObject({ retryable: true, message: 'timeout after 15 s' });
    } finally {
      await f2.close();
    }
  });

  it(`${c.adapter.name}: a private address is refused before connecting when private targets are blocked`, async () => {
    const before = fake.requests.length;
    const e = await run(ioFor(fake.url, { allowPrivate: false }));
    expect(e).toMatchObject({ retryable: false, message: 'private address refused' });
    expect(fake.requests.length).toBe(before);
  });

  it(`${c.adapter.name}: no error text contains a secret`, () => {
    expect(texts.length).toBeGreaterThanOrEqual(6);
    for (const t of texts) for (const s of c.secrets) expect(t).not.toContain(s);
  });
}

export const TWILIO_TOKEN = 'twilioAuthTokenSecret';
export const TWILIO_CONFIG = {
  provider: 'twilio',
  accountSid: 'AC0123456789abcdef0123456789abcdef',
  authToken: TWILIO_TOKEN,
  from: '+15005550006',
  to: '+447700900123',
};

/** Twilio's checks: Basic accountSid:authToken, a form body with To and From, Body ≤ 1600 or Twiml. */
export function twilioReply(req: RecordedRequest, resource: 'Messages.json' | 'Calls.json'): FakeReply {
  const basic = `Basic ${Buffer.from(`${TWILIO_CONFIG.accountSid}:${TWILIO_TOKEN}`).toString('base64')}`;
  if (req.headers.authorization !== basic)
    return {
      status: 401,
      body: {
        code: 20003,
        message: 'Authenticate',
        more_info: 'https://www.twilio.com/docs/errors/20003',
        status: 401,
      },
    };
  if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
    return { status: 400, body: { code: 20001, message: 'Unsupported content type', status: 400 } };
  const form = new URLSearchParams(req.body);
  if (!form.get('To') || !form.get('From'))
    return { status: 400, body: { code: 21604, message: "A 'To' phone number is required.", status: 400 } };
  if (resource === 'Messages.json' && (!form.get('Body') || form.get('Body')!.length > 1600))
    return {
      status: 400,
      body: {
        code: 21617,
        message: 'The concatenated message body exceeds the 1600 character limit.',
        status: 400,
      },
    };
  if (resource === 'Calls.json' && !form.get('Twiml') && !form.get('Url'))
    return { status: 400, body: { code: 21205, message: 'Url parameter is required.', status: 400 } };
  return { status: 201, body: { sid: resource === 'Calls.json' ? 'CA1' : 'SM1', status: 'queued' } };
}

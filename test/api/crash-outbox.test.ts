/**
 * The delivery outbox under SIGKILL (issue 15): the real server in a child process re-delivers every
 * message of a channel through the webhook adapter (delaySec 0) to a loopback sink while senders post
 * messages, and is killed at random moments mid-drain. After the last restart every acknowledged message
 * must reach the sink (nothing queued is lost), and the only duplicates allowed are re-sends of entries
 * whose request was in flight when a kill hit (the same `X-Belfry-Delivery` id, at most once per kill).
 * The counts are printed: docs/benchmarks.md and the issue's note report them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeHttp, type RecordedRequest, startFakeHttp } from '../helpers/fake-http';
import { type SpawnedServer, spawnServer } from '../helpers/spawn-server';

const ADMIN = 'admin@example.com';
const PASSWORD = 'correct-horse-battery';
const BASIC = `Basic ${Buffer.from(`${ADMIN}:${PASSWORD}`).toString('base64')}`;
const KILLS = 4;
const SENDERS = 3;

// Each attempt (CI retries included) gets its own data dir and sink: a retry reusing the first attempt's
// database would read the first attempt's channel back, and its sink would count the first attempt's requests.
let dir: string;
let sink: FakeHttp;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belfry-crash-outbox-'));
  sink = await startFakeHttp();
  // A short wait before answering, so some kills land while requests are in flight.
  sink.on('POST', '/hook', { status: 200, delayMs: 3 });
});
afterEach(async () => {
  await sink.close();
  await rm(dir, { recursive: true, force: true });
});

function start(): Promise<SpawnedServer> {
  return spawnServer(['--port', '0', '--data-dir', dir], {
    BELFRY_ADMIN_EMAIL: ADMIN,
    BELFRY_ADMIN_PASSWORD: PASSWORD,
    BELFRY_RETRY_BASE_S: '1',
    BELFRY_LOG_LEVEL: 'info',
  });
}

async function kill(s: SpawnedServer): Promise<void> {
  s.child.kill('SIGKILL');
  await s.exited;
}

/** Posts messages until stopped; records the ids the server acknowledged with a 200. */
async function sender(url: string, key: string, tag: string, acked: Set<number>, stop: { now: boolean }) {
  for (let n = 0; !stop.now; n++) {
    try {
      const res = await fetch(`${url}/message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `${tag}-${n}`, priority: 5 }),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        continue;
      }
      acked.add(((await res.json()) as { id: number }).id);
    } catch {
      return; // killed mid-request: not acknowledged
    }
  }
}

function messageIdOf(r: RecordedRequest): number {
  return (r.json() as { message: { id: number } }).message.id;
}

/** Resolves when every id in `want` has reached the sink (event-driven: re-checked on each request). */
async function allDelivered(want: Set<number>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const got = new Set(sink.requests.map(messageIdOf));
    const missing = [...want].filter((id) => !got.has(id));
    if (missing.length === 0) return;
    if (performance.now() > deadline)
      throw new Error(`${missing.length} acknowledged messages never delivered: ${missing.slice(0, 10)}`);
    await sink.waitFor(sink.requests.length + 1, Math.max(1, deadline - performance.now())).catch(() => {});
  }
}

describe('outbox crash safety', () => {
  it('delivers every acknowledged message across repeated SIGKILLs mid-drain', {
    timeout: 120_000,
  }, async () => {
    const lots = { eventsPerDay: 1_000_000 };
    await writeFile(join(dir, 'plans.json'), JSON.stringify({ free: lots, pro: lots, business: lots }));
    const acked = new Set<number>();
    let key = '';
    let device = '';
    const rounds: string[] = [];
    for (let round = 0; round < KILLS; round++) {
      const server = await start();
      if (round === 0) {
        const client = await fetch(`${server.url}/client`, {
          method: 'POST',
          headers: { authorization: BASIC, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'crash outbox' }),
        });
        expect(client.status).toBe(200);
        device = `Bearer ${((await client.json()) as { token: string }).token}`;
        const res = await fetch(`${server.url}/application`, {
          method: 'POST',
          headers: { authorization: device, 'content-type': 'application/json' },
          body: JSON.stringify({
            name: 'crash outbox',
            deliveryConfig: { webhook: { url: `${sink.url}/hook`, delaySec: 0 } },
          }),
        });
        expect(res.status).toBe(200);
        key = ((await res.json()) as { token: string }).token;
      }
      const stop = { now: false };
      const before = acked.size;
      const sentBefore = sink.requests.length;
      const senders = Array.from({ length: SENDERS }, (_, s) =>
        sender(server.url, key, `r${round}s${s}`, acked, stop),
      );
      // Kill once the drain is under way: some messages acknowledged and some deliveries made this round.
      const started = performance.now();
      const delay = 200 + Math.random() * 400;
      while (
        (performance.now() - started < delay ||
          acked.size === before ||
          sink.requests.length === sentBefore) &&
        performance.now() - started < 20_000
      )
        await new Promise((r) => setTimeout(r, 5));
      await kill(server);
      stop.now = true;
      await Promise.all(senders);
      expect(acked.size).toBeGreaterThan(before);
      rounds.push(
        `round ${round}: ${acked.size - before} acked, ${sink.requests.length - sentBefore} delivered before the kill`,
      );
    }

    // The last restart drains what is left: entries caught `sending` go back to `queued` at start.
    const server = await start();
    try {
      await allDelivered(acked, 60_000);
      const res = await fetch(`${server.url}/application`, { headers: { authorization: device } });
      const channel = ((await res.json()) as { id: number; name: string }[]).find(
        (c) => c.name === 'crash outbox',
      )!;
      // Every acknowledged message's entry ends `sent` (read back through the deliveries log). The sink
      // records a request before it answers, and the entries in flight at the last kill are sent again
      // after the sink already has them: polled (expect.poll, up to 10 s) until none is left unsent.
      const notSent = async (): Promise<number[]> => {
        const statuses = new Map<number, string>();
        let since = 0;
        for (let page = 0; page < 200; page++) {
          const r = await fetch(
            `${server.url}/application/${channel.id}/deliveries?limit=200${since ? `&since=${since}` : ''}`,
            { headers: { authorization: device } },
          );
          expect(r.status).toBe(200);
          const body = (await r.json()) as {
            paging: { since?: number; next?: string };
            deliveries: { messageId: number; status: string }[];
          };
          for (const d of body.deliveries) statuses.set(d.messageId, d.status);
          if (!body.paging.next) break;
          since = body.paging.since!;
        }
        return [...acked].filter((id) => statuses.get(id) !== 'sent');
      };
      await expect.poll(notSent).toEqual([]);
    } finally {
      await kill(server);
    }

    const perMessage = new Map<number, number>();
    const perDelivery = new Map<string, number>();
    for (const r of sink.requests) {
      perMessage.set(messageIdOf(r), (perMessage.get(messageIdOf(r)) ?? 0) + 1);
      const d = String(r.headers['x-belfry-delivery']);
      perDelivery.set(d, (perDelivery.get(d) ?? 0) + 1);
    }
    const duplicated = [...perMessage.values()].filter((n) => n > 1).length;
    const lost = [...acked].filter((id) => !perMessage.has(id)).length;
    console.info(
      `outbox crash test: ${rounds.join('; ')}; ${acked.size} acknowledged, ${sink.requests.length} deliveries, ${lost} lost, ${duplicated} re-sent after a kill`,
    );
    expect(lost).toBe(0);
    // One entry per message (one adapter): a message is re-sent only under its own entry's id...
    expect(perDelivery.size).toBe(perMessage.size);
    // ...and only because a kill hit while its request was in flight: at most once per kill.
    expect(Math.max(...perMessage.values())).toBeLessThanOrEqual(1 + KILLS);
    expect(duplicated).toBeLessThanOrEqual(KILLS * 64);
  });
});

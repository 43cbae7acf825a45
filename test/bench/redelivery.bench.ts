/**
 * Re-delivery (issue 15): how fast the durable outbox drains to a webhook, what the drain does to
 * `POST /message`, and what a SIGKILL mid-drain costs. `npm run bench -- redelivery` runs it alone
 * (`-- delivery` runs it with the core path bench).
 *
 * Belfry runs in a child process (servers/belfry.ts); the webhook sink is a raw node:http server in this
 * process that answers 200 at once and counts deliveries per `X-Belfry-Delivery` id.
 * - **Queue**: quiet hours on (breakthrough 10, no digest) while 10,000 messages are posted to a channel whose
 *   webhook adapter re-delivers after 0 s, so every entry is held; then quiet hours go off, which releases
 *   them all at once (the morning after). The drain rate is 10,000 ÷ (last delivery − release).
 * - **Floor**: the same 10,000 webhook-shaped POSTs sent straight to the sink by a raw node:http loop with
 *   64 connections, in the same run: the sink's and the loopback's own ceiling.
 * - **POST /message while draining**: one sender posting to another channel (no adapters) back to back on
 *   one keep-alive connection; p99 during the drain against p99 of the same sender with no drain
 *   (before the release), in the same run. Target: within 2×.
 * - **SIGKILL mid-drain**: a second server on a fresh copy of the queued state is killed once 30 % has been
 *   delivered, restarted, and drains the rest: lost entries (must be 0) and re-sent ones are counted.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_DIR,
  type ChildServer,
  httpCall,
  openBenchStore,
  percentile,
  type Result,
  round,
  seedFixture,
  spawnServer,
} from './lib';

const ENTRIES = Number(process.env.BENCH_REDELIVERY_ENTRIES ?? 10_000);
const FLOOR_CONNECTIONS = 64;
const KILL_AT = 0.3;

interface Sink {
  url: string;
  /** Deliveries received per X-Belfry-Delivery id. */
  byDelivery: Map<string, number>;
  received: number;
  lastAt: number;
  /** Resolves when `n` distinct deliveries have arrived. */
  distinct(n: number, timeoutMs: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  let waiters: { n: number; resolve: () => void }[] = [];
  const sink: Sink = {
    url: '',
    byDelivery: new Map(),
    received: 0,
    lastAt: 0,
    distinct: (n, timeoutMs) =>
      new Promise((resolve, reject) => {
        if (sink.byDelivery.size >= n) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`sink: ${sink.byDelivery.size}/${n} deliveries after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    reset: () => {
      sink.byDelivery = new Map();
      sink.received = 0;
      sink.lastAt = 0;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['x-belfry-delivery'] ?? `floor-${sink.received}`);
      sink.byDelivery.set(id, (sink.byDelivery.get(id) ?? 0) + 1);
      sink.received++;
      sink.lastAt = performance.now();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (waiters.length === 0) return;
      const done = waiters.filter((w) => sink.byDelivery.size >= w.n);
      waiters = waiters.filter((w) => sink.byDelivery.size < w.n);
      for (const w of done) w.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

/** The floor: ENTRIES webhook-sized POSTs from a raw node:http loop over FLOOR_CONNECTIONS connections. */
async function floorRate(sink: Sink): Promise<number> {
  sink.reset();
  const agent = new Agent({ keepAlive: true, maxSockets: FLOOR_CONNECTIONS });
  const body = JSON.stringify({
    event: 'message.redelivery',
    message: {
      id: 1,
      appid: 1,
      title: 'bench',
      message: 'x'.repeat(40),
      priority: 5,
      date: new Date().toISOString(),
    },
    channel: { id: 1, name: 'bench' },
    links: { message: 'http://127.0.0.1/inbox', read: 'http://127.0.0.1/m/read?token=x' },
  });
  const url = new URL(`${sink.url}/hook`);
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < ENTRIES) {
      const n = next++;
      await new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'x-belfry-delivery': `floor-${n}` },
          },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: FLOOR_CONNECTIONS }, worker));
  agent.destroy();
  return ENTRIES / ((performance.now() - t0) / 1000);
}

interface Setup {
  dir: string;
  device: string;
  channelId: number;
  appToken: string;
  probeToken: string;
  probeChannelId: number;
}

/** UTC `HH:MM` of now + `minutes`. */
function hhmm(minutes: number): string {
  const d = new Date(Date.now() + minutes * 60_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
}

async function api(port: number, device: string, method: string, path: string, body?: unknown) {
  const agent = new Agent();
  const res = await httpCall(
    agent,
    port,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    {
      Authorization: device,
    },
  );
  agent.destroy();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
  return JSON.parse(res.body) as Record<string, unknown>;
}

/** Holds ENTRIES queued re-deliveries (quiet hours on), then stops the server: the state both runs start from. */
async function prepare(work: string, sink: Sink): Promise<Setup> {
  const dir = join(work, 'queued');
  const store = await openBenchStore(dir);
  const fx = seedFixture(store, { channels: 2 });
  await store.close();
  const device = `Bearer ${fx.devices[0]!.token}`;
  const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: dir });
  try {
    const port = server.port;
    await api(port, device, 'PUT', '/current/user/quiet-hours', {
      enabled: true,
      timezone: 'UTC',
      start: hhmm(-60),
      end: hhmm(120),
      days: [1, 2, 3, 4, 5, 6, 7],
      breakthroughPriority: 10,
      digest: false,
    });
    const [channelId, probeChannelId] = fx.channelIds as [number, number];
    await api(port, device, 'PUT', `/application/${channelId}`, {
      deliveryConfig: { webhook: { url: `${sink.url}/hook`, delaySec: 0 } },
    });
    const probe = await api(port, device, 'POST', `/application/${probeChannelId}/token`, {
      name: 'probe',
      canWrite: true,
    });
    let n = 0;
    const poster = async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (n < ENTRIES) {
        n++;
        const res = await httpCall(
          agent,
          port,
          'POST',
          '/message',
          JSON.stringify({ title: `held ${n}`, message: 'queued while quiet', priority: 5 }),
          { Authorization: `Bearer ${fx.appToken}` },
        );
        if (res.status !== 200) throw new Error(`POST /message: ${res.status} ${res.body}`);
      }
      agent.destroy();
    };
    await Promise.all(Array.from({ length: 20 }, poster));
    // Every entry comes due at once (delay 0) and is held until the window's end; entries are taken in
    // due order, so once the newest is held all are.
    const deadline = performance.now() + 120_000;
    for (;;) {
      const page = await api(port, device, 'GET', `/application/${channelId}/deliveries?limit=1`);
      const newest = (page.deliveries as { heldUntil: string | null; status: string }[])[0];
      if (newest?.status === 'queued' && newest.heldUntil) break;
      if (performance.now() > deadline) throw new Error(`entries were not held: ${JSON.stringify(newest)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    if (sink.byDelivery.size > 0) throw new Error(`${sink.byDelivery.size} delivered during quiet hours`);
    return { dir, device, channelId, appToken: fx.appToken, probeToken: String(probe.token), probeChannelId };
  } finally {
    await server.stop();
  }
}

/** POST /message latencies of one sequential sender until `until()` (ms each). */
async function probe(port: number, token: string, until: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const lat: number[] = [];
  for (let n = 0; !until(); n++) {
    const t = performance.now();
    const res = await httpCall(agent, port, 'POST', '/message', JSON.stringify({ message: `probe ${n}` }), {
      Authorization: `Bearer ${token}`,
    });
    if (res.status !== 200) throw new Error(`probe: ${res.status} ${res.body}`);
    lat.push(performance.now() - t);
  }
  agent.destroy();
  return lat;
}

async function release(server: ChildServer, setup: Setup): Promise<void> {
  await api(server.port, setup.device, 'PUT', '/current/user/quiet-hours', { enabled: false });
}

export async function run(): Promise<Result> {
  const work = await mkdtemp(join(tmpdir(), 'belfry-bench-redelivery-'));
  const sink = await startSink();
  try {
    const result: Result = {};
    const setup = await prepare(work, sink);
    const copy = join(work, 'kill');
    await cp(setup.dir, copy, { recursive: true });

    // The drain, with the probe before (no drain) and during.
    const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: setup.dir });
    try {
      const idleEnd = performance.now() + 3_000;
      const idle = await probe(server.port, setup.probeToken, () => performance.now() > idleEnd);
      sink.reset();
      const cpu0 = server.cpuMs();
      const t0 = performance.now();
      await release(server, setup);
      const drained = sink.distinct(ENTRIES, 300_000);
      let done = false;
      void drained.then(() => {
        done = true;
      });
      const during = await probe(server.port, setup.probeToken, () => done);
      await drained;
      const seconds = (sink.lastAt - t0) / 1000;
      const cpu = server.cpuMs() - cpu0;
      result[`drain of ${ENTRIES} released entries to a loopback webhook: deliveries/s (target ≥ 500)`] =
        round(ENTRIES / seconds, 0);
      result['drain time s'] = round(seconds, 2);
      result['server CPU per delivery ms'] = round(cpu / ENTRIES, 3);
      result['re-sent during the drain (same delivery id twice)'] = [...sink.byDelivery.values()].filter(
        (n) => n > 1,
      ).length;
      const p99Idle = percentile(idle, 99);
      const p99During = percentile(during, 99);
      result['POST /message p99 ms without a drain (samples)'] = `${round(p99Idle, 2)} (${idle.length})`;
      result['POST /message p99 ms during the drain (samples)'] = `${round(p99During, 2)} (${during.length})`;
      result['POST /message p99 during / without (target ≤ 2)'] = round(p99During / p99Idle, 2);
    } finally {
      await server.stop();
    }

    result[`floor: ${ENTRIES} POSTs from raw node:http, ${FLOOR_CONNECTIONS} connections, req/s`] = round(
      await floorRate(sink),
      0,
    );

    // SIGKILL once 30 % is out, restart, drain the rest.
    sink.reset();
    const first = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: copy });
    await release(first, setup);
    await sink.distinct(Math.round(ENTRIES * KILL_AT), 300_000);
    await first.kill();
    const beforeRestart = sink.byDelivery.size;
    const second = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: copy });
    try {
      // Quiet hours were turned off durably before the kill: the restart just drains.
      await sink.distinct(ENTRIES, 300_000);
      // Anything the restart re-sends arrives with the rest; give stragglers a moment of quiet.
      let seen = sink.received;
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        if (sink.received === seen) break;
        seen = sink.received;
      }
    } finally {
      await second.stop();
    }
    const lost = ENTRIES - sink.byDelivery.size;
    const resent = [...sink.byDelivery.values()].filter((n) => n > 1).length;
    result[`SIGKILL after ${beforeRestart} of ${ENTRIES} delivered, restart: lost (must be 0)`] = lost;
    result['SIGKILL: entries re-sent once (in flight at the kill)'] = resent;
    if (lost !== 0) throw new Error(`${lost} entries lost across SIGKILL`);
    return result;
  } finally {
    await sink.close();
    await rm(work, { recursive: true, force: true });
  }
}

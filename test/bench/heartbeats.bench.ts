/**
 * Heartbeats (issue 11), with 10,000 heartbeats in the database:
 * - ping throughput (`GET /heartbeat/ping/{token}`, 50 concurrent senders, tokens cycled so no token
 *   meets its rate limit) against durable `POST /message` in the same child server, in alternating
 *   rounds; target ping ≥ 0.8 × message;
 * - idle: the child server's CPU over BENCH_IDLE_SECONDS (60) with every deadline an hour away; target
 *   ≤ 1 % of a core;
 * - 10,000 deadlines within one minute, in this process (so the bus and the event loop can be watched):
 *   each down message's lateness (creation − deadline) p99 (target ≤ 1 s) and the event-loop delay p99
 *   meanwhile (target ≤ 20 ms).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../server/config';
import type { Db } from '../../server/db/database';
import { createServer } from '../../server/index';
import { issueToken } from '../../server/lib/tokens';
import {
  BENCH_DIR,
  closedLoopLoad,
  openBenchStore,
  percentile,
  quietLog,
  type Result,
  round,
  seedFixture,
  sleep,
  spawnServer,
} from './lib';

const HEARTBEATS = Number(process.env.BENCH_HEARTBEATS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SENDERS = 50;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const DEADLINE_WINDOW_MS = 60_000;

/** 10,000 heartbeats `up`, each with its own H token; `dueAt(i)` is heartbeat i's deadline. */
function seedHeartbeats(db: Db, userId: number, channelId: number, dueAt: (i: number) => number): string[] {
  const now = Date.now();
  const tokens: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < HEARTBEATS; i++) {
      const { token, digest, hint } = issueToken('H');
      tokens.push(token);
      const deadline = dueAt(i);
      db.run(
        `INSERT INTO heartbeats (user_id, channel_id, name, interval_sec, grace_sec, status, status_since,
           token_digest, token_hint, last_ping_at, last_success_at, expected_at, deadline_at, due_at, created_at)
         VALUES (?, ?, ?, 3600, 0, 'up', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [userId, channelId, `job ${i}`, now, digest, hint, now, now, deadline, deadline, deadline, now],
      );
    }
  });
  return tokens;
}

async function throughputAndIdle(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-hb-'));
  try {
    const store = await openBenchStore(dir);
    const fx = seedFixture(store);
    const tokens = seedHeartbeats(store.db, fx.userId, fx.channelIds[0]!, () => Date.now() + 3_600_000);
    await store.close();
    const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: dir });
    try {
      let next = 0;
      const message = () =>
        closedLoopLoad({
          port: server.port,
          concurrency: SENDERS,
          seconds: SECONDS,
          warmupSeconds: 1,
          make: (w, n) => ({
            method: 'POST',
            path: `/message?token=${fx.appToken}`,
            body: JSON.stringify({ title: `sender ${w}`, message: `Backup run ${n} finished.`, priority: 5 }),
          }),
        });
      const ping = () =>
        closedLoopLoad({
          port: server.port,
          concurrency: SENDERS,
          seconds: SECONDS,
          warmupSeconds: 1,
          make: () => ({ method: 'GET', path: `/heartbeat/ping/${tokens[next++ % tokens.length]}` }),
        });
      const messageRps: number[] = [];
      const pingRps: number[] = [];
      let pingErrors = 0;
      let pingP99 = 0;
      for (let r = 0; r < ROUNDS; r++) {
        messageRps.push((await message()).rps);
        const p = await ping();
        pingRps.push(p.rps);
        pingErrors += p.errors;
        pingP99 = Math.max(pingP99, p.p99);
      }
      const msg = Math.max(...messageRps);
      const png = Math.max(...pingRps);
      // Idle: nothing is due for an hour; only the server's own timers run.
      await sleep(2_000);
      const cpu0 = server.cpuMs();
      await sleep(IDLE_SECONDS * 1000);
      const idleCpu = ((server.cpuMs() - cpu0) / (IDLE_SECONDS * 1000)) * 100;
      return {
        'POST /message (req/s, best round)': round(msg, 0),
        'ping (req/s, best round)': round(png, 0),
        'ping / message (target ≥ 0.8)': round(png / msg, 2),
        'ping p99 (ms)': round(pingP99, 1),
        'ping errors': pingErrors,
        [`idle CPU over ${IDLE_SECONDS} s (% of a core, target ≤ 1)`]: round(idleCpu, 2),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function deadlines(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-hb-due-'));
  try {
    const store = await openBenchStore(dir);
    const fx = seedFixture(store);
    const start = Date.now() + 5_000;
    seedHeartbeats(
      store.db,
      fx.userId,
      fx.channelIds[0]!,
      (i) => start + Math.floor((i * DEADLINE_WINDOW_MS) / HEARTBEATS),
    );
    await store.close();
    const config = loadConfig({
      env: {},
      overrides: { dataDir: dir, port: 0, host: '127.0.0.1', logLevel: 'error' },
    });
    const server = await createServer(config, { log: quietLog });
    await server.start();
    const lateness: number[] = [];
    const off = server.ctx.bus.on('message:created', ({ message }) => {
      lateness.push(Date.now() - Date.parse(message.date));
    });
    const lag = monitorEventLoopDelay({ resolution: 10 });
    try {
      await sleep(Math.max(0, start - Date.now()));
      lag.enable();
      const until = start + DEADLINE_WINDOW_MS + 15_000;
      while (lateness.length < HEARTBEATS && Date.now() < until) await sleep(250);
      lag.disable();
    } finally {
      off();
      await server.stop();
    }
    return {
      'down messages created': `${lateness.length} of ${HEARTBEATS}`,
      'lateness p50 (ms)': round(percentile(lateness, 50), 0),
      'lateness p99 (ms, target ≤ 1000)': round(percentile(lateness, 99), 0),
      'lateness max (ms)': round(Math.max(...lateness), 0),
      'event-loop delay p99 (ms, target ≤ 20)': round(lag.percentile(99) / 1e6, 1),
      'event-loop delay max (ms)': round(lag.max / 1e6, 1),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<Result> {
  return { ...(await throughputAndIdle()), ...(await deadlines()) };
}

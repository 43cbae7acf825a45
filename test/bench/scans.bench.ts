/**
 * Port scans (issue 13, "Speed"): Belfry in a child (servers/belfry.ts); the bench's user verifies
 * 127.0.0.1 through the real http proof (a loopback server in this process serving the token), then, in
 * BENCH_SCAN_ROUNDS rounds (default 3):
 * - without a scan: `POST /message` from one sender at a steady pace (one request every PACE_MS, each
 *   waiting for the previous), for WITHOUT_MS;
 * - with a scan: `POST /port-scan` of all 65,535 ports of 127.0.0.1 at concurrency 200 (timeoutMs 1000),
 *   the same sender running until the scan is done (seen by polling `GET /port-scan/{id}` every 250 ms).
 * Figures: the scan's duration (the record's finishedAt − startedAt; target ≤ 30 s), the latency p50 /
 * p99 / max of `POST /message` with and without the scan (the median of the rounds' p99s), the server's
 * CPU over each scan (from /proc) and its resident memory before and after.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_DIR,
  httpCall,
  median,
  openBenchStore,
  percentile,
  type Result,
  round,
  seedFixture,
  sleep,
  spawnServer,
} from './lib';

const ROUNDS = Number(process.env.BENCH_SCAN_ROUNDS ?? 3);
const WITHOUT_MS = Number(process.env.BENCH_SCAN_WITHOUT_MS ?? 8_000);
const PACE_MS = 10;
const POLL_MS = 250;

interface Latency {
  samples: number[];
  errors: number;
}

/** One sender, one request at a time, one started at most every PACE_MS, until `until()` says stop. */
async function paced(port: number, appToken: string, until: () => boolean): Promise<Latency> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  let errors = 0;
  let n = 0;
  try {
    while (!until()) {
      const t0 = performance.now();
      const res = await httpCall(
        agent,
        port,
        'POST',
        '/message',
        JSON.stringify({ title: 'scan bench', message: `message ${n++}`, priority: 2 }),
        { 'X-Service-Key': appToken },
      );
      const dt = performance.now() - t0;
      if (res.status === 200) samples.push(dt);
      else errors++;
      if (dt < PACE_MS) await sleep(PACE_MS - dt);
    }
  } finally {
    agent.destroy();
  }
  return { samples, errors };
}

const triple = (v: number[]) =>
  `${round(percentile(v, 50), 2)} / ${round(percentile(v, 99), 2)} / ${round(Math.max(...v), 1)}`;

export async function run(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-scans-'));
  let proofToken = '';
  const proof = createHttpServer((_req, res) => res.end(proofToken));
  await new Promise<void>((resolve) => proof.listen(0, '127.0.0.1', resolve));
  try {
    const store = await openBenchStore(join(dir, 'data'));
    const fx = seedFixture(store);
    await store.close();
    const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), {
      BENCH_DATA_DIR: join(dir, 'data'),
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await httpCall(
        agent,
        server.port,
        method,
        path,
        body === undefined ? undefined : JSON.stringify(body),
        auth,
      );
      if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${res.body}`);
      return JSON.parse(res.body) as Record<string, any>;
    };
    try {
      // 127.0.0.1 verified the way a user does it.
      const rec = await call('POST', '/verified-host/start', {
        host: '127.0.0.1',
        method: 'http',
        httpPort: (proof.address() as AddressInfo).port,
      });
      proofToken = rec.token as string;
      await call('POST', '/verified-host/check', { id: rec.id });

      const without: Latency[] = [];
      const withScan: Latency[] = [];
      const scanSeconds: number[] = [];
      const wallSeconds: number[] = [];
      const cpuPct: number[] = [];
      const opens: number[] = [];
      const rssBefore = server.rssMb();
      for (let r = 0; r < ROUNDS; r++) {
        const stopAt = performance.now() + WITHOUT_MS;
        without.push(await paced(server.port, fx.appToken, () => performance.now() >= stopAt));

        const cpu0 = server.cpuMs();
        const w0 = performance.now();
        const scan = await call('POST', '/port-scan', {
          appid: fx.channelIds[0],
          host: '127.0.0.1',
          ports: '1-65535',
          concurrency: 200,
          timeoutMs: 1_000,
        });
        let done: Record<string, any> | null = null;
        const poller = (async () => {
          const pollAgent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            for (;;) {
              await sleep(POLL_MS);
              const res = await httpCall(
                pollAgent,
                server.port,
                'GET',
                `/port-scan/${scan.id}`,
                undefined,
                auth,
              );
              const body = JSON.parse(res.body) as Record<string, any>;
              if (body.status !== 'running' && body.status !== 'queued') {
                done = body;
                return;
              }
            }
          } finally {
            pollAgent.destroy();
          }
        })();
        withScan.push(await paced(server.port, fx.appToken, () => done !== null));
        await poller;
        const wallMs = performance.now() - w0;
        const cpu = server.cpuMs() - cpu0;
        const d = done as unknown as Record<string, any>;
        if (d.status !== 'done' || d.scanned !== 65_535)
          throw new Error(`the scan ended ${d.status} after ${d.scanned} ports: ${d.error}`);
        scanSeconds.push((Date.parse(d.finishedAt) - Date.parse(d.startedAt)) / 1000);
        wallSeconds.push(wallMs / 1000);
        cpuPct.push((cpu / wallMs) * 100);
        opens.push((d.open as unknown[]).length);
      }
      const rssAfter = server.rssMb();
      const p99s = (l: Latency[]) => l.map((x) => round(percentile(x.samples, 99), 2));
      const pooled = (l: Latency[]) => l.flatMap((x) => x.samples);
      return {
        rounds: ROUNDS,
        'scan of 65,535 ports at concurrency 200: seconds per round → median (target ≤ 30)': `${scanSeconds.map((s) => round(s, 1)).join(', ')} → ${round(median(scanSeconds), 1)}`,
        'scan: POST → done seen by the client (s, median; polled every 250 ms)': round(
          median(wallSeconds),
          1,
        ),
        'scan: open ports found (median)': median(opens),
        'scan: server CPU over the scan (% of a core, median)': round(median(cpuPct), 0),
        'POST /message p99 without a scan: per round → median (ms)': `${p99s(without).join(', ')} → ${round(median(p99s(without)), 2)}`,
        'POST /message p99 during the scan: per round → median (ms)': `${p99s(withScan).join(', ')} → ${round(median(p99s(withScan)), 2)}`,
        'POST /message without a scan: pooled p50 / p99 / max (ms)': triple(pooled(without)),
        'POST /message during the scan: pooled p50 / p99 / max (ms)': triple(pooled(withScan)),
        'POST /message requests without / during (errors)': `${pooled(without).length} / ${pooled(withScan).length} (${[...without, ...withScan].reduce((n, x) => n + x.errors, 0)})`,
        'server RSS before / after the scans (MB)': `${round(rssBefore, 0)} / ${round(rssAfter, 0)}`,
      };
    } finally {
      agent.destroy();
      await server.stop();
    }
  } finally {
    await new Promise<void>((resolve) => proof.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
}

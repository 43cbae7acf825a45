/**
 * Metric ingest and series query figures (issue 17), not part of `npm run bench`:
 *   npx tsx test/bench/metrics-ingest.ts [seconds]
 * Belfry in a child process (durable answers: each waits for the journal fsync). Ingest: 1,000-point
 * JSON batches (100 series × 10 points) on 1 keep-alive connection, then on 4 in parallel, round-robin
 * over 20 sources so the 600 requests/minute per token do not cap the figure. Query: a series with 7
 * days of points every 10 s, `bucket=1m` over a full 1,440-bucket window (one day), 300 GETs: p50/p99.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoopLoad, httpCall, openBenchStore, seedFixture, spawnServer } from './lib';

const seconds = Number(process.argv[2] ?? 5);
const dataDir = mkdtempSync(join(tmpdir(), 'belfry-metrics-'));
const store = await openBenchStore(dataDir);
const fx = seedFixture(store, { devices: 1 });
await store.close();
const server = await spawnServer('test/bench/servers/belfry.ts', { BENCH_DATA_DIR: dataDir });
const agent = new Agent({ keepAlive: true });
const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
const tokens: string[] = [];
for (let i = 0; i < 21; i++) {
  const r = await httpCall(
    agent,
    server.port,
    'POST',
    '/metric-source',
    JSON.stringify({ appid: fx.channelIds[0], name: `bench ${i}` }),
    auth,
  );
  if (r.status !== 200) throw new Error(`create source: ${r.status} ${r.body}`);
  tokens.push(JSON.parse(r.body).token);
}
const queryToken = tokens.pop()!;

function batch(n: number): string {
  const metrics = [];
  for (let i = 0; i < 1000; i++)
    metrics.push({ name: 'bench.value', value: (n * 1000 + i) % 977, tags: { s: String(i % 100) } });
  return JSON.stringify({ metrics });
}
const bodies = Array.from({ length: 16 }, (_, i) => batch(i));

for (const concurrency of [1, 4, 8]) {
  const cpu0 = server.cpuMs();
  const r = await closedLoopLoad({
    port: server.port,
    concurrency,
    seconds,
    warmupSeconds: 1,
    make: (w, n) => ({
      method: 'POST',
      path: `/metric/${tokens[(w * 7 + n) % tokens.length]}`,
      body: bodies[n % bodies.length]!,
    }),
  });
  const cpu = (server.cpuMs() - cpu0) / (seconds + 1);
  console.log(
    `ingest, ${concurrency} connection(s): ${Math.round(r.rps * 1000)} points/s (${r.rps.toFixed(1)} req/s, ` +
      `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, errors ${r.errors}, server CPU ${(cpu / 10).toFixed(0)} %)`,
  );
}

// 7 days of one series, a point every 10 s, sent as backfill in 1,000-point batches.
const now = Date.now();
const from = now - 7 * 86_400_000;
let sent = 0;
for (let at = from; at < now; ) {
  const metrics = [];
  for (let i = 0; i < 1000 && at < now; i++, at += 10_000)
    metrics.push({ name: 'q', value: Math.sin(at / 1e6), at: at / 1000 });
  const r = await httpCall(agent, server.port, 'POST', `/metric/${queryToken}`, JSON.stringify({ metrics }));
  if (r.status !== 200) throw new Error(`backfill: ${r.status} ${r.body}`);
  sent += metrics.length;
}
const list = await httpCall(agent, server.port, 'GET', '/metric-source', undefined, auth);
const source = (JSON.parse(list.body) as { id: number; name: string }[]).find((s) => s.name === 'bench 20')!;
const mid = JSON.parse(
  (await httpCall(agent, server.port, 'GET', `/metric-source/${source.id}/metrics`, undefined, auth)).body,
)[0].id;
const lat: number[] = [];
for (let i = 0; i < 330; i++) {
  const to = now - (i % 6) * 86_400_000;
  const t0 = performance.now();
  const r = await httpCall(
    agent,
    server.port,
    'GET',
    `/metric-source/${source.id}/metrics/${mid}/series?bucket=1m&from=${(to - 1439 * 60_000) / 1000}&to=${to / 1000}`,
    undefined,
    auth,
  );
  if (r.status !== 200) throw new Error(`series: ${r.status} ${r.body}`);
  if (i >= 30) lat.push(performance.now() - t0);
}
lat.sort((a, b) => a - b);
const pct = (p: number) => lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)]!;
console.log(
  `series 1m over 1,440 buckets (${sent} points in 7 days): p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms`,
);
agent.destroy();
await server.stop();
rmSync(dataDir, { recursive: true, force: true });

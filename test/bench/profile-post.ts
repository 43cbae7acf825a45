/**
 * Profiling aid (not a benchmark): runs Belfry in a child with --cpu-prof under 50 concurrent
 * POST /message senders for a few seconds and prints the hottest functions by self time. With a socket
 * count, that many WebSockets of the channel's owner are open throughout, so every message fans out to
 * all of them (the fan-out in the profile; the senders then run at the rate the fan-out allows).
 *   npx tsx test/bench/profile-post.ts [seconds] [sockets]
 * BENCH_KEEP_PROFILE=1 keeps the .cpuprofile (its path is printed) for a closer look.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { closedLoopLoad, openBenchStore, seedFixture, spawnServer } from './lib';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}

const seconds = Number(process.argv[2] ?? 5);
const socketCount = Number(process.argv[3] ?? 0);
const dataDir = mkdtempSync(join(tmpdir(), 'belfry-prof-'));
const profDir = mkdtempSync(join(tmpdir(), 'belfry-cpuprof-'));
const store = await openBenchStore(dataDir);
const fx = seedFixture(store, { devices: Math.max(1, Math.min(100, socketCount)) });
await store.close();
process.env.BENCH_CPU_PROF = profDir;
// BENCH_PROFILE_SERVER=bare (or reference) profiles a reference pipeline under the same load instead.
const server = await spawnServer(`test/bench/servers/${process.env.BENCH_PROFILE_SERVER ?? 'belfry'}.ts`, {
  BENCH_DATA_DIR: dataDir,
});
delete process.env.BENCH_CPU_PROF;
let frames = 0;
const sockets: WebSocket[] = [];
for (let i = 0; i < socketCount; i++) {
  const ws = new WebSocket(
    `ws://127.0.0.1:${server.port}/ws?token=${fx.devices[i % fx.devices.length]!.token}`,
    {
      perMessageDeflate: false,
    },
  );
  ws.on('message', () => frames++);
  sockets.push(ws);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
}
const body = JSON.stringify({
  title: 'bench',
  message: 'a message of ordinary length for the benchmark',
  priority: 5,
});
const cpu0 = server.cpuMs();
const r = await closedLoopLoad({
  port: server.port,
  concurrency: 50,
  seconds,
  warmupSeconds: 1,
  make: () => ({
    method: 'POST',
    path: '/message',
    body,
    headers: { 'Content-Type': 'application/json', 'X-Gotify-Key': fx.appToken },
  }),
});
const cpu = server.cpuMs() - cpu0;
for (const ws of sockets) ws.terminate();
await server.stop();
if (socketCount > 0) console.log(`${frames} frames received by ${socketCount} sockets`);
console.log(
  `${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, errors ${r.errors}, ~${((cpu * 1000) / (r.ok * ((seconds + 1) / seconds))).toFixed(0)} µs CPU/request`,
);
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
if (file) {
  const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
  const total = prof.samples.length;
  const byFn = new Map<string, number>();
  for (const n of prof.nodes) {
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(node_modules|main)\//, '')}:${n.callFrame.lineNumber}`;
    byFn.set(key, (byFn.get(key) ?? 0) + n.hitCount);
  }
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  self  ${k}`);
  // Inclusive time of our own functions (each counted once per stack).
  const full = prof.nodes as (Node & { children?: number[] })[];
  const byId = new Map(full.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of full) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  const keyOf = (n: Node) =>
    `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(node_modules|main)\//, '')}`;
  for (const n of full) {
    if (!n.hitCount) continue;
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const k = keyOf(byId.get(id)!);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + n.hitCount);
    }
  }
  for (const [k, v] of [...incl]
    .filter(([k]) => k.includes('server/') || k.includes('express') || k.includes('body-parser'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 40))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  incl  ${k}`);
}
rmSync(dataDir, { recursive: true, force: true });
if (process.env.BENCH_KEEP_PROFILE) console.log(`profile kept in ${profDir}`);
else rmSync(profDir, { recursive: true, force: true });

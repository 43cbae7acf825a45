/**
 * Profiling aid (not a benchmark): seeds BENCH_ROWS messages (default 100k) with servers/seed-large.ts,
 * runs Belfry with --cpu-prof, requests deep pages of GET /message one after another and prints the
 * latency and the hottest functions. `npx tsx test/bench/profile-page.ts`
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, ROOT, spawnServer } from './lib';

const dataDir = mkdtempSync(join(tmpdir(), 'belfry-prof-page-'));
const profDir = mkdtempSync(join(tmpdir(), 'belfry-cpuprof-'));
const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/bench/servers/seed-large.ts'], {
  cwd: ROOT,
  env: {
    ...process.env,
    BENCH_DATA_DIR: dataDir,
    BENCH_ROWS: process.env.BENCH_ROWS ?? '100000',
    BENCH_TAIL: '0',
  },
}).toString();
const { fixture: fx } = JSON.parse(out.trim().split('\n').pop()!) as {
  fixture: { devices: { token: string }[] };
};
process.env.BENCH_CPU_PROF = profDir;
const server = await spawnServer('test/bench/servers/belfry.ts', { BENCH_DATA_DIR: dataDir });
delete process.env.BENCH_CPU_PROF;
const token = fx.devices[0]!.token;
process.once('exit', () => server.proc.kill('SIGKILL')); // never leave a profiled server behind
const first = (await (
  await fetch(`http://127.0.0.1:${server.port}/message?limit=1`, { headers: { 'X-Service-Key': token } })
).json()) as { messages: { id: number }[] };
const top = first.messages[0]!.id;
const lat: number[] = [];
for (let i = 0; i < 600; i++) {
  const since = Math.max(2, Math.floor(top * 0.05) - i * 37);
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${server.port}/message?limit=100&since=${since}`, {
    headers: { 'X-Service-Key': token },
  });
  await res.arrayBuffer();
  lat.push(performance.now() - t0);
}
await server.stop();
console.log(`deep page p50 ${percentile(lat, 50).toFixed(2)} ms, p99 ${percentile(lat, 99).toFixed(2)} ms`);
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
if (file) {
  const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as {
    nodes: { callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }[];
    samples: number[];
  };
  const byFn = new Map<string, number>();
  for (const n of prof.nodes) {
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(node_modules|main)\//, '')}:${n.callFrame.lineNumber}`;
    byFn.set(key, (byFn.get(key) ?? 0) + n.hitCount);
  }
  const total = prof.samples.length;
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}
rmSync(dataDir, { recursive: true, force: true });
rmSync(profDir, { recursive: true, force: true });

/**
 * Profiling aid (not a benchmark): where the deep page's tail comes from. Starts Belfry over a copy of a
 * data set (BENCH_DATASET, as scale.bench.ts leaves it) with servers/trace.ts on, and the floor
 * (servers/static.ts) beside it; requests deep pages interleaved with the floor as the scale bench does,
 * then lines each round's slowest pages up with what the server did meanwhile (GC, slow SQL, due
 * sources, jobs, snapshots) and with the CPU each thread of the three processes took per round.
 *   BENCH_DATASET=/tmp/belfry-ds/data npx tsx test/bench/trace-page.ts
 * TRACE_ROUNDS (default 5) rounds of 1,000 after TRACE_WARMUP (default 100) requests; BENCH_HEAP_SAMPLE=1
 * adds where the young heap's garbage comes from, per request (sampled, collected objects included).
 */
import { readdirSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, deepPagePath, httpGetBytes, percentile, procCpu, spawnServer, timedGet } from './lib';

interface TraceEntry {
  k: string;
  t: number;
  d: number;
  kind?: string;
  name?: string;
  sql?: string;
  url?: string;
}
interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const source = process.env.BENCH_DATASET;
if (!source) throw new Error('BENCH_DATASET is required (a data set scale.bench.ts made)');
const ROUNDS = Number(process.env.TRACE_ROUNDS ?? 5);
const WARMUP = Number(process.env.TRACE_WARMUP ?? 100);
const PER_ROUND = 1_000;
const fixture = JSON.parse(await readFile(join(source, 'bench-fixture.json'), 'utf8')) as {
  fixture: { devices: { token: string }[] };
  rows: number;
};
const work = await mkdtemp(join(tmpdir(), 'belfry-trace-page-'));
try {
  const dir = join(work, 'run');
  await cp(source, dir, { recursive: true });
  const traceFile = join(work, 'trace.jsonl');
  const server = await spawnServer(
    join(BENCH_DIR, 'servers', 'belfry.ts'),
    { BENCH_DATA_DIR: dir, BENCH_TRACE_FILE: traceFile },
    { timeoutMs: 120_000 },
  );
  const headers = { 'X-Service-Key': fixture.fixture.devices[0]!.token };
  const deepPath = (n: number) => deepPagePath(fixture.rows, n);
  const sample = await httpGetBytes(new Agent(), server.port, deepPath(0), headers);
  await writeFile(join(work, 'body.json'), sample.body);
  const floor = await spawnServer(join(BENCH_DIR, 'servers', 'static.ts'), {
    BENCH_BODY_FILE: join(work, 'body.json'),
  });
  const ports = [server.port, floor.port];
  const agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  // Timed as the scale bench times its pages (the whole body read, anything but a 200 throws).
  const get = (i: number, path: string) =>
    timedGet(agents[i]!, ports[i]!, { path, ...(i === 0 ? { headers } : {}) });
  /** CPU ms per thread (`name#tid`) of a process, from /proc. */
  const threads = (pid: number): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const t = procCpu(`/proc/${pid}/task/${tid}/stat`);
        out[`${t.name}#${tid}`] = t.cpuMs;
      } catch {
        // the thread ended meanwhile
      }
    }
    return out;
  };
  const pids = { server: server.proc.pid!, client: process.pid, floor: floor.proc.pid! };
  const cpu: Record<string, Record<string, number>>[] = [];
  const snapCpu = () => cpu.push(Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threads(p)])));
  const samples: { t: number; d: number; i: number; round: number }[] = [];
  const started = performance.timeOrigin + performance.now();
  for (let n = 0; n < WARMUP + ROUNDS * PER_ROUND; n++) {
    if (n >= WARMUP && (n - WARMUP) % PER_ROUND === 0) snapCpu();
    for (const i of [0, 1]) {
      const t = performance.timeOrigin + performance.now();
      const d = await get(i, deepPath(n));
      if (n >= WARMUP) samples.push({ t, d, i, round: Math.floor((n - WARMUP) / PER_ROUND) });
    }
  }
  snapCpu();
  for (const a of agents) a.destroy();
  // servers/trace.ts answers SIGHUP with a `traced` line once the trace (and the heap profile) are written.
  const written = new Promise<void>((resolve) => {
    const seen = (c: Buffer) => {
      if (!c.toString().includes('"traced"')) return;
      server.proc.stdout!.off('data', seen);
      resolve();
    };
    server.proc.stdout!.on('data', seen);
  });
  server.proc.kill('SIGHUP');
  await written;
  const trace = (await readFile(traceFile, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceEntry);
  await server.kill();
  await floor.kill();

  for (let r = 0; r < ROUNDS; r++) {
    const mine = samples.filter((s) => s.round === r && s.i === 0);
    const same = samples.filter((s) => s.round === r && s.i === 1);
    const p99 = percentile(
      mine.map((s) => s.d),
      99,
    );
    const p99f = percentile(
      same.map((s) => s.d),
      99,
    );
    const at = (s: { t: number }) => ((s.t - started) / 1000).toFixed(1);
    console.log(
      `round ${r} (t+${at(mine[0]!)}–${at(mine.at(-1)!)} s): deep page p99 ${p99.toFixed(2)} ms, floor ${p99f.toFixed(2)}, difference ${(p99 - p99f).toFixed(2)}`,
    );
    for (const who of Object.keys(pids)) {
      const a = cpu[r]![who]!;
      const b = cpu[r + 1]![who]!;
      const used = Object.keys(b)
        .map((k) => [k, b[k]! - (a[k] ?? 0)] as const)
        .filter(([, v]) => v > 0);
      console.log(`  CPU ms, ${who}: ${used.map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    for (const s of mine
      .filter((s) => s.d >= p99)
      .sort((x, y) => y.d - x.d)
      .slice(0, 12)) {
      const seen = trace.find((e) => e.k === 'req' && e.t >= s.t - 0.5 && e.t <= s.t + s.d);
      const meanwhile = trace.filter((e) => e.k !== 'req' && e.t < s.t + s.d && e.t + e.d > s.t - 2);
      console.log(
        `  ${s.d.toFixed(2)} ms, in the server ${seen ? seen.d.toFixed(2) : '?'}: ${meanwhile.map((e) => `${e.k} ${e.kind ?? e.name ?? e.sql?.slice(0, 40)} ${e.d.toFixed(2)}`).join('; ')}`,
      );
    }
  }
  const requests = trace.filter((e) => e.k === 'req');
  const after = requests[WARMUP]?.t ?? 0;
  const gcs = trace.filter((e) => e.k === 'gc' && e.t >= after);
  console.log(
    `after the warm-up: ${gcs.length} GCs (${gcs.filter((g) => g.kind === 'minor').length} scavenges) for ${requests.length - WARMUP} pages, ${gcs.reduce((a, g) => a + g.d, 0).toFixed(0)} ms of pauses; in the server p99 ${percentile(
      requests.filter((e) => e.t >= after).map((e) => e.d),
      99,
    ).toFixed(2)} ms`,
  );
  const byWhat = new Map<string, { n: number; ms: number }>();
  for (const e of trace) {
    if (e.k === 'req' || e.k === 'heap') continue;
    const key = `${e.k} ${e.kind ?? e.name ?? e.sql?.slice(0, 50)}`;
    const v = byWhat.get(key) ?? { n: 0, ms: 0 };
    v.n++;
    v.ms += e.d;
    byWhat.set(key, v);
  }
  for (const [k, v] of [...byWhat].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15))
    console.log(`  ${k}: ${v.n} × ${(v.ms / v.n).toFixed(2)} ms = ${v.ms.toFixed(0)} ms`);
  for (const e of trace.filter((e) => e.k === 'heap')) console.log(`  heap ${e.name}: ${JSON.stringify(e)}`);

  if (process.env.BENCH_HEAP_SAMPLE) {
    const prof = JSON.parse(await readFile(`${traceFile}.heapprofile`, 'utf8')) as { head: HeapNode };
    const self = new Map<string, number>();
    let all = 0;
    const walk = (n: HeapNode) => {
      const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + n.selfSize);
      all += n.selfSize;
      for (const c of n.children) walk(c);
    };
    walk(prof.head);
    console.log(
      `allocated per request (sampled): ${(all / requests.length / 1024).toFixed(0)} kB; by function:`,
    );
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20))
      console.log(`  ${(v / requests.length / 1024).toFixed(1).padStart(6)} kB  ${k}`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

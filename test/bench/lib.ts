/**
 * Shared pieces of the benchmarks: fixtures written straight into a data dir, child-process servers,
 * a keep-alive HTTP load generator, percentiles and resident memory. Everything talks to 127.0.0.1 only,
 * and every loop is bounded in count and time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from '../../server/db/migrations.generated';
import { openStore, type Store } from '../../server/db/store';
import { MESSAGE_SEARCH_INDEX } from '../../server/features/messages/search-index';
import { systemClock } from '../../server/lib/clock';
import { createLogger } from '../../server/lib/log';
import { issueToken } from '../../server/lib/tokens';
import { SERVER_V8_FLAGS } from '../../server/lib/v8-flags';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(BENCH_DIR, '..', '..');
export type Result = Record<string, number | string>;

export const quietLog = createLogger('error');

export function openBenchStore(dataDir: string): Promise<Store> {
  return openStore({
    dataDir,
    log: quietLog,
    clock: systemClock,
    migrations,
    triggerKeptIndexes: [MESSAGE_SEARCH_INDEX],
  });
}

export interface Fixture {
  userId: number;
  channelIds: number[];
  /** A write key of channelIds[0]. */
  appToken: string;
  devices: { id: number; token: string }[];
}

/**
 * One verified business-plan user (1,000,000 events a day, so the quota never interferes), channels, a
 * primary key on the first, and devices, written directly through the store as their families would.
 */
export function seedFixture(store: Store, opts: { channels?: number; devices?: number } = {}): Fixture {
  const db = store.db;
  const now = systemClock.now();
  return db.transaction(() => {
    const userId = db.run(
      "INSERT INTO users (email, password_hash, admin, verified, plan, created_at) VALUES ('bench@example.com', 'x', 1, 1, 'business', ?)",
      [now],
    ).lastInsertRowid;
    const channelIds: number[] = [];
    for (let i = 0; i < (opts.channels ?? 1); i++)
      channelIds.push(
        db.run('INSERT INTO channels (user_id, name, created_at) VALUES (?, ?, ?)', [
          userId,
          `bench ${i}`,
          now,
        ]).lastInsertRowid,
      );
    const key = issueToken('A');
    db.run(
      'INSERT INTO channel_keys (channel_id, name, can_read, can_write, is_primary, token_digest, token_hint, created_at) VALUES (?, ?, 0, 1, 1, ?, ?, ?)',
      [channelIds[0]!, 'bench', key.digest, key.hint, now],
    );
    const devices: { id: number; token: string }[] = [];
    for (let i = 0; i < (opts.devices ?? 1); i++) {
      const d = issueToken('C');
      const id = db.run(
        'INSERT INTO devices (user_id, name, token_digest, token_hint, created_at) VALUES (?, ?, ?, ?, ?)',
        [userId, `bench ${i}`, d.digest, d.hint, now],
      ).lastInsertRowid;
      devices.push({ id, token: d.token });
    }
    return { userId, channelIds, appToken: key.token, devices };
  });
}

// ---------------------------------------------------------------------------------------------------
// Child-process servers

export interface ChildServer {
  proc: ChildProcess;
  port: number;
  ready: Record<string, number>;
  rssMb(): number;
  cpuMs(): number;
  /** SIGKILL: nothing is flushed, the data dir stays as it was (the benches copy it beforehand). */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `script` (a .ts file) in a child process of the same Node binary; the script prints one JSON
 * line `{"port": N, ...timings}` when it listens. Fails after `timeoutMs`.
 */
export function spawnServer(
  script: string,
  env: Record<string, string>,
  opts: { timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<ChildServer> {
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  // Belfry's own server starts as `npm run serve` starts it (server/lib/v8-flags.ts).
  const own = basename(script) === 'belfry.ts' ? SERVER_V8_FLAGS : [];
  const proc = spawn(
    process.execPath,
    [...prof, ...own, ...(opts.nodeArgs ?? []), '--import', 'tsx', script],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${script} did not start within ${opts.timeoutMs ?? 60_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const ready = JSON.parse(out.slice(0, nl)) as Record<string, number>;
      resolve({
        proc,
        port: ready.port!,
        ready,
        rssMb: () => rssMb(proc.pid!),
        cpuMs: () => cpuMs(proc.pid!),
        kill: async () => {
          proc.kill('SIGKILL');
          await exited;
        },
        stop: async () => {
          proc.kill('SIGTERM');
          const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(t);
        },
      });
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}\n${stderr}`));
    });
  });
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  return procCpu(`/proc/${pid}/stat`).cpuMs;
}

/** A process's or a thread's (`/proc/{pid}/task/{tid}/stat`) name and CPU time used so far, in ms. */
export function procCpu(statPath: string): { name: string; cpuMs: number } {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat (1-based), in clock ticks (100 Hz on Linux).
  return {
    name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100,
  };
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

// ---------------------------------------------------------------------------------------------------
// HTTP

export interface HttpResult {
  status: number;
  body: string;
}

export function httpCall(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET answer's status and raw bytes. */
export interface BytesResult {
  status: number;
  body: Buffer;
}

/**
 * The n-th deep page of a data set of `rows` messages (scale.bench.ts, trace-page.ts): `GET /message`,
 * 100 messages below a cursor spread over the oldest 5 % of the rows, so every page reads deep.
 */
export function deepPagePath(rows: number, n: number): string {
  return `/message?limit=100&since=${1_000 + ((n * 7_919) % Math.floor(rows * 0.05))}`;
}

/**
 * A GET for the read-latency benchmarks: the body stays bytes. Decoding a 30 kB page into a string
 * costs the client ~0.2–0.3 ms a request (more on Node 24) and leaves garbage whose collection lands in
 * later timed requests: client work that is not the server's latency.
 */
export function httpGetBytes(
  agent: Agent,
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<BytesResult> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `concurrency` senders, each with its own keep-alive connection, send back to back for `seconds`
 * (after `warmupSeconds` not counted). Returns requests/s of 2xx answers and latency percentiles.
 */
export async function closedLoopLoad(opts: {
  port: number;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  make: (
    worker: number,
    n: number,
  ) => { method: string; path: string; body?: string; headers?: Record<string, string> };
}): Promise<{ rps: number; ok: number; errors: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const start = performance.now();
  const countFrom = start + opts.warmupSeconds * 1000;
  const end = countFrom + opts.seconds * 1000;
  let ok = 0;
  let errors = 0;
  const lat: number[] = [];
  const worker = async (w: number) => {
    for (let n = 0; n < 10_000_000; n++) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const r = opts.make(w, n);
      let status = 0;
      try {
        status = (await httpCall(agent, opts.port, r.method, r.path, r.body, r.headers)).status;
      } catch {
        status = 0;
      }
      const t1 = performance.now();
      if (t0 >= countFrom && t1 <= end) {
        if (status >= 200 && status < 300) {
          ok++;
          lat.push(t1 - t0);
        } else errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)));
  agent.destroy();
  return { rps: ok / opts.seconds, ok, errors, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** One timed GET, in ms; anything but a 200, or an answer `check` rejects, throws. */
export async function timedGet(
  agent: Agent,
  port: number,
  r: { path: string; headers?: Record<string, string> },
  check?: (r: BytesResult) => void,
): Promise<number> {
  const t0 = performance.now();
  const res = await httpGetBytes(agent, port, r.path, r.headers);
  const dt = performance.now() - t0;
  if (res.status !== 200)
    throw new Error(`GET ${r.path} answered ${res.status}: ${res.body.subarray(0, 200).toString()}`);
  check?.(res);
  return dt;
}

export interface LatencyTarget {
  port: number;
  make: (n: number) => { path: string; headers?: Record<string, string> };
  check?: (r: BytesResult) => void;
}

/** Latencies measured in rounds: the pooled percentiles, and each round's p99 with their median. */
export interface RoundedLatency {
  p50: number;
  p99: number;
  roundP99: number[];
  medianRoundP99: number;
  /** p99 of the uncounted warm-up requests (NaN without any): what the first moments after start look like. */
  warmupP99?: number;
}

export function summariseRounds(rounds: readonly number[][]): RoundedLatency {
  const pooled = rounds.flat();
  const roundP99 = rounds.map((r) => percentile(r, 99));
  return {
    p50: percentile(pooled, 50),
    p99: percentile(pooled, 99),
    roundP99,
    medianRoundP99: median(roundP99),
  };
}

/** "r1, r2, … → median": each round's p99, then their median (run.ts reads the figure after the arrow). */
export function formatRounds(l: RoundedLatency, digits = 1): string {
  return `${l.roundP99.map((v) => round(v, digits)).join(', ')} → ${round(l.medianRoundP99, digits)}`;
}

/**
 * Sequential requests that alternate between `targets` one request at a time, so that every target sees
 * the same moments of a shared machine's noise; `rounds` rounds of `count` requests each (per target),
 * after `warmup` uncounted ones. Each round is a p99 of its own: a neighbour's burst spoils one round,
 * not the figure (the pooled p99 is reported beside it).
 */
export async function interleavedLatency(
  targets: readonly LatencyTarget[],
  opts: { rounds: number; count: number; warmup: number },
): Promise<RoundedLatency[]> {
  const agents = targets.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const rounds = targets.map(() => [] as number[][]);
  const warm = targets.map(() => [] as number[]);
  let n = 0;
  const once = (t: number): Promise<number> =>
    timedGet(agents[t]!, targets[t]!.port, targets[t]!.make(n), targets[t]!.check);
  for (; n < opts.warmup; n++) for (let t = 0; t < targets.length; t++) warm[t]!.push(await once(t));
  for (let round = 0; round < opts.rounds; round++) {
    const lat = targets.map(() => [] as number[]);
    for (let i = 0; i < opts.count; i++, n++)
      for (let t = 0; t < targets.length; t++) lat[t]!.push(await once(t));
    for (let t = 0; t < targets.length; t++) rounds[t]!.push(lat[t]!);
  }
  for (const a of agents) a.destroy();
  return rounds.map((r, t) => ({ ...summariseRounds(r), warmupP99: percentile(warm[t]!, 99) }));
}

/** Round r's order: forward on even rounds, backward on odd ones (each server leads and trails alike). */
export function alternate<T>(items: readonly T[], r: number): T[] {
  return r % 2 === 0 ? [...items] : [...items].reverse();
}

/**
 * a / b of rounds measured side by side: the median of the per-round ratios (round i of `a` against
 * round i of `b`, the same moments of the machine), to `digits` places. Rounds without a partner, or
 * with a zero or non-finite partner, are left out; none left: NaN.
 */
export function pairedRatio(a: readonly number[], b: readonly number[], digits = 2): number {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const r = a[i]! / b[i]!;
    if (Number.isFinite(r) && b[i] !== 0) ratios.push(r);
  }
  return ratios.length === 0 ? Number.NaN : round(median(ratios), digits);
}

/**
 * a − b of rounds measured side by side (round i of each at the same moments): the median of the
 * per-round differences, to `digits` places; NaN without a pair.
 */
export function pairedDifference(a: readonly number[], b: readonly number[], digits = 2): number {
  const n = Math.min(a.length, b.length);
  if (n === 0) return Number.NaN;
  return round(median(Array.from({ length: n }, (_, i) => a[i]! - b[i]!)), digits);
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Sequential requests: p50/p99 in ms of one request at a time (no queueing in the numbers). */
export async function sequentialLatency(
  port: number,
  count: number,
  warmup: number,
  make: (n: number) => { path: string; headers?: Record<string, string> },
  check?: (r: BytesResult) => void,
): Promise<{ p50: number; p99: number; max: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const lat: number[] = [];
  for (let n = 0; n < warmup + count; n++) {
    const dt = await timedGet(agent, port, make(n), check);
    if (n >= warmup) lat.push(dt);
  }
  agent.destroy();
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), max: Math.max(...lat) };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function printTable(name: string, result: Result): void {
  const width = Math.max(...Object.keys(result).map((k) => k.length));
  console.log(`\n${name}`);
  for (const [k, v] of Object.entries(result)) console.log(`  ${k.padEnd(width)}  ${v}`);
}

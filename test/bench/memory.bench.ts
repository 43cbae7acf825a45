/**
 * Resident memory (VmRSS) over time with 1,000,000 stored messages, sampled every 250 ms in the process
 * that holds the database:
 * - seeding (servers/seed-large.ts): the bulk insert up to BENCH_ROWS (the database file grows from 0
 *   to ~300 MB), a snapshot at 1M, the journal tail, then the exit like a crash;
 * - the real server (servers/belfry.ts) over that data dir: start-up (snapshot load + replay of the longest
 *   journal a crash leaves), then mixed load for BENCH_MEMORY_LOAD_S seconds (8 durable POST /message
 *   senders writing past 1M, a deep-page reader, a searcher) with a snapshot in the middle of it (SIGUSR2),
 *   then a clean stop (its final snapshot).
 * The data set is 100 channels of 10,000 recent messages: what the retention job (every 10 minutes: 90 days,
 * 10,000 a channel, 1,000,000 in all) keeps, so a long run holds ~1M messages while the senders write more.
 * BENCH_MEMORY_RATE=<messages/s> paces the senders (default: closed loop, as fast as the server answers) and
 * then the reader (10 pages/s) and the searcher (2 searches/s) too: an hour of closed-loop writing would
 * store millions of messages between two retention runs, which no laptop sees; `BENCH_MEMORY_LOAD_S=3600
 * BENCH_MEMORY_RATE=100` is the hour of mixed load.
 * Reports max / p50 per phase, the overall maximum, and writes an ASCII plot of the whole run to
 * BENCH_MEMORY_PLOT (default: printed to stderr).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_DIR,
  type ChildServer,
  type Fixture,
  httpCall,
  httpGetBytes,
  percentile,
  type Result,
  ROOT,
  rssMb,
  sleep,
  spawnServer,
} from './lib';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const LOAD_S = Number(process.env.BENCH_MEMORY_LOAD_S ?? 90);
const SAMPLE_MS = 250;
const SENDERS = 8;
const RATE = Number(process.env.BENCH_MEMORY_RATE ?? 0);
const CHANNELS = 100;

/** Waits for the next slot of a loop paced at `perSecond` (no wait when unpaced). */
function pacer(perSecond: number): () => Promise<void> {
  if (!(perSecond > 0)) return async () => {};
  const step = 1000 / perSecond;
  let next = performance.now();
  return async () => {
    next += step;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  };
}

interface Sample {
  t: number;
  phase: string;
  mb: number;
}

/** Samples a process's RSS every SAMPLE_MS under the current phase label. */
class RssSampler {
  readonly samples: Sample[] = [];
  phase = '';
  private timer: NodeJS.Timeout | null = null;
  private readonly t0 = performance.now();

  watch(pid: number): void {
    this.stop();
    const take = () => {
      let mb = Number.NaN;
      try {
        mb = rssMb(pid);
      } catch {
        // the process has exited
      }
      // An exited process not yet reaped has no VmRSS; one still starting (before exec) shows 0.
      if (mb > 0) this.samples.push({ t: (performance.now() - this.t0) / 1000, phase: this.phase, mb });
    };
    take();
    this.timer = setInterval(take, SAMPLE_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Runs servers/seed-large.ts, labelling samples by the phase lines it prints. */
async function seed(dir: string, sampler: RssSampler): Promise<{ fixture: Fixture; rows: number }> {
  const { spawn } = await import('node:child_process');
  const proc = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, 'servers', 'seed-large.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      BENCH_DATA_DIR: dir,
      BENCH_ROWS: String(ROWS),
      BENCH_SEED_CHANNELS: String(CHANNELS),
      BENCH_SEED_RECENT: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  sampler.phase = 'seed: start';
  sampler.watch(proc.pid!);
  let out = '';
  let last = '';
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    let nl = out.indexOf('\n');
    while (nl >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      const msg = JSON.parse(line) as { phase?: string };
      if (msg.phase) sampler.phase = `seed: ${msg.phase}`;
      else last = line;
      nl = out.indexOf('\n');
    }
  });
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  sampler.stop();
  if (code !== 0) throw new Error(`seeding failed (exit ${code})`);
  return JSON.parse(last) as { fixture: Fixture; rows: number };
}

/** The process's peak resident memory so far (VmHWM), in MB. */
function hwmMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

function summary(samples: readonly Sample[]): { max: number; p50: number } {
  const mbs = samples.map((s) => s.mb);
  return { max: Math.max(...mbs), p50: percentile(mbs, 50) };
}

/** A small ASCII plot of RSS over time, one column per time slot (its maximum). */
export function asciiPlot(
  samples: readonly Sample[],
  opts: { width?: number; height?: number; topMb?: number } = {},
): string {
  const width = opts.width ?? 72;
  const height = opts.height ?? 10;
  if (samples.length === 0) return '';
  const t1 = samples[samples.length - 1]!.t;
  const top = opts.topMb ?? Math.ceil(Math.max(...samples.map((s) => s.mb)) / 100) * 100;
  const cols: number[] = Array.from({ length: width }, () => 0);
  for (const s of samples) {
    const c = Math.min(width - 1, Math.floor((s.t / (t1 || 1)) * width));
    cols[c] = Math.max(cols[c]!, s.mb);
  }
  // A slot no sample fell into (a short run) shows the one before it.
  for (let c = 1; c < width; c++) if (cols[c] === 0) cols[c] = cols[c - 1]!;
  const lines: string[] = [];
  for (let r = height; r >= 1; r--) {
    const level = (top * r) / height;
    const label =
      r === height || r === Math.round(height / 2) ? `${Math.round(level)} MB`.padStart(7) : ' '.repeat(7);
    lines.push(`${label} |${cols.map((v) => (v >= level - top / height / 2 ? '#' : ' ')).join('')}`);
  }
  lines.push(`${' '.repeat(7)} +${'-'.repeat(width)}`);
  lines.push(`${' '.repeat(9)}0 s${' '.repeat(Math.max(1, width - 8))}${Math.round(t1)} s`);
  return lines.join('\n');
}

export async function run(): Promise<Result> {
  const work = await mkdtemp(join(tmpdir(), 'belfry-bench-memory-'));
  const sampler = new RssSampler();
  let child: ChildServer | null = null;
  try {
    const dir = join(work, 'data');
    const seeded = await seed(dir, sampler);
    const fx = seeded.fixture;
    const result: Result = { 'messages stored after seeding': seeded.rows };

    sampler.phase = 'server: start-up';
    const server = await spawnServer(
      join(BENCH_DIR, 'servers', 'belfry.ts'),
      { BENCH_DATA_DIR: dir },
      { timeoutMs: 120_000 },
    );
    child = server;
    sampler.watch(server.proc.pid!);
    result['start-up: createServer ms (snapshot load + replay + init)'] = Math.round(server.ready.createMs!);
    // The pid is known once the server listens: the peak of start-up itself is the kernel's high-water mark.
    result['RSS MB right after start-up / peak during start-up (VmHWM)'] =
      `${server.rssMb()} / ${hwmMb(server.proc.pid!)}`;
    await sleep(1000);

    let snapshot: number | string = 'not finished';
    server.proc.stdout!.on('data', (c: Buffer) => {
      for (const line of c.toString().split('\n')) {
        if (!line.startsWith('{"snapshot')) continue;
        const msg = JSON.parse(line) as { snapshotMs?: number; snapshotError?: string };
        snapshot = msg.snapshotError ? `failed: ${msg.snapshotError}` : Math.round(msg.snapshotMs ?? 0);
        sampler.phase = 'server: mixed load';
      }
    });

    sampler.phase = 'server: mixed load';
    const agent = new Agent({ keepAlive: true, maxSockets: SENDERS + 2 });
    const headers = { 'X-Service-Key': fx.devices[0]!.token };
    const end = performance.now() + LOAD_S * 1000;
    let posted = 0;
    let failed = 0;
    const why = new Map<string, number>();
    /** A request's status, or 0 when it failed outright (counted by reason: the run goes on). */
    const attempt = async (call: () => Promise<{ status: number }>): Promise<number> => {
      try {
        return (await call()).status;
      } catch (err) {
        const reason = (err as { code?: string }).code ?? String(err);
        why.set(reason, (why.get(reason) ?? 0) + 1);
        return 0;
      }
    };
    const sender = async (w: number) => {
      const pace = pacer(RATE / SENDERS);
      for (let n = 0; performance.now() < end; n++) {
        await pace();
        const status = await attempt(() =>
          httpCall(
            agent,
            server.port,
            'POST',
            `/message?token=${fx.appToken}`,
            JSON.stringify({
              title: `load ${w}`,
              message: `Mixed load message ${n} from worker ${w}: backup finished on host${n % 200}`,
              priority: 5,
            }),
          ),
        );
        if (status === 200) posted++;
        else failed++;
      }
    };
    const reader = async () => {
      const pace = pacer(RATE > 0 ? 10 : 0);
      for (let n = 0; performance.now() < end; n++) {
        await pace();
        const status = await attempt(() =>
          httpGetBytes(
            agent,
            server.port,
            `/message?limit=100&since=${1_000 + ((n * 7_919) % 50_000)}`,
            headers,
          ),
        );
        if (status !== 200) failed++;
      }
    };
    const searcher = async () => {
      const words = ['database', 'host137', 'kafka timeout', 'backup'];
      const pace = pacer(RATE > 0 ? 2 : 0);
      for (let n = 0; performance.now() < end; n++) {
        await pace();
        const status = await attempt(() =>
          httpGetBytes(
            agent,
            server.port,
            `/message/search?q=${encodeURIComponent(words[n % words.length]!)}&limit=100`,
            headers,
          ),
        );
        if (status !== 200) failed++;
      }
    };
    const snapshotMidway = (async () => {
      await sleep((LOAD_S * 1000) / 2);
      sampler.phase = 'server: snapshot under load';
      server.proc.kill('SIGUSR2');
    })();
    await Promise.all([
      ...Array.from({ length: SENDERS }, (_, w) => sender(w)),
      reader(),
      searcher(),
      snapshotMidway,
    ]);
    agent.destroy();
    result['mixed load: seconds, senders'] =
      `${LOAD_S} s, ${SENDERS} senders ${RATE > 0 ? `paced at ${RATE} messages/s in all` : 'in a closed loop'}`;
    result['RSS MB at the end of the mixed load'] = server.rssMb();
    result['RSS MB peak of the server so far (VmHWM, between samples too)'] = hwmMb(server.proc.pid!);
    result['mixed load: messages posted (failed requests)'] = `${posted} (${failed})`;
    if (why.size > 0)
      result['mixed load: requests that failed outright, by reason'] = [...why]
        .map(([reason, n]) => `${reason} ×${n}`)
        .join(', ');
    // Alive and answering after the load (a failed request above must not hide a crashed server).
    result['server answers GET /health after the load'] = await attempt(() =>
      httpGetBytes(new Agent(), server.port, '/health', {}),
    );
    result['snapshot under load: total ms'] = snapshot;

    sampler.phase = 'server: clean stop (final snapshot)';
    await server.stop();
    sampler.stop();

    const phases = [...new Set(sampler.samples.map((s) => s.phase))];
    for (const p of phases) {
      const s = summary(sampler.samples.filter((x) => x.phase === p));
      result[`RSS MB max / p50: ${p}`] = `${s.max} / ${s.p50}`;
    }
    const loaded = sampler.samples.filter((s) => s.phase.startsWith('server'));
    result[`RSS MB max of the server (≥ ${ROWS} messages, all phases)`] = summary(loaded).max;
    result['RSS MB max over the whole run'] = summary(sampler.samples).max;
    const plot = asciiPlot(sampler.samples, { topMb: 1000 });
    if (process.env.BENCH_MEMORY_PLOT) {
      writeFileSync(
        process.env.BENCH_MEMORY_PLOT,
        `${plot}\n\nphases (s): ${phases
          .map((p) => `${p} @ ${sampler.samples.find((s) => s.phase === p)!.t.toFixed(0)}`)
          .join('; ')}\n\n${JSON.stringify(sampler.samples)}\n`,
      );
    } else process.stderr.write(`${plot}\n`);
    return result;
  } finally {
    sampler.stop();
    await child?.kill(); // after a failure midway; a no-op once the server has stopped
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./lib');
  printTable('memory', await run());
}

/**
 * The reference of monitors.bench.ts: the least a program can do to request 1,000 URLs every 60 s. One
 * setTimeout per target, a plain `node:http` GET on a fresh connection (`agent: false`, as Belfry's
 * checks), the body read and dropped; the next request `BENCH_REF_INTERVAL_MS` after this one's start.
 * No database, no history, no states. Target i is `http://127.0.0.1:BENCH_TARGET_PORT/r/i`, first
 * requested at BENCH_REF_SCHEDULE's i-th wall-clock time (a JSON array in that file).
 * SIGUSR2 starts the measuring window (event-loop delay and CPU from then on); SIGTERM writes
 * `{lagP99Ms, lagMaxMs, cpuMs, windowMs, errors}` to BENCH_REF_OUT and exits.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const port = Number(process.env.BENCH_TARGET_PORT);
const schedule = JSON.parse(readFileSync(process.env.BENCH_REF_SCHEDULE!, 'utf8')) as number[];
const interval = Number(process.env.BENCH_REF_INTERVAL_MS ?? 60_000);
const out = process.env.BENCH_REF_OUT!;
let errors = 0;

function check(i: number): void {
  const start = Date.now();
  setTimeout(() => check(i), start + interval - Date.now());
  const req = get({ host: '127.0.0.1', port, path: `/r/${i}`, agent: false, timeout: 10_000 }, (res) => {
    res.resume();
    res.on('error', () => errors++);
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', () => errors++);
}

for (const [i, at] of schedule.entries()) setTimeout(() => check(i), at - Date.now());

const lag = monitorEventLoopDelay({ resolution: 10 });
let cpu0 = process.cpuUsage();
let t0 = performance.now();
process.on('SIGUSR2', () => {
  lag.reset();
  lag.enable();
  cpu0 = process.cpuUsage();
  t0 = performance.now();
});
process.once('SIGTERM', () => {
  lag.disable();
  const cpu = process.cpuUsage(cpu0);
  writeFileSync(
    out,
    JSON.stringify({
      lagP99Ms: lag.percentile(99) / 1e6,
      lagMaxMs: lag.max / 1e6,
      cpuMs: (cpu.user + cpu.system) / 1000,
      windowMs: performance.now() - t0,
      errors,
    }),
  );
  process.exit(0);
});
process.stdout.write(`${JSON.stringify({ port: 0 })}\n`);

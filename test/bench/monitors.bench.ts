/**
 * Monitors (issue 12, "Speed"):
 * - schedule: 1,000 `http-monitor`s at a 60 s interval, created through the API of a Belfry running in
 *   this process (real clock), against a loopback target in a child process (servers/monitor-target.ts)
 *   that logs every request's arrival by path (`/t/{i}`: monitor i). Over a window of
 *   BENCH_MONITOR_SECONDS (default 150 s: every monitor is checked at least twice in it, besides its
 *   first check at create): each check's start lag (its arrival at the target − its due time; the first
 *   check is due at the monitor's `createdAt`, each later one 60 s after the previous check's arrival),
 *   `monitorEventLoopDelay` p99 and the CPU of this process (process.cpuUsage) as % of one core. Targets:
 *   ≤ 1 s, ≤ 20 ms, ≤ 15 %. Beside it, in the same window, the reference (servers/monitor-reference.ts,
 *   a child): one setTimeout per target and a plain node:http GET, no database, no history, requesting
 *   the same 1,000 targets (`/r/{i}`) on the same schedule shifted by half an interval, measured the
 *   same way (lag from the target's log, its own event-loop delay and CPU).
 * - history: `GET /monitor-history/http-monitor/{id}` of one monitor holding what 90 days of 1-minute
 *   checks leave behind (status intervals and daily aggregates for 90 days, the last 7 days' checks
 *   capped at 10,000), written through the history module (recordStatus / recordCheck) into a bench
 *   store; Belfry in a child (servers/belfry.ts), sequential requests in 5 rounds of 1,000 interleaved
 *   with a raw node:http server sending the same bytes (servers/static.ts, the floor). Target: the
 *   median of the rounds' p99s ≤ 10 ms.
 * BENCH_MONITOR_PART=schedule|history runs one part only.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../server/config';
import type { AppContext } from '../../server/context';
import {
  DAY_MS,
  dayOf,
  recordCheck,
  recordStatus,
  registerHistoryKind,
} from '../../server/features/history/service';
import { createServer } from '../../server/index';
import {
  BENCH_DIR,
  formatRounds,
  httpCall,
  httpGetBytes,
  interleavedLatency,
  median,
  openBenchStore,
  pairedDifference,
  percentile,
  quietLog,
  type Result,
  round,
  seedFixture,
  sequentialLatency,
  sleep,
  spawnServer,
} from './lib';

const MONITORS = Number(process.env.BENCH_MONITORS ?? 1_000);
const WINDOW_S = Number(process.env.BENCH_MONITOR_SECONDS ?? 150);
const INTERVAL_MS = 60_000;
/** The reference's schedule is Belfry's shifted by half an interval, so the two bursts do not coincide. */
const REF_SHIFT_MS = INTERVAL_MS / 2;
const PART = process.env.BENCH_MONITOR_PART ?? '';
const HISTORY_DAYS = 90;
const HISTORY_ROUNDS = 5;
const HISTORY_COUNT = 1_000;

function serverConfig(dataDir: string) {
  return loadConfig({ env: {}, overrides: { dataDir, port: 0, host: '127.0.0.1', logLevel: 'error' } });
}

/** Per path, the lag of each arrival after the first behind the previous arrival + the interval. */
function lags(arrivals: Record<string, number[]>, prefix: string, firstDue: (i: number) => number): number[] {
  const out: number[] = [];
  for (let i = 0; i < MONITORS; i++) {
    const a = arrivals[`${prefix}${i}`] ?? [];
    for (let k = 0; k < a.length; k++) out.push(a[k]! - (k === 0 ? firstDue(i) : a[k - 1]! + INTERVAL_MS));
  }
  return out;
}

/** Checks of each target whose arrival fell inside [from, to]: min / median over the targets. */
function perTarget(arrivals: Record<string, number[]>, prefix: string, from: number, to: number): string {
  const counts = Array.from(
    { length: MONITORS },
    (_, i) => (arrivals[`${prefix}${i}`] ?? []).filter((t) => t >= from && t <= to).length,
  );
  return `${Math.min(...counts)} / ${median(counts)}`;
}

const triple = (v: number[]) =>
  `${round(percentile(v, 50), 0)} / ${round(percentile(v, 99), 0)} / ${round(Math.max(...v), 0)}`;

async function schedule(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-mon-'));
  const targetLog = join(dir, 'target-log.json');
  const refSchedule = join(dir, 'ref-schedule.json');
  const refOut = join(dir, 'ref-out.json');
  try {
    const store = await openBenchStore(join(dir, 'data'));
    const fx = seedFixture(store);
    await store.close();
    const target = await spawnServer(join(BENCH_DIR, 'servers', 'monitor-target.ts'), {
      BENCH_TARGET_LOG: targetLog,
    });
    const server = await createServer(serverConfig(join(dir, 'data')), { log: quietLog });
    const { port } = await server.start();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
    let reference: Awaited<ReturnType<typeof spawnServer>> | undefined;
    let serverStopped = false;
    try {
      // 1,000 monitors through the API, one after the other; each one's first check is due at its createdAt.
      const created: number[] = [];
      const t0 = performance.now();
      for (let i = 0; i < MONITORS; i++) {
        const res = await httpCall(
          agent,
          port,
          'POST',
          '/http-monitor',
          JSON.stringify({
            appid: fx.channelIds[0],
            name: `target ${i}`,
            url: `http://127.0.0.1:${target.port}/t/${i}`,
            intervalSec: INTERVAL_MS / 1000,
          }),
          auth,
        );
        if (res.status !== 200) throw new Error(`POST /http-monitor answered ${res.status}: ${res.body}`);
        created.push(Date.parse((JSON.parse(res.body) as { createdAt: string }).createdAt));
      }
      const createSeconds = (performance.now() - t0) / 1000;
      agent.destroy();
      // The reference: the same targets on the same schedule, half an interval later.
      writeFileSync(refSchedule, JSON.stringify(created.map((c) => c + REF_SHIFT_MS)));
      reference = await spawnServer(join(BENCH_DIR, 'servers', 'monitor-reference.ts'), {
        BENCH_TARGET_PORT: String(target.port),
        BENCH_REF_SCHEDULE: refSchedule,
        BENCH_REF_INTERVAL_MS: String(INTERVAL_MS),
        BENCH_REF_OUT: refOut,
      });
      // The window: steady state, after every monitor exists and the reference runs.
      const lag = monitorEventLoopDelay({ resolution: 10 });
      const from = Date.now();
      reference.proc.kill('SIGUSR2');
      lag.enable();
      const cpu0 = process.cpuUsage();
      const w0 = performance.now();
      await sleep(WINDOW_S * 1000);
      const cpu = process.cpuUsage(cpu0);
      const windowMs = performance.now() - w0;
      lag.disable();
      const to = Date.now();
      const checks = server.ctx.db.first<{ ok: number; failed: number }>(
        `SELECT sum(ok) AS ok, sum(1 - ok) AS failed FROM history_checks WHERE kind = 'http-monitor'`,
      )!;
      await reference.stop();
      const ref = JSON.parse(await readFile(refOut, 'utf8')) as {
        lagP99Ms: number;
        lagMaxMs: number;
        cpuMs: number;
        windowMs: number;
        errors: number;
      };
      await server.stop();
      serverStopped = true;
      await target.stop();
      const arrivals = JSON.parse(await readFile(targetLog, 'utf8')) as Record<string, number[]>;
      const belfryLag = lags(arrivals, '/t/', (i) => created[i]!);
      const refLag = lags(arrivals, '/r/', (i) => created[i]! + REF_SHIFT_MS);
      return {
        monitors: MONITORS,
        'created through the API in (s)': round(createSeconds, 1),
        'window (s, BENCH_MONITOR_SECONDS)': WINDOW_S,
        'belfry: checks per monitor in the window, min / median': perTarget(arrivals, '/t/', from, to),
        'reference: checks per target in the window, min / median': perTarget(arrivals, '/r/', from, to),
        'belfry: checks logged ok / failed (creation + window)': `${checks.ok} / ${checks.failed}`,
        'belfry: check start lag p50 / p99 / max (ms, target p99 ≤ 1000)': triple(belfryLag),
        'belfry: lag samples': belfryLag.length,
        'reference: check start lag p50 / p99 / max (ms)': triple(refLag),
        'reference: lag samples': refLag.length,
        'belfry: event-loop delay p99 / max (ms, target p99 ≤ 20)': `${round(lag.percentile(99) / 1e6, 1)} / ${round(lag.max / 1e6, 1)}`,
        'reference: event-loop delay p99 / max (ms)': `${round(ref.lagP99Ms, 1)} / ${round(ref.lagMaxMs, 1)}`,
        'belfry: CPU over the window (% of a core, target ≤ 15)': round(
          ((cpu.user + cpu.system) / 1000 / windowMs) * 100,
          2,
        ),
        'reference: CPU over the window (% of a core)': round((ref.cpuMs / ref.windowMs) * 100, 2),
        'reference: request errors': ref.errors,
      };
    } finally {
      agent.destroy();
      if (reference && reference.proc.exitCode === null) await reference.kill();
      if (!serverStopped) await server.stop().catch(() => undefined);
      if (target.proc.exitCode === null) await target.kill();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// History

/** Check m (one a minute) fails: 2 minutes every 6 hours, and a 30-minute outage once a week. */
const fails = (m: number) => m % 360 < 2 || m % 10_080 < 30;
const responseMs = (m: number) => 20 + ((m * 7_919) % 180);

/**
 * What 90 days of 1-minute checks leave in the history tables, written through the history module with
 * a clock that moves with the checks: every status change (recordStatus), the checks of the last 7 days
 * (recordCheck, which trims to 7 days and 10,000 per source as the server does), and for the older days
 * the response-time aggregates those checks had left in history_days.
 */
function seedHistory(
  db: AppContext['db'],
  id: number,
  now: number,
): { intervals: number; checks: number; days: number } {
  let clock = now;
  const ctx = { db, clock: { now: () => clock } } as unknown as AppContext;
  registerHistoryKind(ctx, {
    kind: 'http-monitor',
    upStatuses: ['up'],
    downStatuses: ['down'],
    maintenanceStatuses: ['maintenance'],
  });
  const kind = 'http-monitor';
  const total = HISTORY_DAYS * 1440;
  const first = Math.floor(now / 60_000) * 60_000 - total * 60_000;
  const logFrom = now - 7 * DAY_MS;
  const older = new Map<number, { sum: number; count: number }>();
  db.transaction(() => {
    for (const table of ['history_intervals', 'history_days', 'history_checks'])
      db.run(`DELETE FROM ${table} WHERE kind = ? AND source_id = ?`, [kind, id]);
    recordStatus(ctx, kind, id, 'pending', first);
    let status = 'pending';
    for (let m = 0; m < total; m++) {
      const at = first + m * 60_000;
      clock = at;
      const ok = !fails(m);
      const next = ok ? 'up' : 'down';
      if (next !== status) {
        recordStatus(ctx, kind, id, next, at);
        status = next;
      }
      const rt = ok ? responseMs(m) : null;
      if (at >= logFrom)
        recordCheck(ctx, kind, id, {
          at,
          ok,
          status,
          responseTimeMs: rt,
          ...(ok ? {} : { error: 'status 503 not in 200-299' }),
        });
      else if (rt !== null) {
        const d = older.get(dayOf(at)) ?? { sum: 0, count: 0 };
        d.sum += rt;
        d.count++;
        older.set(dayOf(at), d);
      }
    }
    for (const [day, d] of older)
      db.run(
        `INSERT INTO history_days (kind, source_id, day, rt_sum, rt_count) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (kind, source_id, day) DO UPDATE SET rt_sum = rt_sum + excluded.rt_sum, rt_count = rt_count + excluded.rt_count`,
        [kind, id, day, d.sum, d.count],
      );
  });
  const count = (table: string) =>
    db.first<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE kind = ? AND source_id = ?`, [
      kind,
      id,
    ])!.n;
  return {
    intervals: count('history_intervals'),
    checks: count('history_checks'),
    days: count('history_days'),
  };
}

async function history(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-mon-hist-'));
  const dataDir = join(dir, 'data');
  try {
    const target = await spawnServer(join(BENCH_DIR, 'servers', 'monitor-target.ts'), {
      BENCH_TARGET_LOG: join(dir, 'target-log.json'),
    });
    try {
      const store = await openBenchStore(dataDir);
      const fx = seedFixture(store);
      await store.close();
      const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
      // The monitor itself, created through the API (its settings sealed as the server does).
      const first = await createServer(serverConfig(dataDir), { log: quietLog });
      const { port } = await first.start();
      const agent = new Agent({ keepAlive: false });
      const res = await httpCall(
        agent,
        port,
        'POST',
        '/http-monitor',
        JSON.stringify({ appid: fx.channelIds[0], name: 'site', url: `http://127.0.0.1:${target.port}/h/1` }),
        auth,
      );
      agent.destroy();
      await first.stop();
      if (res.status !== 200) throw new Error(`POST /http-monitor answered ${res.status}: ${res.body}`);
      const id = (JSON.parse(res.body) as { id: number }).id;
      const seedStore = await openBenchStore(dataDir);
      const t0 = performance.now();
      const seeded = seedHistory(seedStore.db, id, Date.now());
      const seedMs = performance.now() - t0;
      await seedStore.snapshot();
      await seedStore.close();

      const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: dataDir });
      try {
        const path = `/monitor-history/http-monitor/${id}`;
        const one = await httpGetBytes(new Agent(), server.port, path, auth);
        if (one.status !== 200) throw new Error(`GET ${path} answered ${one.status}: ${one.body.toString()}`);
        const summary = JSON.parse(one.body.toString()) as {
          uptime: Record<string, number>;
          days: unknown[];
        };
        const bodyFile = join(dir, 'history.json');
        writeFileSync(bodyFile, one.body);
        const floorServer = await spawnServer(join(BENCH_DIR, 'servers', 'static.ts'), {
          BENCH_BODY_FILE: bodyFile,
        });
        try {
          const [belfry, floor] = await interleavedLatency(
            [
              { port: server.port, make: () => ({ path, headers: auth }) },
              { port: floorServer.port, make: () => ({ path }) },
            ],
            { rounds: HISTORY_ROUNDS, count: HISTORY_COUNT, warmup: 100 },
          );
          const log = await sequentialLatency(server.port, HISTORY_COUNT, 100, () => ({
            path: `${path}/log?limit=100`,
            headers: auth,
          }));
          return {
            'history: seeded intervals / daily rows / checks (in ms)': `${seeded.intervals} / ${seeded.days} / ${seeded.checks} (${Math.round(seedMs)})`,
            'history: answer bytes, 90d uptime': `${one.body.length}, ${summary.uptime['90d']}`,
            'GET /monitor-history/http-monitor/{id}: p99 per round, median (ms, target ≤ 10)': formatRounds(
              belfry!,
              2,
            ),
            'GET /monitor-history/http-monitor/{id}: pooled p50 / p99 ms': `${round(belfry!.p50, 2)} / ${round(belfry!.p99, 2)}`,
            'the same bytes from raw node:http (the floor): p99 per round, median': formatRounds(floor!, 2),
            'the same bytes from raw node:http (the floor): pooled p50 / p99 ms': `${round(floor!.p50, 2)} / ${round(floor!.p99, 2)}`,
            'history p99 minus the floor’s, per round, median ms': pairedDifference(
              belfry!.roundP99,
              floor!.roundP99,
            ),
            'GET /monitor-history/http-monitor/{id}/log?limit=100 p50 / p99 ms': `${round(log.p50, 2)} / ${round(log.p99, 2)}`,
          };
        } finally {
          await floorServer.kill();
        }
      } finally {
        await server.stop();
      }
    } finally {
      await target.kill();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<Result> {
  return {
    ...(PART === '' || PART === 'history' ? await history() : {}),
    ...(PART === '' || PART === 'schedule' ? await schedule() : {}),
  };
}

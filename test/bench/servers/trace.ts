/**
 * A diagnostic for tails (BENCH_TRACE_FILE, servers/belfry.ts): what held the server's event loop, with
 * wall-clock times a client can line up with its own slow requests. Records, as JSON lines written on
 * SIGHUP (the bench asks before it kills the server):
 * - `gc`: every garbage collection (PerformanceObserver), its kind and pause;
 * - `req`: every HTTP request from its arrival to its response's end, as the server saw it;
 * - `sql`: every database call (all/first/run/exec) of 1 ms or more, with its statement's start;
 * - `due` / `job`: every run of a due source or a scheduled job, by name, with its duration.
 * Times are epoch ms (`performance.timeOrigin + now`); a client on the same machine reads the same clock.
 * Once written it prints `{"traced": <entries>}`.
 * Off by default: the wrapping costs a little on every call.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import type { createServer } from '../../../server/index';

type Server = Awaited<ReturnType<typeof createServer>>;
const epoch = (t: number) => performance.timeOrigin + t;
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

export function traceServer(server: Server, file: string): void {
  const lines: string[] = [];
  const note = (o: Record<string, unknown>) => lines.push(JSON.stringify(o));
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      note({ k: 'gc', t: epoch(e.startTime), d: e.duration, kind: GC_KINDS[kind] ?? String(kind) });
    }
  }).observe({ entryTypes: ['gc'] });
  server.httpServer.prependListener('request', (req, res) => {
    const t = performance.now();
    res.once('finish', () => note({ k: 'req', t: epoch(t), d: performance.now() - t, url: req.url }));
  });
  const db = server.ctx.db as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['all', 'first', 'run', 'exec']) {
    const orig = db[m]!.bind(db);
    db[m] = (...a: unknown[]) => {
      const t = performance.now();
      try {
        return orig(...a);
      } finally {
        const d = performance.now() - t;
        if (d >= 1) note({ k: 'sql', t: epoch(t), d, sql: String(a[0]).replace(/\s+/g, ' ').slice(0, 80) });
      }
    };
  }
  const timed = (k: string, name: string, fn: (...a: unknown[]) => unknown) =>
    function (this: unknown, ...a: unknown[]) {
      const t = performance.now();
      const done = () => note({ k, t: epoch(t), d: performance.now() - t, name });
      const r = fn.apply(this, a);
      if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).finally(done);
      else done();
      return r;
    };
  const due = server.ctx.due as unknown as {
    states?: { source: { name: string; runDue: (...a: unknown[]) => unknown } }[];
  };
  for (const s of due.states ?? [])
    s.source.runDue = timed('due', s.source.name, s.source.runDue.bind(s.source));
  const sched = server.scheduler as unknown as {
    jobs?: { name: string; run: (...a: unknown[]) => unknown }[];
  };
  for (const j of sched.jobs ?? []) j.run = timed('job', j.name, j.run.bind(j));
  const snap = server.store.snapshot.bind(server.store);
  server.store.snapshot = timed('snapshot', 'snapshot', snap) as typeof server.store.snapshot;
  // BENCH_HEAP_SAMPLE: where the garbage comes from (sampled allocations, collected ones included).
  const inspect = process.env.BENCH_HEAP_SAMPLE ? new Session() : null;
  if (inspect) {
    inspect.connect();
    inspect.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  // The `traced` line tells the bench (trace-page.ts) that every file is written.
  const finish = () => {
    for (const sp of getHeapSpaceStatistics())
      note({
        k: 'heap',
        t: epoch(performance.now()),
        d: 0,
        name: sp.space_name,
        size: sp.space_size,
        used: sp.space_used_size,
      });
    writeFileSync(file, `${lines.join('\n')}\n`);
    process.stdout.write(`${JSON.stringify({ traced: lines.length })}\n`);
  };
  process.on('SIGHUP', () => {
    if (!inspect) return finish();
    inspect.post('HeapProfiler.stopSampling', (err, r) => {
      if (!err) writeFileSync(`${file}.heapprofile`, JSON.stringify(r.profile));
      finish();
    });
  });
}

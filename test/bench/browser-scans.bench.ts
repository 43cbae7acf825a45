/**
 * Browser workflows (issue 13, "Speed"; runs with `npm run bench -- scans`):
 * - check time: a three-step workflow (goto a loopback page, fill an input, expectText) checked through
 *   `POST /browser-workflow/{id}/check-now` of a Belfry running in this process (real clock, the real
 *   Chromium), with a warm browser (3 checks first). Target: ≤ 1.5 s per check (p95 of 20 checks).
 * - reference: the same three steps on the same page by bare playwright-core on the same Chromium with the
 *   same launch arguments and viewport (servers/browser-reference.ts, a child process with its own browser,
 *   a fresh context and page made per check, no request guard), alternating check by check with Belfry's,
 *   so the ratio holds on a loaded machine where the absolute times do not. Belfry also uses a fresh
 *   context per check, but makes it (and its blank page) ahead, after the previous check; the memory
 *   sampler below runs in this process, Belfry's, not in the reference's (it counts against Belfry).
 * - phases: the engine's debug line `browser check phases` (contextAndPage: waiting for a slot and the
 *   context; step1…; final; close), medians over the timed checks, and what lies outside the check.
 * - memory: the resident memory of the browser's process tree (the Chromium descendants of this process,
 *   VmRSS summed from /proc/{pid}/status, and PSS from smaps_rollup, which splits shared pages) before the first check, at its peak during the checks (sampled every
 *   50 ms), right after them (warm, idle), and after the one-minute idle close (real time: up to 150 s).
 * Skipped (figures say why) when no Chromium is installed.
 */

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../server/config';
import { createServer } from '../../server/index';
import { chromiumExecutable, chromiumStats } from '../../server/lib/chromium';
import { createLogger } from '../../server/lib/log';
import { BENCH_DIR, httpCall, median, percentile, type Result, round, sleep } from './lib';

const CHECKS = Number(process.env.BENCH_BROWSER_CHECKS ?? 20);
const WARMUP = 3;
/** `BENCH_BROWSER_IDLE=skip` leaves out the idle-close wait (while iterating on the check time). */
const IDLE_WAIT_MS = process.env.BENCH_BROWSER_IDLE === 'skip' ? 0 : 150_000;

/**
 * The server's log: errors to stderr, and the engine's debug line `browser check phases` (ms per phase
 * of one check: context, guard, page, step1…, close) kept for the breakdown.
 */
function phaseLog() {
  const phases: Record<string, number>[] = [];
  const log = createLogger('debug', (line) => {
    const at = line.indexOf(' DEBUG browser check phases ');
    if (at >= 0) phases.push(JSON.parse(line.slice(line.indexOf('{', at))) as Record<string, number>);
    else if (/^\S+ ERROR /.test(line)) process.stderr.write(`${line}\n`);
  });
  return { log, phases };
}

/** Every descendant of `root` (children, grandchildren, …), from /proc/{pid}/stat's ppid field. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // the process ended meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, p] of parent) {
      if (p === pid) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

/** The reference's child process: its Chromium tree is not Belfry's (memory figures). */
let referencePid: number | null = null;

/** Belfry's Chromium processes among this process's descendants (browser, GPU, renderers, utilities). */
function chromiumTree(): number[] {
  const exclude = new Set(referencePid === null ? [] : [referencePid, ...descendants(referencePid)]);
  return descendants(process.pid).filter((pid) => {
    if (exclude.has(pid)) return false;
    try {
      return /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '');
    } catch {
      return false;
    }
  });
}

/** Summed over the Chromium tree, MiB: VmRSS (shared pages counted in every process) and PSS (shared split). */
function browserTreeMemory(): { rss: number; pss: number } {
  let rss = 0;
  let pss = 0;
  for (const pid of chromiumTree()) {
    try {
      rss += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { rss: round(rss / 1024, 1), pss: round(pss / 1024, 1) };
}

/** The bare-playwright reference (servers/browser-reference.ts) in a child process; `check()` → ms. */
async function startReference(executable: string, url: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(BENCH_DIR, 'servers', 'browser-reference.ts'), executable, url],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  referencePid = child.pid ?? null;
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) throw new Error('the browser reference exited');
    return r.value;
  };
  if ((await next()) !== 'ready') throw new Error('the browser reference did not start');
  return {
    check: async () => {
      child.stdin.write('check\n');
      return Number(await next());
    },
    stop: async () => {
      child.stdin.end();
      await new Promise((r) => child.once('exit', r));
      referencePid = null;
    },
  };
}

export async function run(): Promise<Result> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belfry-bench-browser-'));
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      logLevel: 'error',
      adminEmail: 'bench@example.com',
      adminPassword: 'bench-password-123',
      bcryptRounds: 4,
    },
  });
  const { log, phases } = phaseLog();
  const server = await createServer(config, { log });
  if (!chromiumExecutable(server.ctx)) {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    return { skipped: 'no Chromium installed (set BELFRY_CHROMIUM_PATH)' };
  }
  const site = createHttpServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(
      '<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1>' +
        '<input id="q"><p id="out"></p>' +
        '<script>q.addEventListener("input", () => { out.textContent = "searching " + q.value })</script>' +
        '</body></html>',
    );
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const sitePort = (site.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true });
  try {
    const { port } = await server.start();
    const basic = `Basic ${Buffer.from('bench@example.com:bench-password-123').toString('base64')}`;
    const device = JSON.parse(
      (
        await httpCall(agent, port, 'POST', '/client', JSON.stringify({ name: 'bench' }), {
          Authorization: basic,
        })
      ).body,
    ) as { token: string };
    const auth = { 'X-Service-Key': device.token };
    const channel = JSON.parse(
      (await httpCall(agent, port, 'POST', '/application', JSON.stringify({ name: 'bench' }), auth)).body,
    ) as { id: number };
    const workflow = JSON.parse(
      (
        await httpCall(
          agent,
          port,
          'POST',
          '/browser-workflow',
          JSON.stringify({
            appid: channel.id,
            name: 'three steps',
            paused: true,
            steps: [
              { action: 'goto', url: `http://127.0.0.1:${sitePort}/` },
              { action: 'fill', selector: '#q', value: 'lamp' },
              { action: 'expectText', selector: '#out', value: 'searching lamp' },
            ],
          }),
          auth,
        )
      ).body,
    ) as { id: number };

    const before = browserTreeMemory();
    const peak = { ...before };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const m = browserTreeMemory();
        peak.rss = Math.max(peak.rss, m.rss);
        peak.pss = Math.max(peak.pss, m.pss);
        await sleep(50);
      }
    })();
    const check = async () => {
      const t0 = performance.now();
      const r = await httpCall(agent, port, 'POST', `/browser-workflow/${workflow.id}/check-now`, '{}', auth);
      const ms = performance.now() - t0;
      const body = JSON.parse(r.body) as { ok: boolean; error?: string; responseTimeMs: number };
      if (!body.ok) throw new Error(`check failed: ${body.error}`);
      return { wall: ms, engine: body.responseTimeMs };
    };
    const coldStart = await check();
    for (let i = 1; i < WARMUP; i++) await check();
    const reference = await startReference(chromiumExecutable(server.ctx)!, `http://127.0.0.1:${sitePort}/`);
    for (let i = 0; i < WARMUP; i++) await reference.check();
    const wall: number[] = [];
    const engine: number[] = [];
    const bare: number[] = [];
    phases.length = 0;
    // Alternating, so Belfry and the reference see the same background load.
    for (let i = 0; i < CHECKS; i++) {
      const r = await check();
      wall.push(r.wall);
      engine.push(r.engine);
      bare.push(await reference.check());
    }
    await reference.stop();
    sampling = false;
    await sampler;
    const warmIdle = browserTreeMemory();
    const idleStart = performance.now();
    while (chromiumStats(server.ctx).running && performance.now() - idleStart < IDLE_WAIT_MS)
      await sleep(500);
    await sleep(500); // the process tree exits after the close
    const closedAfter = (performance.now() - idleStart) / 1000;
    const after = browserTreeMemory();
    const names = [...new Set(phases.flatMap((p) => Object.keys(p)))];
    const breakdown = names.map((n) => `${n} ${round(median(phases.map((p) => p[n] ?? 0)), 0)}`).join(', ');
    return {
      [`check-now, 3 steps, warm browser: p50 over ${CHECKS} checks (ms)`]: round(percentile(wall, 50)),
      [`check-now, 3 steps, warm browser: p95 over ${CHECKS} checks (ms, target ≤ 1500)`]: round(
        percentile(wall, 95),
      ),
      'check-now, 3 steps, warm browser: max (ms)': round(Math.max(...wall)),
      'the check itself (responseTimeMs) p50 (ms)': round(percentile(engine, 50)),
      'phases of the check, median (ms)': breakdown,
      'outside the check (HTTP, engine, store) p50 (ms)': round(
        median(wall.map((w, i) => w - engine[i]!)),
        0,
      ),
      'reference: bare playwright, same 3 steps, fresh context, same Chromium: p50 / p95 (ms)': `${round(
        percentile(bare, 50),
      )} / ${round(percentile(bare, 95))}`,
      'check-now p50 / reference p50': round(percentile(wall, 50) / percentile(bare, 50), 2),
      'first check, browser launched (ms)': round(coldStart.wall),
      'browser RSS / PSS before the first check (MiB)': `${before.rss} / ${before.pss}`,
      'browser RSS / PSS peak during the checks (MiB)': `${peak.rss} / ${peak.pss}`,
      'browser RSS / PSS right after the checks, warm and idle (MiB)': `${warmIdle.rss} / ${warmIdle.pss}`,
      'browser closed after idle (s)': round(closedAfter, 0),
      'browser RSS after the idle close (MiB)': after.rss,
      'browser processes after the idle close': chromiumTree().length,
      'browser launches': chromiumStats(server.ctx).launches,
    };
  } finally {
    agent.destroy();
    await new Promise<void>((r) => site.close(() => r()));
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

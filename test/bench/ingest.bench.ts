/**
 * Ingest (issue 17, "Speed"): metric points, the series query, and the webhook router against
 * `POST /message`. `npm run bench -- ingest` runs it alone. Belfry runs in child processes
 * (servers/belfry.ts), every write answered only after its journal fsync (durable, as in production).
 *
 * - **Metric ingest**: JSON batches of 1,000 points (100 series × 10 points each: 10 metric names × 10
 *   hosts, the 10 points of a series one second apart, as an agent flushing every 10 s), closed loop on
 *   INGEST_CONNECTIONS keep-alive connections (the judged figure) and on 1 connection, in alternating
 *   rounds. The requests go round-robin over SOURCES metric sources: at 600 requests a minute per source
 *   the rate limit would cap the total at SOURCES × 10 batches/s, far above what is reached (no 429 is
 *   counted; any would be reported). Figures: points/s, p50/p99 per batch, server CPU per point.
 * - **Series query**: one more source holds one series with 7 days of points every 10 s (sent by ingest
 *   with back-dated `at` values, so rollups are what ingest writes). The API answers at most 1,440 buckets
 *   a query (§8.2), so the 7 days at 1 m are seven queries. (a) One full 1,440-bucket window inside the
 *   7 days (each of the five inner windows in turn), in rounds interleaved one request at a time with a raw
 *   node:http server answering the same bytes (servers/static.ts, the floor): p99 per round and its
 *   median (the judged figure: one query, the most the API returns at once, over a series holding 7 days).
 *   (b) The whole 7 days read as its 7 consecutive windows one after the other: p50/p99 of the sum.
 * - **Router vs POST /message**: a fresh server; the same user's router holds 6 rules, the one matching a
 *   GitHub push (test/fixtures/router/github-push.json, its headers and body, by path and `$.ref`) is 5th,
 *   with templates in title and message. ROUTER_SENDERS closed-loop senders, alternating rounds of
 *   `POST /router/{token}/github` and `POST /message` (small JSON body) on the same server; medians of the
 *   rounds, server CPU per request from /proc, and the ratios of the paired rounds.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  alternate,
  BENCH_DIR,
  type ChildServer,
  closedLoopLoad,
  type Fixture,
  formatRounds,
  httpCall,
  interleavedLatency,
  median,
  openBenchStore,
  pairedDifference,
  pairedRatio,
  percentile,
  type Result,
  ROOT,
  round,
  seedFixture,
  spawnServer,
} from './lib';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const INGEST_CONNECTIONS = 4;
const SOURCES = 40;
const BATCH = 1_000;
const NAMES = [
  'cpu.user',
  'cpu.system',
  'cpu.iowait',
  'mem.used',
  'mem.cached',
  'disk.read_bytes',
  'disk.write_bytes',
  'net.rx_bytes',
  'net.tx_bytes',
  'load.1m',
];
const HOSTS = 10;
const QUERY_COUNT = Number(process.env.BENCH_QUERY_COUNT ?? 150);
const QUERY_WARMUP = 30;
const WEEK_SUMS = Number(process.env.BENCH_WEEK_SUMS ?? 60);
const ROUTER_SENDERS = 50;
const MIN = 60_000;
const DAY = 86_400_000;
const WINDOW = 1_440;

const BELFRY = join(BENCH_DIR, 'servers', 'belfry.ts');
/** BENCH_PARTS=metrics,query,router (any of them; default all): for profiling one part. */
const PARTS = (process.env.BENCH_PARTS ?? 'metrics,query,router').split(',');

async function prepare(dir: string): Promise<Fixture> {
  const store = await openBenchStore(dir);
  const fx = seedFixture(store, { devices: 1 });
  await store.close();
  return fx;
}

/** A JSON call that must answer 200; its parsed answer (typed by the caller). */
async function call<T = Record<string, unknown>>(
  agent: Agent,
  server: ChildServer,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<T> {
  const r = await httpCall(
    agent,
    server.port,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    headers,
  );
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as T;
}

/** One 1,000-point batch: 100 series (10 names × 10 hosts) × 10 points a second apart, ending now. */
function batchBody(n: number): string {
  const now = Math.floor(Date.now() / 1000);
  const metrics: { name: string; value: number; at: number; tags: Record<string, string> }[] = [];
  for (const name of NAMES)
    for (let h = 0; h < HOSTS; h++)
      for (let k = 0; k < BATCH / (NAMES.length * HOSTS); k++)
        metrics.push({
          name,
          value: round(((n * 7 + h * 13 + k) % 1000) * 1.37, 2),
          at: now - 9 + k,
          tags: { host: `web-${h}`, region: h % 2 ? 'eu-west' : 'us-east' },
        });
  return JSON.stringify({ metrics });
}

async function metricIngest(server: ChildServer, tokens: string[], result: Result): Promise<void> {
  // A few bodies with current `at` values; rebuilt each round so they stay within the last minutes.
  const runs: Record<
    number,
    { rps: number; p50: number; p99: number; cpuUsPerPoint: number; errors: number }[]
  > = { 1: [], [INGEST_CONNECTIONS]: [] };
  let sent = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const bodies = Array.from({ length: 8 }, (_, i) => batchBody(r * 8 + i));
    for (const concurrency of alternate([INGEST_CONNECTIONS, 1], r)) {
      const cpu0 = server.cpuMs();
      const t = await closedLoopLoad({
        port: server.port,
        concurrency,
        seconds: SECONDS,
        warmupSeconds: 1,
        make: (w, n) => {
          sent++;
          return {
            method: 'POST',
            path: `/metric/${tokens[(sent + w) % tokens.length]}`,
            body: bodies[(n + w) % bodies.length]!,
          };
        },
      });
      const points = (t.ok + t.errors + t.rps) * BATCH; // + the warm-up second
      runs[concurrency]!.push({
        ...t,
        cpuUsPerPoint: ((server.cpuMs() - cpu0) * 1000) / points,
      });
    }
  }
  for (const c of [INGEST_CONNECTIONS, 1]) {
    const rs = runs[c]!;
    const label = `${c} connection${c === 1 ? '' : 's'}`;
    result[`metric ingest points/s, ${label}, 1,000-point batches (median of ${ROUNDS})`] = Math.round(
      median(rs.map((x) => x.rps * BATCH)),
    );
    result[`metric ingest rounds points/s, ${label}`] = rs.map((x) => Math.round(x.rps * BATCH)).join(', ');
    result[`metric ingest p50 / p99 ms per batch, ${label} (median)`] =
      `${round(median(rs.map((x) => x.p50)))} / ${round(median(rs.map((x) => x.p99)))}`;
    result[`metric ingest server CPU µs per point, ${label} (median)`] = round(
      median(rs.map((x) => x.cpuUsPerPoint)),
      2,
    );
    const errors = rs.reduce((n, x) => n + x.errors, 0);
    if (errors > 0) result[`metric ingest non-2xx answers, ${label}`] = errors;
  }
  result['metric ingest requests sent / sources (600 a minute each)'] = `${sent} / ${tokens.length}`;
}

/** 7 days of one series, a point every 10 s, ingested in 1,000-point batches with back-dated `at`. */
async function seedWeek(agent: Agent, server: ChildServer, token: string, end: number): Promise<number> {
  let sent = 0;
  for (let at = end - 7 * DAY + 10_000; at <= end; ) {
    const metrics: { name: string; value: number; at: number }[] = [];
    for (let i = 0; i < BATCH && at <= end; i++, at += 10_000)
      metrics.push({
        name: 'queue.depth',
        value: round(500 + 400 * Math.sin(at / 3.6e6) + (at % 7), 3),
        at: at / 1000,
      });
    const answer = await call<{ accepted: number }>(
      agent,
      server,
      'POST',
      `/metric/${token}`,
      { metrics },
      {},
    );
    if (answer.accepted !== metrics.length)
      throw new Error(`week seed: ${JSON.stringify(answer).slice(0, 300)}`);
    sent += metrics.length;
  }
  return sent;
}

async function seriesQuery(
  work: string,
  agent: Agent,
  server: ChildServer,
  fx: Fixture,
  result: Result,
): Promise<void> {
  const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
  type Src = { id: number; token: string };
  const source = await call<Src>(
    agent,
    server,
    'POST',
    '/metric-source',
    { appid: fx.channelIds[0], name: 'week' },
    auth,
  );
  // The last whole minute; the 7 windows are the 10,080 buckets up to and including it.
  const end = Math.floor(Date.now() / MIN) * MIN - MIN;
  const t0 = performance.now();
  const points = await seedWeek(agent, server, source.token, end);
  const seedS = (performance.now() - t0) / 1000;
  const [series] = await call<{ id: number }[]>(
    agent,
    server,
    'GET',
    `/metric-source/${source.id}/metrics`,
    undefined,
    auth,
  );
  const first = end - (7 * WINDOW - 1) * MIN;
  const windowPath = (k: number) => {
    const from = first + k * WINDOW * MIN;
    return `/metric-source/${source.id}/metrics/${series.id}/series?bucket=1m&from=${from / 1000}&to=${(from + (WINDOW - 1) * MIN) / 1000}`;
  };
  const check = (body: Buffer) => {
    const answer = JSON.parse(body.toString()) as { points: unknown[] };
    if (answer.points.length !== WINDOW) throw new Error(`a window answered ${answer.points.length} buckets`);
  };
  // The floor: raw node:http answering the bytes of an inner window.
  const sample = await httpCall(agent, server.port, 'GET', windowPath(3), undefined, auth);
  check(Buffer.from(sample.body));
  const bodyFile = join(work, 'window.body');
  writeFileSync(bodyFile, sample.body);
  const floor = await spawnServer(join(BENCH_DIR, 'servers', 'static.ts'), { BENCH_BODY_FILE: bodyFile });
  try {
    const cpu0 = server.cpuMs();
    const [page, same] = await interleavedLatency(
      [
        {
          port: server.port,
          make: (n) => ({ path: windowPath(1 + (n % 5)), headers: auth }),
          check: (r) => {
            if (r.body.length < 100_000) throw new Error(`a window of ${r.body.length} bytes`);
          },
        },
        { port: floor.port, make: () => ({ path: '/' }) },
      ],
      { rounds: ROUNDS, count: QUERY_COUNT, warmup: QUERY_WARMUP },
    );
    const cpuPerGet = (server.cpuMs() - cpu0) / (ROUNDS * QUERY_COUNT + QUERY_WARMUP);
    result[
      `series 1m, one 1,440-bucket window of a 7-day series: p99 ms per round of ${QUERY_COUNT}, median`
    ] = formatRounds(page!, 2);
    // The server's own work per GET (its CPU while only these GETs reach it): what a loaded machine's
    // scheduling adds to the latencies is not in it.
    result['series window server CPU ms per GET'] = round(cpuPerGet, 2);
    result['series window pooled p50 / p99 ms (bytes)'] =
      `${round(page!.p50, 2)} / ${round(page!.p99, 2)} (${Buffer.byteLength(sample.body)})`;
    result['same bytes from raw node:http (the floor): p99 per round, median'] = formatRounds(same!, 2);
    result['the floor’s pooled p50 / p99 ms'] = `${round(same!.p50, 2)} / ${round(same!.p99, 2)}`;
    result['series window p99 minus the floor’s, per round, median ms'] = pairedDifference(
      page!.roundP99,
      same!.roundP99,
    );
  } finally {
    await floor.kill();
  }
  // (b) The whole week: its 7 windows one after another, timed together.
  const sums: number[] = [];
  const one = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < WEEK_SUMS + 5; i++) {
    const s0 = performance.now();
    for (let k = 0; k < 7; k++) {
      const r = await httpCall(one, server.port, 'GET', windowPath(k), undefined, auth);
      if (r.status !== 200) throw new Error(`window ${k}: ${r.status} ${r.body.slice(0, 200)}`);
    }
    if (i >= 5) sums.push(performance.now() - s0);
  }
  one.destroy();
  result[`7 days at 1m as its 7 consecutive windows, sum of the 7 GETs: p50 / p99 ms (${WEEK_SUMS} reads)`] =
    `${round(percentile(sums, 50), 1)} / ${round(percentile(sums, 99), 1)}`;
  result['series seed: points over 7 days (every 10 s) / seconds to ingest'] =
    `${points} / ${round(seedS, 1)}`;
}

interface RouterFixture {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The router with six rules, the GitHub push one 5th; returns the router token. */
async function routerSetup(agent: Agent, server: ChildServer, fx: Fixture): Promise<string> {
  const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
  const router = await call<{ token: string }>(agent, server, 'GET', '/webhook-router', undefined, auth);
  const appid = fx.channelIds[0]!;
  const rules = [
    {
      name: 'GitLab pipeline failed',
      pathPattern: '/gitlab',
      match: [
        { path: '$.object_kind', op: 'equals', value: 'pipeline' },
        { path: '$.object_attributes.status', op: 'equals', value: 'failed' },
      ],
      title: '{{project.path_with_namespace}}: pipeline failed',
    },
    {
      name: 'Stripe payment failed',
      pathPattern: '/stripe',
      match: [{ path: '$.type', op: 'equals', value: 'invoice.payment_failed' }],
      title: 'Payment failed: {{data.object.customer_email}}',
      priority: 8,
    },
    {
      name: 'CI failed',
      pathPattern: '/github',
      method: 'POST',
      match: [
        { path: '$.action', op: 'equals', value: 'completed' },
        { path: '$.workflow_run.conclusion', op: 'equals', value: 'failure' },
      ],
      title: '{{workflow_run.name}} failed on {{workflow_run.head_branch}}',
      message: '{{workflow_run.html_url}}',
    },
    {
      name: 'Docker Hub push',
      pathPattern: '/dockerhub/**',
      match: [{ path: '$.push_data.tag', op: 'exists' }],
      title: '{{repository.repo_name}}:{{push_data.tag}} pushed',
    },
    {
      name: 'GitHub main',
      pathPattern: '/github',
      method: 'POST',
      match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }],
      title: '{{headers.x-github-event}} to {{repository.full_name}}',
      message: '{{pusher.name}}: {{head_commit.message}} ({{body.commits[0].modified}})',
      priority: 4,
    },
    { name: 'Everything else', pathPattern: '**', title: '{{method}} {{path}}', priority: 2 },
  ];
  for (const rule of rules)
    await call(agent, server, 'POST', '/webhook-router/rule', { ...rule, appid }, auth);
  return router.token;
}

async function routerVsMessage(server: ChildServer, fx: Fixture, result: Result): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  const token = await routerSetup(agent, server, fx);
  const push = JSON.parse(
    readFileSync(join(ROOT, 'test', 'fixtures', 'router', 'github-push.json'), 'utf8'),
  ) as RouterFixture;
  const pushBody = JSON.stringify(push.body);
  // The 5th rule must be the one that matches.
  const probe = await call<{ matchedRuleId: number | null; messageId: number | null }>(
    agent,
    server,
    'POST',
    `/router/${token}/github`,
    push.body,
    push.headers,
  );
  const rules = await call<{ id: number }[]>(agent, server, 'GET', '/webhook-router/rule', undefined, {
    Authorization: `Bearer ${fx.devices[0]!.token}`,
  });
  if (probe.matchedRuleId !== rules[4]?.id || probe.messageId === null)
    throw new Error(`the push did not match the 5th rule: ${JSON.stringify(probe)}`);
  agent.destroy();
  const kinds = {
    router: (_w: number, _n: number) => ({
      method: 'POST',
      path: `/router/${token}/github`,
      body: pushBody,
      headers: push.headers,
    }),
    message: (w: number, n: number) => ({
      method: 'POST',
      path: `/message?token=${fx.appToken}`,
      body: JSON.stringify({
        title: `sender ${w}`,
        message: `Backup of host${w} finished: run ${n}, no errors.`,
        priority: 5,
      }),
    }),
  };
  type Kind = keyof typeof kinds;
  const names = Object.keys(kinds) as Kind[];
  const rounds: Record<Kind, { rps: number; p50: number; p99: number; cpuUs: number; errors: number }[]> = {
    router: [],
    message: [],
  };
  for (let r = 0; r < ROUNDS; r++)
    for (const name of alternate(names, r)) {
      const cpu0 = server.cpuMs();
      const t = await closedLoopLoad({
        port: server.port,
        concurrency: ROUTER_SENDERS,
        seconds: SECONDS,
        warmupSeconds: 1,
        make: kinds[name],
      });
      const requests = t.ok + t.errors + t.rps; // + the warm-up second
      rounds[name].push({ ...t, cpuUs: ((server.cpuMs() - cpu0) * 1000) / requests });
    }
  const label: Record<Kind, string> = {
    router: 'router: POST /router/{token}/github (GitHub push, 3.2 kB, rule 5 of 6)',
    message: 'message: POST /message (small JSON)',
  };
  for (const name of names) {
    const rs = rounds[name];
    result[`${label[name]} req/s (${ROUTER_SENDERS} senders, median of ${ROUNDS})`] = Math.round(
      median(rs.map((x) => x.rps)),
    );
    result[`${name}: rounds req/s`] = rs.map((x) => Math.round(x.rps)).join(', ');
    result[`${name}: p50 / p99 ms (median)`] =
      `${round(median(rs.map((x) => x.p50)))} / ${round(median(rs.map((x) => x.p99)))}`;
    result[`${name}: server CPU µs per request (median)`] = Math.round(median(rs.map((x) => x.cpuUs)));
    const errors = rs.reduce((n, x) => n + x.errors, 0);
    if (errors > 0) result[`${name}: non-2xx answers`] = errors;
  }
  result['router / message req/s ratio (median of paired rounds)'] = pairedRatio(
    rounds.router.map((x) => x.rps),
    rounds.message.map((x) => x.rps),
  );
  result['router / message server CPU per request ratio (median of paired rounds)'] = pairedRatio(
    rounds.router.map((x) => x.cpuUs),
    rounds.message.map((x) => x.cpuUs),
  );
}

export async function run(): Promise<Result> {
  const work = await mkdtemp(join(tmpdir(), 'belfry-bench-ingest-'));
  const result: Result = {};
  const servers: ChildServer[] = [];
  try {
    // Metrics: ingest, then the series query on the same server (its data set then holds the ingest's too).
    const fx = await prepare(join(work, 'metrics'));
    const server = await spawnServer(BELFRY, { BENCH_DATA_DIR: join(work, 'metrics') });
    servers.push(server);
    const agent = new Agent({ keepAlive: true });
    const auth = { Authorization: `Bearer ${fx.devices[0]!.token}` };
    const tokens: string[] = [];
    for (let i = 0; i < SOURCES; i++)
      tokens.push(
        (
          await call<{ token: string }>(
            agent,
            server,
            'POST',
            '/metric-source',
            { appid: fx.channelIds[0], name: `agent ${i}` },
            auth,
          )
        ).token,
      );
    if (PARTS.includes('metrics')) await metricIngest(server, tokens, result);
    if (PARTS.includes('query')) await seriesQuery(work, agent, server, fx, result);
    result['metrics server RSS MB at the end'] = server.rssMb();
    agent.destroy();
    await server.stop();
    servers.pop();

    if (!PARTS.includes('router')) return result;
    const rfx = await prepare(join(work, 'router'));
    const rserver = await spawnServer(BELFRY, { BENCH_DATA_DIR: join(work, 'router') });
    servers.push(rserver);
    await routerVsMessage(rserver, rfx, result);
    return result;
  } finally {
    for (const s of servers) await s.stop();
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./lib');
  printTable('ingest', await run());
}

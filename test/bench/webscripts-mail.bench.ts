/**
 * Email inboxes (issue 18, "Speed"): mail through the SMTP listener at a steady 50 mails/s with rules
 * applied, and `POST /message` latency in the same run. `npm run bench -- webscripts` (or `-- mail`) runs
 * it. Belfry runs in a child process (servers/belfry.ts) with `BELFRY_SMTP_LISTEN=127.0.0.1:0`; every
 * mail is answered 250 only after its event and message are fsynced (durable, as in production).
 *
 * - The inbox holds 5 rules: a drop rule for newsletters, three that do not match the mail, and the
 *   matching one 5th (subject regex + body substring, a `{{subject}} ({{from}})` title), so every mail
 *   walks the whole list and makes a message.
 * - The mail: a CI notification as GitHub sends it, multipart/alternative (text + HTML), ~2.5 kB, sent by
 *   nodemailer over a pool of MAIL_CONNECTIONS SMTP connections, open loop at MAIL_RATE mails/s (a mail
 *   starts on schedule whether or not the earlier ones were answered), from a child process
 *   (servers/mail-sender.ts) so that the client's CPU does not land in the `POST /message` figures.
 * - `POST /message` (small JSON, a channel key) one request at a time, in alternating rounds without and
 *   with the mail load: p50/p99 of each, the ratio of the p99s per paired round.
 * - After the load the events are counted through `GET /email-inbox/event` (every accepted mail must
 *   have its event).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_DIR,
  type ChildServer,
  type Fixture,
  httpCall,
  median,
  openBenchStore,
  percentile,
  type Result,
  ROOT,
  round,
  seedFixture,
  spawnServer,
} from './lib';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAIL_RATE = 50;
const MAIL_CONNECTIONS = 5;
const BELFRY = join(BENCH_DIR, 'servers', 'belfry.ts');
const SENDER = join(BENCH_DIR, 'servers', 'mail-sender.ts');

async function prepare(dir: string): Promise<Fixture> {
  const store = await openBenchStore(dir);
  const fx = seedFixture(store, { devices: 1 });
  await store.close();
  return fx;
}

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

/** POST /message one at a time until `stop()`: latencies in ms (the first 20 are warm-up). */
async function messageLoop(server: ChildServer, appToken: string, stop: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const lat: number[] = [];
  const body = JSON.stringify({ title: 'deploy', message: 'build 42 passed', priority: 5 });
  for (let n = 0; !stop(); n++) {
    const t0 = performance.now();
    const r = await httpCall(agent, server.port, 'POST', '/message', body, { 'X-Service-Key': appToken });
    if (r.status !== 200) throw new Error(`POST /message: ${r.status} ${r.body}`);
    if (n >= 20) lat.push(performance.now() - t0);
  }
  agent.destroy();
  return lat;
}

/**
 * MAIL_RATE mails/s for `seconds` from a child process (servers/mail-sender.ts): per-mail latency
 * (start → 250) and failures.
 */
function mailLoad(
  smtpPort: number,
  to: string,
  seconds: number,
  offset: number,
): {
  ready: Promise<void>;
  done: Promise<{ lat: number[]; errors: number; sent: number; elapsedS: number }>;
} {
  const proc = spawn(process.execPath, ['--import', 'tsx', SENDER], {
    cwd: ROOT,
    env: {
      ...process.env,
      MAIL_PORT: String(smtpPort),
      MAIL_TO: to,
      MAIL_RATE: String(MAIL_RATE),
      MAIL_SECONDS: String(seconds),
      MAIL_OFFSET: String(offset),
      MAIL_CONNECTIONS: String(MAIL_CONNECTIONS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    if (out.includes('"ready":true')) onReady();
  });
  proc.stderr!.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-2000);
  });
  const done = new Promise<{ lat: number[]; errors: number; sent: number; elapsedS: number }>(
    (resolve, reject) =>
      proc.once('exit', (code) => {
        onReady();
        if (code !== 0) reject(new Error(`mail sender exited with ${code}: ${err}`));
        else resolve(JSON.parse(out.trim().split('\n').pop()!));
      }),
  );
  return { ready, done };
}

async function countEvents(agent: Agent, server: ChildServer, inboxId: number, auth: Record<string, string>) {
  let n = 0;
  let since = 0;
  for (;;) {
    const page = await call<{ paging: { since?: number }; events: unknown[] }>(
      agent,
      server,
      'GET',
      `/email-inbox/event?inboxId=${inboxId}&limit=200${since ? `&since=${since}` : ''}`,
      undefined,
      auth,
    );
    n += page.events.length;
    if (page.paging.since === undefined) return n;
    since = page.paging.since;
  }
}

export async function run(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-mail-'));
  const result: Result = {};
  try {
    const fx = await prepare(dir);
    const server = await spawnServer(BELFRY, { BENCH_DATA_DIR: dir, BENCH_SMTP_LISTEN: '127.0.0.1:0' });
    try {
      const smtpPort = server.ready.smtpPort;
      if (!smtpPort) throw new Error('the bench server has no SMTP listener');
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const auth = { 'X-Service-Key': fx.devices[0]!.token };
      const inbox = await call<{ id: number; address: string }>(
        agent,
        server,
        'POST',
        '/email-inbox',
        { appid: fx.channelIds[0], name: 'CI', localPart: 'ci' },
        auth,
      );
      const rules = [
        { name: 'newsletters', match: { from: 'news@' }, action: 'drop' },
        { name: 'invoices', match: { subject: '/^invoice \\d+/i' } },
        { name: 'backups', match: { from: 'backup@', subject: 'backup' } },
        { name: 'pages', match: { body: 'PagerDuty' }, priority: 10 },
        {
          name: 'CI failures',
          match: { subject: '/^\\[acme\\/api\\] run failed/i', body: 'failed after' },
          title: '{{subject}} ({{from}})',
          priority: 8,
        },
      ];
      for (const r of rules) await call(agent, server, 'POST', `/email-inbox/${inbox.id}/rules`, r, auth);

      const rounds: {
        without: number[];
        with: number[];
        mail: Awaited<ReturnType<typeof mailLoad>['done']>;
        cpuPerMail: number;
      }[] = [];
      let offset = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const until = performance.now() + SECONDS * 1000;
        const cpu0 = server.cpuMs();
        const t0 = performance.now();
        const without = await messageLoop(server, fx.appToken, () => performance.now() >= until);
        const cpuWithout = (server.cpuMs() - cpu0) / (performance.now() - t0);
        const load = mailLoad(smtpPort, inbox.address, SECONDS, offset);
        offset += MAIL_RATE * SECONDS;
        let loaded = true;
        load.done.then(
          () => {
            loaded = false;
          },
          () => {
            loaded = false;
          },
        );
        await load.ready;
        const cpu1 = server.cpuMs();
        const t1 = performance.now();
        const withLoad = await messageLoop(server, fx.appToken, () => !loaded);
        const mail = await load.done;
        const wall = performance.now() - t1;
        // Server CPU beyond what the POST /message loop alone used, per mail (the loop ran slower under
        // load, so this slightly overstates the mail's share).
        const cpuPerMail = (server.cpuMs() - cpu1 - cpuWithout * wall) / mail.sent;
        rounds.push({ without, with: withLoad, mail, cpuPerMail });
      }
      const mailLat = rounds.flatMap((x) => x.mail.lat);
      const sent = rounds.reduce((a, x) => a + x.mail.sent, 0);
      const errors = rounds.reduce((a, x) => a + x.mail.errors, 0);
      const events = await countEvents(agent, server, inbox.id, auth);
      const rate = median(rounds.map((x) => (x.mail.sent - x.mail.errors) / x.mail.elapsedS));
      result[
        `mails accepted per s at ${MAIL_RATE}/s offered, 5 rules (match 5th), median of ${ROUNDS} rounds`
      ] = round(rate, 1);
      result['mail start → 250 p50 / p99 ms (pooled)'] =
        `${round(percentile(mailLat, 50))} / ${round(percentile(mailLat, 99))}`;
      result['server CPU ms per mail (parse, rules, event, message; median of rounds)'] = round(
        median(rounds.map((x) => x.cpuPerMail)),
        2,
      );
      result['mails refused or failed'] = errors;
      result['mails sent / events stored'] = `${sent} / ${events}`;
      result['mails refused, failed or without their event (sent − stored)'] = sent - events;
      result['POST /message p50 / p99 ms without mail (median of rounds)'] =
        `${round(median(rounds.map((x) => percentile(x.without, 50))), 2)} / ${round(median(rounds.map((x) => percentile(x.without, 99))), 2)}`;
      result['POST /message p50 / p99 ms during 50 mails/s (median of rounds)'] =
        `${round(median(rounds.map((x) => percentile(x.with, 50))), 2)} / ${round(median(rounds.map((x) => percentile(x.with, 99))), 2)}`;
      result['POST /message p99 during / without mail (median of paired rounds)'] = round(
        median(rounds.map((x) => percentile(x.with, 99) / percentile(x.without, 99))),
        2,
      );
      agent.destroy();
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

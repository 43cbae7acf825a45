import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Express } from 'express';
import { assembleApp } from './app';
import { type Config, publicUrlOf } from './config';
import type { AppContext, AuthRegistry } from './context';
import { lockDataDir } from './db/lock';
import { migrations } from './db/migrations.generated';
import { DATA_FILE_MODE, secureDataDir } from './db/permissions';
import { openStore, type Store, type StoreIo } from './db/store';
import { InboundSmtp } from './features/email-inboxes/listener';
import { FEATURES, type Feature } from './features/index';
import { MESSAGE_SEARCH_INDEX } from './features/messages/search-index';
import { ensureFirstAdmin } from './features/users/service';
import { RequestActivity } from './http/activity';
import { guardConnections } from './http/connections';
import { leanListener } from './http/lean';
import { PublicListener } from './http/public-listener';
import { AliveWatch } from './jobs/alive';
import { DueTimer } from './jobs/due';
import { coreJobs } from './jobs/index';
import { RetentionRegistry } from './jobs/retention';
import { Scheduler } from './jobs/scheduler';
import { selfPingJob } from './jobs/self-ping';
import { EventBus } from './lib/bus';
import { type Clock, systemClock } from './lib/clock';
import { createLogger, type Logger } from './lib/log';

export interface ServerDeps {
  clock?: Clock;
  log?: Logger;
  features?: readonly Feature[];
  /** Scheduler tick; tests pass a large value and call scheduler.tick() themselves. */
  schedulerTickMs?: number;
  /** Tests only: the store's file access (inject a full disk). */
  storeIo?: StoreIo;
}

export interface BelfryServer {
  readonly app: Express;
  readonly httpServer: Server;
  readonly ctx: AppContext;
  readonly store: Store;
  readonly scheduler: Scheduler;
  /** Records time the server did not watch (restart, sleep, resume) as `clock:gap` (server/jobs/alive.ts). */
  readonly alive: AliveWatch;
  /**
   * The public listener (public routes only, no credentials; docs/public-access.md): listening from
   * start() when BELFRY_PUBLIC_LISTEN is set, else from the first time a tunnel needs it.
   */
  readonly publicListener: PublicListener;
  /** The inbound SMTP listener of email inboxes (BELFRY_SMTP_LISTEN); null when off. */
  readonly smtp: InboundSmtp | null;
  /** `METHOD /path` of every route the families mount. */
  readonly mounted: ReadonlySet<string>;
  /** Set on the first start of an empty data dir; the CLI prints the generated password once. */
  readonly firstRun: { email: string; generatedPassword?: string } | null;
  start(): Promise<{ url: string; port: number; host: string }>;
  /**
   * The host woke from sleep (Electron's powerMonitor `resume`): emits `clock:gap` (reason `resume`),
   * re-arms the due timer and re-plans the jobs instead of firing a burst of stale ones.
   */
  resumed(): void;
  stop(): Promise<void>;
}

/**
 * The server as a library: the Electron main process, `npm run serve` and every test call this.
 * Importing this module has no side effects; nothing listens until start().
 */
export async function createServer(config: Config, deps: ServerDeps = {}): Promise<BelfryServer> {
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? createLogger(config.logLevel);
  // Owner only (0700/0600), also for a dir an older version left readable: it holds password hashes.
  secureDataDir(config.dataDir, log);
  const unlock = await lockDataDir(config.dataDir);
  const activity = new RequestActivity(clock);
  let store: Store;
  try {
    store = await openStore({
      dataDir: config.dataDir,
      log,
      clock,
      migrations,
      quiet: () => activity.quiet(),
      triggerKeptIndexes: [MESSAGE_SEARCH_INDEX],
      ...(deps.storeIo ? { io: deps.storeIo } : {}),
      ...(config.snapshotJournalBytes ? { snapshotJournalBytes: config.snapshotJournalBytes } : {}),
    });
  } catch (err) {
    unlock();
    throw err;
  }
  let listeningPort = config.port;
  const auth: AuthRegistry = { tokens: new Map(), basic: null, sudo: null };
  // Serves the same listener as the main server (set below, once the app exists), behind its gate.
  let requestListener: RequestListener = (_req, res) => res.destroy();
  const publicListener = new PublicListener(
    (req, res) => requestListener(req, res),
    config.publicListen,
    log,
  );
  const ctx: AppContext = {
    config,
    clock,
    log,
    store,
    db: store.db,
    // A listener that throws after a commit is logged; inside a transaction it still rolls it back.
    bus: new EventBus({ log, inTransaction: () => store.db.inTransaction }),
    due: new DueTimer(),
    auth,
    activity,
    secret: loadSecret(config.dataDir),
    instanceId: loadInstanceId(config.dataDir),
    publicSurface: publicListener,
    // BELFRY_PUBLIC_URL, else the tunnel's URL while it is up, else http://HOST:PORT (docs/public-access.md).
    publicUrl: (opts) =>
      config.publicUrl || opts?.tunnel === false || publicListener.tunnelUrl === null
        ? publicUrlOf(config, listeningPort)
        : publicListener.tunnelUrl,
  };
  const features = deps.features ?? FEATURES;
  const retention = new RetentionRegistry();
  for (const f of features) f.init?.(ctx, { retention });
  const firstRun = ensureFirstAdmin(ctx);
  await store.sync();

  const { app, mounted, tables } = assembleApp(ctx, features);
  requestListener = leanListener(ctx, tables, app);
  const httpServer = createHttpServer(requestListener);
  guardConnections(httpServer, log); // connection caps and header time (docs/operations.md)
  for (const f of features) f.attach?.(ctx, httpServer);
  const alive = new AliveWatch(ctx);
  ctx.due.onWake = () => alive.check();
  const selfPing = selfPingJob(ctx);
  const scheduler = new Scheduler(
    ctx,
    [
      ...coreJobs(retention),
      alive.job(),
      ...(selfPing ? [selfPing] : []),
      ...features.flatMap((f) => f.jobs?.(ctx) ?? []),
    ],
    deps.schedulerTickMs,
    { beforeTick: () => alive.check() },
  );

  const smtp = config.smtpListen ? new InboundSmtp(ctx, config.smtpListen) : null;
  let stopping: Promise<void> | null = null;
  return {
    app,
    httpServer,
    ctx,
    store,
    scheduler,
    alive,
    mounted,
    firstRun,
    smtp,
    publicListener,
    start: () =>
      new Promise<{ url: string; port: number; host: string }>((resolve, reject) => {
        // The restart gap [aliveAt, now] goes out here: after every feature's init and attach (their
        // clock:gap listeners are in place) and before the server listens or any timer runs.
        alive.start();
        httpServer.once('error', reject);
        httpServer.listen(config.port, config.host, () => {
          httpServer.off('error', reject);
          const addr = httpServer.address() as AddressInfo;
          listeningPort = addr.port;
          activity.started();
          scheduler.start();
          ctx.due.start(ctx);
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          resolve({ url: `http://${host}:${addr.port}`, port: addr.port, host: addr.address });
        });
      }).then(async (where) => {
        // After the HTTP listener: the mail domain may come from the public URL, which needs its port.
        await smtp?.start();
        if (config.publicListen) await publicListener.ensure();
        return where;
      }),
    resumed: () => {
      alive.resumed();
      scheduler.replan();
    },
    // Shutdown order (conventions, habit 14): stop accepting → jobs → sockets → in-flight → store flush.
    stop: () => {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        httpServer.closeIdleConnections();
        const publicClosed = publicListener.stop();
        const smtpClosed = smtp?.server.server.listening ? smtp.close() : undefined;
        await scheduler.stop();
        await ctx.due.stop();
        alive.stop(); // a clean stop writes aliveAt: the next start's gap is exactly the downtime
        for (const f of features) await f.stop?.(ctx);
        const force = setTimeout(() => httpServer.closeAllConnections(), 5_000);
        if (httpServer.listening) await closed;
        await smtpClosed;
        await publicClosed;
        clearTimeout(force);
        await store.close();
        unlock();
      })();
      return stopping;
    },
  };
}

/** Per-install secret for HMAC-signed links, kept in the data dir (contract, "Security defaults"). */
function loadSecret(dataDir: string): Buffer {
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString('hex'), { mode: DATA_FILE_MODE });
  chmodSync(file, DATA_FILE_MODE);
  return secret;
}

/** Random per data dir, kept there like secret.key: `/health` names it in X-Belfry-Instance. */
function loadInstanceId(dataDir: string): string {
  const file = join(dataDir, 'instance.id');
  if (existsSync(file)) {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{32}$/.test(id)) return id;
  }
  const id = randomBytes(16).toString('hex');
  writeFileSync(file, id, { mode: DATA_FILE_MODE });
  chmodSync(file, DATA_FILE_MODE);
  return id;
}

export { type Config, loadConfig } from './config';

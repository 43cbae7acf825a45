/**
 * Belfry in a child process for the benchmarks: the real createServer on 127.0.0.1:0 over BENCH_DATA_DIR.
 * Prints one JSON line when listening: port, createServer time (snapshot load + journal replay +
 * migrations + feature init) and the time since the process started. SIGUSR2 runs a snapshot and prints
 * `{"snapshotMs": …}` when it is durable (memory.bench.ts: a snapshot under load). BENCH_TRACE_FILE turns
 * on servers/trace.ts (trace-page.ts reads it).
 */
import { loadConfig } from '../../../server/config';
import { createServer } from '../../../server/index';
import { createLogger } from '../../../server/lib/log';
import { traceServer } from './trace';

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
const t0 = performance.now();
const config = loadConfig({
  env: {},
  overrides: {
    dataDir,
    port: 0,
    host: '127.0.0.1',
    adminEmail: 'bench@example.com',
    adminPassword: 'bench-password',
    logLevel: 'error',
    // The inbound SMTP listener of email inboxes (webscripts-mail.bench.ts), e.g. 127.0.0.1:0.
    ...(process.env.BENCH_SMTP_LISTEN ? { smtpListen: process.env.BENCH_SMTP_LISTEN } : {}),
  },
});
const server = await createServer(config, { log: createLogger('error') });
const createMs = performance.now() - t0;
if (process.env.BENCH_TRACE_FILE) traceServer(server, process.env.BENCH_TRACE_FILE);
const { port } = await server.start();
const smtpPort = server.smtp?.boundPort;
process.stdout.write(
  `${JSON.stringify({ port, createMs, sinceProcessStartMs: performance.now(), ...(smtpPort ? { smtpPort } : {}) })}\n`,
);
process.once('SIGTERM', () => {
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
process.on('SIGUSR2', () => {
  const t = performance.now();
  server.store.snapshot().then(
    () => process.stdout.write(`${JSON.stringify({ snapshotMs: performance.now() - t })}\n`),
    (err: unknown) => process.stdout.write(`${JSON.stringify({ snapshotError: String(err) })}\n`),
  );
});

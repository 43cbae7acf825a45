/**
 * `npm run serve -- [flags]`: the server without Electron (contract, "Starting").
 * Prints exactly one `Belfry listening on http://HOST:PORT` line when ready; SIGINT/SIGTERM stop
 * accepting, finish in-flight requests, flush the store and exit 0.
 */
import { ConfigError, loadConfig } from './config';
import { DataDirLockedError } from './db/lock';
import { NewerDatabaseError } from './db/migrate';
import { CorruptDatabaseError } from './db/store';
import { createServer } from './index';
import { installLastResortHandlers } from './lib/last-resort';
import { createLogger } from './lib/log';

async function main(): Promise<void> {
  const config = loadConfig({ argv: process.argv.slice(2) });
  const log = createLogger(config.logLevel);
  // One bad request must never stop the process: what escapes every guard is logged, not fatal.
  installLastResortHandlers(log);
  const server = await createServer(config, { log });
  const { host, port } = await server.start();
  if (server.firstRun?.generatedPassword) {
    process.stdout.write(
      `First start: created the administrator ${server.firstRun.email} with the password ${server.firstRun.generatedPassword}\n` +
        'It is shown only this once; change it after signing in.\n',
    );
  }
  const shownHost = host.includes(':') ? `[${host}]` : host;
  process.stdout.write(`Belfry listening on http://${shownHost}:${port}\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.ctx.log.info(`${signal}: shutting down`);
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        server.ctx.log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  if (
    err instanceof ConfigError ||
    err instanceof CorruptDatabaseError ||
    err instanceof NewerDatabaseError ||
    err instanceof DataDirLockedError
  ) {
    process.stderr.write(`belfry: ${err.message}\n`);
  } else {
    process.stderr.write(
      `belfry: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exit(1);
});

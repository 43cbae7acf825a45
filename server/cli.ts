/**
 * `npm run serve -- [flags]` (scripts/serve.mjs runs this module): the server without Electron
 * (contract, "Starting"). Prints exactly one `Belfry listening on http://HOST:PORT` line when ready;
 * SIGINT/SIGTERM stop accepting, finish in-flight requests, flush the store and exit 0. `--help` prints
 * the flags. A start that cannot work (bad setting, data dir unusable) says why in one line, exit 1.
 */
import { type Config, ConfigError, helpText, loadConfig } from './config';
import { DataDirLockedError } from './db/lock';
import { NewerDatabaseError } from './db/migrate';
import { CorruptDatabaseError } from './db/store';
import { resetPasswordOffline } from './features/users/accounts';
import { ApiError } from './http/errors';
import { createServer } from './index';
import { installLastResortHandlers } from './lib/last-resort';
import { createLogger } from './lib/log';

/**
 * Under npm (`npm run serve`, `npm start`), the parent is npm's script shell. npm forwards SIGTERM to
 * that shell, and the shell dies without passing it on: stop as for SIGTERM when the parent goes, so no
 * orphan keeps the port and the data dir lock.
 */
function stopWithParent(shutdown: (why: string) => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown('parent process exited');
  }, 250).unref();
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText());
    return;
  }
  const reset = argv.indexOf('--reset-password');
  if (reset >= 0) {
    const email = argv[reset + 1];
    if (!email || email.startsWith('--'))
      throw new ConfigError("--reset-password needs the account's email address");
    await resetPassword(loadConfig({ argv: argv.filter((_, i) => i !== reset && i !== reset + 1) }), email);
    return;
  }
  const config = loadConfig({ argv });
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
  stopWithParent(shutdown);
}

/** `--reset-password EMAIL`: opens the data dir (its lock refuses while Belfry runs), resets, flushes, prints. */
async function resetPassword(config: Config, email: string): Promise<void> {
  const server = await createServer(config, { log: createLogger('warn') });
  let password: string;
  try {
    password = resetPasswordOffline(server.ctx, email);
    await server.store.sync();
  } catch (err) {
    if (err instanceof ApiError) throw new ConfigError(`no account with the email address ${email}`);
    throw err;
  } finally {
    await server.stop();
  }
  process.stdout.write(
    `New password for ${email}: ${password}\nIt is shown only this once; every device of the account was signed out.\n`,
  );
}

/** A file system error (EACCES, ENOTDIR, EROFS…) on a path: the user's to fix, not a bug; no stack. */
function isPathError(err: unknown): err is NodeJS.ErrnoException & { path: string } {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && 'path' in err;
}

main().catch((err: unknown) => {
  if (
    err instanceof ConfigError ||
    err instanceof CorruptDatabaseError ||
    err instanceof NewerDatabaseError ||
    err instanceof DataDirLockedError
  ) {
    process.stderr.write(`belfry: ${err.message}\n`);
  } else if (isPathError(err)) {
    process.stderr.write(
      `belfry: cannot use ${err.path}: ${err.message} (check --data-dir and its permissions)\n`,
    );
  } else {
    process.stderr.write(
      `belfry: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exit(1);
});

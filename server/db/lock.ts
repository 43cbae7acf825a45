import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { DATA_FILE_MODE } from './permissions';

export class DataDirLockedError extends Error {}

/** The lock file: the pid of the holder, for humans only (the lock itself is the socket below). */
export const LOCK_INFO_FILE = 'belfry.lock';
/** On systems without abstract sockets (macOS, BSD): the socket file in the data dir. */
export const LOCK_SOCKET_FILE = 'belfry.sock';

const heldHere = new Set<string>();

/**
 * Where the lock of `dataDir` listens. The kernel owns the name and frees it when the holder exits,
 * however it exits (kill -9, power loss), and a second listen() fails with EADDRINUSE while it is held:
 * - Linux: an abstract-namespace Unix socket (no file; gone with the process),
 * - Windows: a named pipe,
 * - elsewhere: a socket file in the data dir (a file left by a dead holder refuses connections, and is
 *   then replaced).
 * Named after the real path of the dir, so two spellings of one dir (symlinks, `..`) share the lock.
 */
export function lockAddress(dataDir: string): { path: string; file: boolean } {
  const real = realpathSync.native(dataDir);
  // NTFS names are case-insensitive: C:\Data and c:\data are one dir and must be one lock.
  const key = process.platform === 'win32' ? real.toLowerCase() : real;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 32);
  if (process.platform === 'linux') return { path: `\0belfry-${hash}`, file: false };
  if (process.platform === 'win32') return { path: `\\\\.\\pipe\\belfry-${hash}`, file: false };
  return { path: join(real, LOCK_SOCKET_FILE), file: true };
}

/**
 * One Belfry per data dir: two processes appending to one journal would corrupt it. The lock is an OS
 * object (see lockAddress), never a pid check: a pid reused after a reboot cannot block start-up, and of
 * two servers starting together exactly one wins. Resolves to the release function.
 */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  const address = lockAddress(dataDir);
  if (heldHere.has(address.path)) throw new DataDirLockedError(`${dataDir} is already open in this process`);
  heldHere.add(address.path);
  let server: Server;
  try {
    server = await listenOnce(address.path).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      if (!address.file || (await holderAlive(address.path))) throw locked(dataDir);
      rmSync(address.path, { force: true }); // a socket file left by a holder that is gone
      return listenOnce(address.path).catch((again: NodeJS.ErrnoException) => {
        throw again.code === 'EADDRINUSE' ? locked(dataDir) : again;
      });
    });
  } catch (err) {
    heldHere.delete(address.path);
    throw err;
  }
  const info = join(dataDir, LOCK_INFO_FILE);
  try {
    writeFileSync(info, `${process.pid}\n`, { mode: DATA_FILE_MODE });
  } catch {
    // information only
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldHere.delete(address.path);
    server.close();
    rmSync(info, { force: true });
  };
}

function locked(dataDir: string): DataDirLockedError {
  let pid = '';
  try {
    pid = readFileSync(join(dataDir, LOCK_INFO_FILE), 'utf8').trim();
  } catch {
    // information only
  }
  return new DataDirLockedError(
    `${dataDir} is in use by another Belfry${/^\d+$/.test(pid) ? ` (pid ${pid})` : ''}. Stop it first, ` +
      'or use another --data-dir.',
  );
}

function listenOnce(path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    // Nobody talks to the lock: a connection (a check by a starting Belfry) is closed at once.
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen({ path, exclusive: true }, () => {
      server.off('error', reject);
      server.unref(); // the lock never keeps the process alive
      resolve(server);
    });
  });
}

/** A socket file whose listener still accepts connections belongs to a live holder. */
function holderAlive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'),
    );
  });
}

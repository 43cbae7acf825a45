import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

const heldHere = new Set<string>();

/**
 * One Belfry per data dir: two processes appending to one journal would corrupt it. The lock file
 * holds the owner's pid; a lock whose process is gone (a crash, kill -9) is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'belfry.lock');
  if (heldHere.has(file)) throw new DataDirLockedError(`${dataDir} is already open in this process`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      heldHere.add(file);
      return () => {
        heldHere.delete(file);
        rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirLockedError(
          `${dataDir} is in use by another Belfry (pid ${pid}). Stop it first, or use another --data-dir. ` +
            `If no Belfry is running, delete ${file}.`,
        );
      }
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirLockedError(`could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirs } from '../lib/dirs';
import type { Logger } from '../lib/log';

/** The data dir and every directory below it: the owner only. */
export const DATA_DIR_MODE = 0o700;
/** Every file in the data dir (database, journals, secret.key, uploads, logs): the owner only. */
export const DATA_FILE_MODE = 0o600;

/**
 * Creates the data dir readable by its owner only, and takes away what earlier versions (or a copy, or
 * an unzip) left readable by others: password hashes, delivery secrets and reset links live there.
 * Walks the whole tree (uploads/avatars included); symlinks are left alone (never followed). On Windows
 * modes mean little (the ACLs of the user's profile apply); chmod there only toggles read-only.
 */
export function secureDataDir(dataDir: string, log?: Logger): void {
  makeDirs(dataDir, DATA_DIR_MODE);
  if (process.platform === 'win32') return;
  let fixed = 0;
  const refused: string[] = [];
  const walk = (path: string): void => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    const want = st.isDirectory() ? DATA_DIR_MODE : DATA_FILE_MODE;
    if ((st.mode & 0o777) !== want) {
      try {
        chmodSync(path, want);
        fixed++;
      } catch (err) {
        // A filesystem without modes (FAT, some network mounts) or a file someone else owns: say so, and
        // start anyway; the rest of the tree is still fixed.
        refused.push(`${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dataDir);
  if (fixed > 0) log?.debug('made the data dir readable by its owner only', { dataDir, fixed });
  if (refused.length > 0)
    log?.warn('could not make these data dir entries readable by their owner only', {
      dataDir,
      count: refused.length,
      first: refused.slice(0, 5),
    });
}

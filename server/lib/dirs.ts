import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` one level at a time. Node's `mkdir(…, {recursive: true})` never returns under a pseudo
 * filesystem that answers ENOENT to mkdir (`--data-dir /proc/nope` hung start-up at 100 % CPU, Node 20 and
 * 24): here the first level that cannot be made throws its own error (ENOENT, EACCES, ENOTDIR, EROFS).
 */
export function makeDirs(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let p = resolve(dir); ; ) {
    try {
      if (!statSync(p).isDirectory())
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${p}'`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(p);
      const up = dirname(p);
      if (up === p) break;
      p = up;
    }
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

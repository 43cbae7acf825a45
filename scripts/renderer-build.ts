import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The built web UI (dist/renderer) kept in step with its sources: `npm run serve`, `npm start` and the
 * browser tests build it when it is missing or older than renderer/ (or vite.config.ts), so a fresh
 * clone serves the whole UI after `npm ci` with no other step, and no one drives a stale UI.
 */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Newest modification time of a file under `dir`, in ms (0 when there is none or no such dir). */
export function newestMtime(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Why dist/renderer must be (re)built under `root`, or null when it is up to date. */
export function rendererBuildReason(root: string = ROOT): string | null {
  const built = join(root, 'dist', 'renderer', 'index.html');
  if (!existsSync(built)) return 'dist/renderer is missing';
  const config = join(root, 'vite.config.ts');
  const sources = Math.max(
    newestMtime(join(root, 'renderer')),
    existsSync(config) ? statSync(config).mtimeMs : 0,
  );
  return statSync(built).mtimeMs >= sources ? null : 'dist/renderer is older than renderer/';
}

/** `vite build` of the renderer under `root` (production mode), its output limited to warnings. */
export function buildRenderer(root: string = ROOT): void {
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite))
    throw new Error('vite is not installed (run `npm ci`, which installs the dev dependencies)');
  execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 300_000,
    // Vitest sets NODE_ENV=test, and vite would build React's development bundle with it: always build
    // (and leave in dist/) the production bundle users get.
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

/**
 * Builds the UI when it is missing or stale, saying so in one line first; true when it built.
 * Throws when the build fails.
 */
export function ensureRendererBuilt(
  opts: { root?: string; log?: (line: string) => void; build?: (root: string) => void } = {},
): boolean {
  const root = opts.root ?? ROOT;
  const reason = rendererBuildReason(root);
  if (!reason) return false;
  opts.log?.(`Belfry: building the web interface (${reason}); this takes a few seconds…`);
  (opts.build ?? buildRenderer)(root);
  return true;
}

#!/usr/bin/env node
/**
 * `npm start` (contract, "Starting"): the desktop app when an Electron binary and a display exist;
 * otherwise one line saying why, then the headless server (`npm run serve`, scripts/serve.mjs) with the
 * same arguments, in this same process so that SIGTERM to it stops the server. Either way the web UI is
 * built first when it is missing or older than its sources.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

function electronBinary() {
  try {
    // The `electron` package exports the path of its binary; it throws when the download failed.
    const bin = createRequire(join(root, 'package.json'))('electron');
    return typeof bin === 'string' && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

function hasDisplay() {
  if (process.platform === 'win32' || process.platform === 'darwin') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

function run(cmd, cmdArgs) {
  const child = spawn(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(signal ? 0 : (code ?? 0)));
  // npm's script shell dies of SIGTERM without passing it on (server/cli.ts, stopWithParent): pass it.
  if (process.env.npm_lifecycle_event) {
    const parent = process.ppid;
    setInterval(() => process.ppid !== parent && child.kill('SIGTERM'), 250).unref();
  }
}

const bin = electronBinary();
const why = !bin
  ? 'Electron is not installed (its binary download failed or was skipped)'
  : !hasDisplay()
    ? 'no display is available'
    : null;
if (why) {
  console.log(`Belfry: ${why}; running the headless server instead (npm run serve).`);
  await import('./serve.mjs');
} else {
  const main = join(root, 'dist', 'electron', 'main.js');
  const build = () =>
    new Promise((resolve, reject) => {
      const c = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], {
        cwd: root,
        stdio: 'inherit',
      });
      c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited ${code}`))));
    });
  const { register } = await import('tsx/esm/api');
  register();
  const { rendererBuildReason } = await import('./renderer-build.ts');
  // The server's V8 flags reach Electron's main process (where the server runs) only when given at launch.
  const { SERVER_V8_FLAGS } = await import('../server/lib/v8-flags.ts');
  // And the app does not relaunch itself to get them (electron/v8-relaunch.ts): it would leave this terminal.
  const { V8_FLAGS_GIVEN_ENV } = await import('../electron/v8-relaunch.ts');
  process.env[V8_FLAGS_GIVEN_ENV] = '1';
  (existsSync(main) && !rendererBuildReason(root) ? Promise.resolve() : build()).then(
    () => run(bin, [`--js-flags=${SERVER_V8_FLAGS.join(' ')}`, root, ...args]),
    (err) => {
      console.error(`Belfry: ${err.message}`);
      process.exit(1);
    },
  );
}

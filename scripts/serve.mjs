#!/usr/bin/env node
/**
 * `npm run serve -- [flags]` (and `npm start` without Electron): builds the web UI when dist/renderer is
 * missing or older than its sources (one line while it builds), then runs the server in this same
 * process, so a signal sent to this process reaches the server itself. BELFRY_SKIP_UI_BUILD=1 skips
 * the build (the API works without the UI; `/` then says how to build it).
 */
import { register } from 'tsx/esm/api';

register();
const { ensureRendererBuilt } = await import('./renderer-build.ts');
const { loadConfig } = await import('../server/config.ts');

/** `--help` and a start that will be refused (server/cli.ts says why) need no UI: do not build it first. */
function willServe() {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) return false;
  try {
    loadConfig({ argv });
    return true;
  } catch {
    return false;
  }
}

if (!['1', 'true', 'yes'].includes(process.env.BELFRY_SKIP_UI_BUILD ?? '') && willServe()) {
  try {
    ensureRendererBuilt({ log: (line) => console.log(line) });
  } catch (err) {
    console.log(
      `Belfry: could not build the web interface (${err instanceof Error ? err.message.split('\n')[0] : err}); ` +
        'starting the API anyway, `/` says how to build it.',
    );
  }
}
await import('../server/cli.ts');

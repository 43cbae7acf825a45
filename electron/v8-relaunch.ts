/**
 * The server runs in Electron's main process, whose V8 takes flags only at launch (`--js-flags`). `npm
 * start` passes SERVER_V8_FLAGS (scripts/start.mjs), and so does the Linux menu entry (electron-builder.ts,
 * `executableArgs`); an app started from its icon on macOS or Windows, a login item or a file manager gets
 * no arguments. Such a start relaunches itself once with the flags (not from an AppImage: see below).
 */

/**
 * "1" when the launcher already gave the flags: scripts/start.mjs (`npm start`), and this module for the
 * instance it relaunches (inherited). Such a start never relaunches, whatever process.argv shows, so a
 * launch that still lacks the flags cannot loop.
 */
export const V8_FLAGS_GIVEN_ENV = 'BELFRY_V8_FLAGS_GIVEN';

const JS_FLAGS = '--js-flags=';

/**
 * The arguments (after the executable) to relaunch with so that V8 gets `flags`, or null when this
 * process already has every one of them, or its launcher gave them (V8_FLAGS_GIVEN_ENV). Flags already
 * given in `--js-flags` are kept; a missing flag is added to them. A flag counts as given whatever its
 * value: a user's own `--js-flags=--max-semi-space-size=32` is theirs to choose.
 */
export function v8RelaunchArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  flags: readonly string[],
): string[] | null {
  if (flags.length === 0 || env[V8_FLAGS_GIVEN_ENV] === '1') return null;
  // Inside an AppImage app.relaunch() cannot work: its helper runs from the image's mount, which goes away
  // when this process exits (electron-builder#1727). Such a start keeps V8's defaults.
  if (env.APPIMAGE) return null;
  const args = argv.slice(1);
  const at = args.findIndex((a) => a.startsWith(JS_FLAGS));
  const given = at < 0 ? [] : args[at]!.slice(JS_FLAGS.length).split(/\s+/).filter(Boolean);
  const name = (f: string) => f.replace(/^--?/, '').split('=')[0]!.replaceAll('_', '-');
  const have = new Set(given.map(name));
  const missing = flags.filter((f) => !have.has(name(f)));
  if (missing.length === 0) return null;
  const merged = `${JS_FLAGS}${[...given, ...missing].join(' ')}`;
  if (at < 0) return [...args, merged];
  return args.map((a, i) => (i === at ? merged : a));
}

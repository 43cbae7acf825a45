/**
 * Electron entry (dist/electron/main.js). The only module that loads the real `electron` and
 * `electron-store`: by a variable name, so TypeScript never needs their types and a machine without
 * the Electron binary still type-checks and tests everything else.
 */
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../server/config';
import { createServer } from '../server/index';
import { installLastResortHandlers } from '../server/lib/last-resort';
import type { Logger } from '../server/lib/log';
import { SERVER_V8_FLAGS } from '../server/lib/v8-flags';
import { runDesktop } from './desktop';
import type { FetchLike } from './desktop-session';
import type { ElectronApi, KeyValueStore } from './electron-api';
import { desktopDataDir, desktopLogger } from './server-host';
import { DEFAULT_SETTINGS, type DesktopSettings } from './settings';

type StoreCtor = new (opts: { name: string; defaults: DesktopSettings }) => KeyValueStore<DesktopSettings>;

let log: Logger | null = null;

async function main(): Promise<void> {
  const electronName = 'electron';
  const storeName = 'electron-store';
  const electronModule = (await import(electronName)) as { default?: ElectronApi } & ElectronApi;
  const electron = electronModule.default ?? electronModule;
  // Logs go to <dataDir>/logs/belfry.log (and stderr); an error nothing caught is logged there instead
  // of stopping the server or popping up Electron's error dialog.
  const logger = desktopLogger(desktopDataDir(electron.app.getPath('userData'), process.env), process.env);
  log = logger;
  installLastResortHandlers(logger);
  const Store = ((await import(storeName)) as { default: StoreCtor }).default;
  const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
  const handle = await runDesktop({
    electron,
    factory: { createServer, loadConfig },
    store: new Store({ name: 'settings', defaults: DEFAULT_SETTINGS }),
    paths: {
      preload: here('./preload.cjs'),
      icon: here('../../build/icons/512x512.png'),
      trayIcon: here(process.platform === 'darwin' ? '../../build/trayTemplate.png' : '../../build/tray.png'),
    },
    env: process.env,
    networkInterfaces,
    fetch: fetch as unknown as FetchLike,
    now: () => Date.now(),
    log: (msg, err) => logger.warn(msg, err === undefined ? undefined : { err }),
    serverLog: logger,
    v8: { flags: SERVER_V8_FLAGS, argv: process.argv },
  });
  if (handle) logger.info(`Belfry listening on ${handle.hosted().url}`);
}

main().catch((err: unknown) => {
  if (log) log.error('the desktop app failed to start', { err });
  else console.error('belfry: the desktop app failed to start:', err);
  process.exit(1);
});

import type { NetworkInterfaceInfo } from 'node:os';
import type { Logger } from '../server/lib/log';
import { setOnBattery } from '../server/lib/power';
import type { FetchLike } from './desktop-session';
import type { BrowserWindowInstance, ElectronApi, KeyValueStore, MenuItemOptions } from './electron-api';
import { IPC } from './ipc/channels';
import { type IpcHandlers, registerIpc } from './ipc/register';
import { DesktopNotifier } from './notifier';
import { hardenSession, hardenWebContents } from './security';
import { type HostedServer, hostServer, type ServerFactory, windowUrl } from './server-host';
import { type DesktopSettings, DesktopSettingsStore, lanUrls, parseSettingsPatch } from './settings';
import { PAUSE_MS, TrayController } from './tray';
import { isTrustedSender } from './trusted-sender';
import { isSafeExternalUrl } from './trusted-url';
import { V8_FLAGS_GIVEN_ENV, v8RelaunchArgs } from './v8-relaunch';
import { createMainWindow, showWindow } from './window';

export interface DesktopDeps {
  electron: ElectronApi;
  factory: ServerFactory;
  store: KeyValueStore<DesktopSettings>;
  paths: { preload: string; icon: string; trayIcon: string };
  env: NodeJS.ProcessEnv;
  networkInterfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
  fetch: FetchLike;
  now: () => number;
  log: (msg: string, err?: unknown) => void;
  /** The hosted server's logger (main.ts: the log file in the data dir, server-host.ts). */
  serverLog?: Logger;
  /** process.platform; injected so the macOS-only menu is testable anywhere. */
  platform?: NodeJS.Platform;
  /**
   * The server's V8 flags (server/lib/v8-flags.ts) and this process's argv: a start without them
   * relaunches once with them (v8-relaunch.ts). Left out, the app never relaunches.
   */
  v8?: { flags: readonly string[]; argv: readonly string[] };
}

/**
 * No menu bar on Windows and Linux. macOS routes Cmd+C/V/X/A/Z through the application menu's Edit
 * roles: without them, copy and paste in the window's text fields do nothing.
 */
export function applicationMenu(platform: NodeJS.Platform): MenuItemOptions[] | null {
  return platform === 'darwin' ? [{ role: 'appMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }] : null;
}

export interface DesktopHandle {
  hosted(): HostedServer;
  window(): BrowserWindowInstance | null;
  notifier: DesktopNotifier;
  tray: TrayController;
  /** Ordered shutdown: IPC and tray → server (jobs → sockets → store flush). */
  shutdown(): Promise<void>;
}

/**
 * The desktop app: single instance, the server hosted in-process, one locked-down window, a tray with
 * the unread count, native notifications, settings, sleep/wake forwarding, ordered shutdown. Electron
 * and electron-store are injected, so the unit tests drive all of it with a stand-in.
 */
export async function runDesktop(d: DesktopDeps): Promise<DesktopHandle | null> {
  const {
    app,
    BrowserWindow,
    Tray,
    Menu,
    Notification,
    ipcMain,
    shell,
    powerMonitor,
    nativeImage,
    session,
    dialog,
  } = d.electron;
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  // After the lock: a second click on the icon while Belfry runs only shows its window, no relaunch.
  const relaunchArgs = d.v8 ? v8RelaunchArgs(d.v8.argv, d.env, d.v8.flags) : null;
  if (relaunchArgs) {
    d.env[V8_FLAGS_GIVEN_ENV] = '1'; // inherited by the new instance
    app.relaunch({ args: relaunchArgs });
    app.exit(0);
    return null;
  }
  let win: BrowserWindowInstance | null = null;
  let quitting = false;
  let shutdownDone = false;
  app.on('second-instance', () => showWindow(win));
  app.on('activate', () => showWindow(win));
  app.on('window-all-closed', () => {}); // stays in the tray
  await app.whenReady();
  app.setAppUserModelId?.('app.belfry.desktop');
  const menu = applicationMenu(d.platform ?? process.platform);
  Menu.setApplicationMenu(menu ? Menu.buildFromTemplate(menu) : null);

  const settingsStore = new DesktopSettingsStore(d.store, app);
  let settings = settingsStore.read();
  settingsStore.applyLoginItem(settings);
  const host = () =>
    hostServer(d.factory, {
      userData: app.getPath('userData'),
      settings,
      env: d.env,
      log: (m) => d.log(m),
      ...(d.serverLog ? { serverLog: d.serverLog } : {}),
    });
  let hosted = await host();
  let origin = windowUrl(hosted.port);
  const currentLanUrls = () => (settings.lanAccess ? lanUrls(d.networkInterfaces(), hosted.port) : []);

  hardenSession(session.defaultSession, () => origin);
  app.on('web-contents-created', (_e, contents) => hardenWebContents(contents, () => origin, shell));

  const notifier = new DesktopNotifier({
    baseUrl: () => origin,
    fetch: d.fetch,
    now: d.now,
    Notification,
    nativeImage,
    onOpenMessage: (m) => {
      showWindow(win);
      win?.webContents.send(IPC.openMessage, { id: m.id, appid: m.appid });
    },
    onState: (s) => tray?.update({ unread: s.unread, pausedUntil: s.pausedUntil }),
    log: d.log,
  });
  const tray: TrayController = new TrayController(
    Tray,
    Menu,
    nativeImage.createFromPath(d.paths.trayIcon),
    {
      open: () => showWindow(win),
      pause: () => notifier.pause(PAUSE_MS),
      resume: () => notifier.resume(),
      quit: () => app.quit(),
    },
    d.now,
  );
  tray.update({ lanUrl: currentLanUrls()[0] ?? null });

  let unsubscribe: (() => void)[] = [];
  const attach = (h: HostedServer) => {
    unsubscribe = [
      h.server.ctx.bus.on('message:created', ({ message }) => void notifier.onMessage(message)),
      h.server.ctx.bus.on('messages:deleted', () => notifier.scheduleRecount()),
    ];
    // The machine's power source, as the hosted server's monitors see it (server/lib/power.ts).
    setOnBattery(h.server.ctx, powerMonitor.isOnBatteryPower?.() === true);
    const first = h.server.firstRun;
    if (first?.generatedPassword)
      void dialog.showMessageBox({
        type: 'info',
        title: 'Belfry: your administrator account',
        message: `Sign in as ${first.email}`,
        detail: `Password: ${first.generatedPassword}\n\nIt is shown only this once; change it in Account after signing in.`,
      });
  };
  attach(hosted);

  // After a wake the server records the sleep as a clock gap (heartbeat deadlines that passed are pushed
  // instead of firing a burst of stale alerts) and re-arms its timers.
  // On battery browser workflows pause and monitor intervals stretch (docs/api.md, "Power").
  powerMonitor.on('on-battery', () => setOnBattery(hosted.server.ctx, true));
  powerMonitor.on('on-ac', () => setOnBattery(hosted.server.ctx, false));
  powerMonitor.on('resume', () => {
    hosted.server.resumed();
    void notifier.refresh();
  });

  win = createMainWindow(BrowserWindow, {
    url: origin,
    preloadPath: d.paths.preload,
    iconPath: d.paths.icon,
    isQuitting: () => quitting,
  });

  const restartServer = async () => {
    for (const u of unsubscribe) u();
    await hosted.server.stop();
    hosted = await host();
    origin = windowUrl(hosted.port);
    attach(hosted);
    tray.update({ lanUrl: currentLanUrls()[0] ?? null });
    await win?.loadURL(origin);
  };

  const handlers: IpcHandlers = {
    [IPC.setSession]: (token) => notifier.setSession(token ?? null),
    [IPC.unreadChanged]: () => notifier.scheduleRecount(),
    [IPC.openExternal]: async (url) => {
      if (typeof url !== 'string' || !isSafeExternalUrl(url)) return false;
      await shell.openExternal(url);
      return true;
    },
    [IPC.getSettings]: () => ({ settings, lanUrls: currentLanUrls(), url: origin }),
    [IPC.setSettings]: async (patch) => {
      const result = settingsStore.write(parseSettingsPatch(patch));
      settings = result.settings;
      if (result.restartNeeded)
        setTimeout(() => void restartServer().catch((e) => d.log('restart failed', e)), 50);
      return { settings, restarting: result.restartNeeded };
    },
  };
  const disposeIpc = registerIpc(
    ipcMain,
    handlers,
    (event) => isTrustedSender(event, origin, new Set(win && !win.isDestroyed() ? [win.webContents.id] : [])),
    (channel) => d.log(`ipc: refused ${channel} from an untrusted sender`),
  );

  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= (async () => {
      quitting = true;
      for (const u of unsubscribe) u();
      notifier.dispose();
      disposeIpc();
      tray.destroy();
      await hosted.server.stop(); // jobs → sockets → store flush (server/index.ts)
    })();
    return stopping;
  };
  app.on('before-quit', (event) => {
    if (shutdownDone) return;
    event.preventDefault();
    quitting = true;
    void shutdown()
      .catch((err) => d.log('shutdown failed', err))
      .finally(() => {
        shutdownDone = true;
        app.exit(0);
      });
  });

  return { hosted: () => hosted, window: () => win, notifier, tray, shutdown };
}

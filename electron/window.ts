import type { BrowserWindowConstructor, BrowserWindowInstance } from './electron-api';
import { secureWebPreferences } from './security';

export interface MainWindowOptions {
  url: string;
  preloadPath: string;
  iconPath?: string;
  /** Closing hides to the tray unless the app is quitting. */
  isQuitting: () => boolean;
}

export function createMainWindow(
  BrowserWindow: BrowserWindowConstructor,
  o: MainWindowOptions,
): BrowserWindowInstance {
  const win = new BrowserWindow({
    width: 1100,
    height: 760,
    minWidth: 360,
    minHeight: 480,
    show: false,
    title: 'Belfry',
    autoHideMenuBar: true,
    ...(o.iconPath ? { icon: o.iconPath } : {}),
    webPreferences: secureWebPreferences(o.preloadPath),
  });
  win.once('ready-to-show', () => win.show());
  win.on('close', (event) => {
    if (o.isQuitting()) return;
    event.preventDefault();
    win.hide();
  });
  void win.loadURL(o.url);
  return win;
}

export function showWindow(win: BrowserWindowInstance | null): void {
  if (!win || win.isDestroyed()) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}

/**
 * The renderer's only door to the main process. Sandboxed preloads are single CommonJS files, so the
 * channel names are repeated here (electron/ipc/channels.ts; a unit test keeps them equal). One function
 * per channel; ipcRenderer itself is never exposed.
 */
interface PreloadElectron {
  contextBridge: { exposeInMainWorld(key: string, api: unknown): void };
  ipcRenderer: {
    invoke(channel: string, ...args: unknown[]): Promise<unknown>;
    on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): void;
    removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): void;
  };
}

const { contextBridge, ipcRenderer } = require('electron') as PreloadElectron;

const api = {
  setSession: (token: string | null) => ipcRenderer.invoke('belfry:set-session', token),
  unreadChanged: () => ipcRenderer.invoke('belfry:unread-changed'),
  openExternal: (url: string) => ipcRenderer.invoke('belfry:open-external', String(url)),
  getSettings: () => ipcRenderer.invoke('belfry:get-settings'),
  setSettings: (patch: unknown) => ipcRenderer.invoke('belfry:set-settings', patch),
  onOpenMessage: (callback: (target: { id: number; appid: number }) => void) => {
    const listener = (_event: unknown, target: unknown) => {
      const t = target as { id?: unknown; appid?: unknown };
      if (typeof t?.id === 'number' && typeof t?.appid === 'number') callback({ id: t.id, appid: t.appid });
    };
    ipcRenderer.on('belfry:open-message', listener);
    return () => ipcRenderer.removeListener('belfry:open-message', listener);
  },
};

contextBridge.exposeInMainWorld('belfryDesktop', api);

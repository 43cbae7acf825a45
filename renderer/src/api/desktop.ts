/** What the Electron preload exposes (electron/preload/preload.cts); absent in a plain browser. */
export interface DesktopSettings {
  openAtLogin: boolean;
  lanAccess: boolean;
  port: number;
}

export interface DesktopBridge {
  setSession(token: string | null): Promise<unknown>;
  unreadChanged(): Promise<unknown>;
  openExternal(url: string): Promise<unknown>;
  getSettings(): Promise<{ settings: DesktopSettings; lanUrls: string[]; url: string }>;
  setSettings(patch: Partial<DesktopSettings>): Promise<{ settings: DesktopSettings; restarting: boolean }>;
  onOpenMessage(cb: (target: { id: number; appid: number }) => void): () => void;
}

export function desktop(): DesktopBridge | null {
  return (window as unknown as { belfryDesktop?: DesktopBridge }).belfryDesktop ?? null;
}

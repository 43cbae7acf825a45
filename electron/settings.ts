import type { NetworkInterfaceInfo } from 'node:os';
import type { App, KeyValueStore } from './electron-api';

/** Desktop settings kept with electron-store in the user-data folder. */
export interface DesktopSettings {
  openAtLogin: boolean;
  /** Bind 0.0.0.0 so phones on the same network can reach the server. */
  lanAccess: boolean;
  port: number;
}

export const DEFAULT_SETTINGS: DesktopSettings = { openAtLogin: false, lanAccess: false, port: 7878 };

export class SettingsError extends Error {}

/** Validates a settings change coming from the renderer; unknown keys and bad values are refused. */
export function parseSettingsPatch(input: unknown): Partial<DesktopSettings> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new SettingsError('settings must be an object');
  const out: Partial<DesktopSettings> = {};
  for (const [key, value] of Object.entries(input)) {
    switch (key) {
      case 'openAtLogin':
      case 'lanAccess':
        if (typeof value !== 'boolean') throw new SettingsError(`${key} must be true or false`);
        out[key] = value;
        break;
      case 'port':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1024 || value > 65_535)
          throw new SettingsError('port must be a whole number from 1024 to 65535');
        out.port = value;
        break;
      default:
        throw new SettingsError(`unknown setting ${key}`);
    }
  }
  return out;
}

export class DesktopSettingsStore {
  constructor(
    private readonly store: KeyValueStore<DesktopSettings>,
    private readonly app: Pick<App, 'setLoginItemSettings'>,
  ) {}

  read(): DesktopSettings {
    const s = { ...DEFAULT_SETTINGS };
    for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof DesktopSettings)[]) {
      const v = this.store.get(key);
      if (v !== undefined) Object.assign(s, parseSettingsPatchSafe({ [key]: v }));
    }
    return s;
  }

  /** Saves a change; returns whether the server must restart (host or port changed). */
  write(patch: Partial<DesktopSettings>): { settings: DesktopSettings; restartNeeded: boolean } {
    const before = this.read();
    for (const [k, v] of Object.entries(patch) as [
      keyof DesktopSettings,
      DesktopSettings[keyof DesktopSettings],
    ][])
      this.store.set(k, v);
    const settings = this.read();
    if (patch.openAtLogin !== undefined) this.applyLoginItem(settings);
    return {
      settings,
      restartNeeded: before.lanAccess !== settings.lanAccess || before.port !== settings.port,
    };
  }

  applyLoginItem(settings: DesktopSettings): void {
    this.app.setLoginItemSettings({ openAtLogin: settings.openAtLogin, openAsHidden: true });
  }
}

function parseSettingsPatchSafe(input: Record<string, unknown>): Partial<DesktopSettings> {
  try {
    return parseSettingsPatch(input);
  } catch {
    return {}; // a hand-edited settings file falls back to the default for that key
  }
}

/** `http://<address>:<port>` for every external IPv4 address (what a phone on the LAN can reach). */
export function lanUrls(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, port: number): string[] {
  const urls: string[] = [];
  for (const list of Object.values(interfaces)) {
    for (const i of list ?? []) {
      if (i.internal || i.family !== 'IPv4') continue;
      urls.push(`http://${i.address}:${port}`);
    }
  }
  return urls;
}

import { describe, expect, it } from 'vitest';
import { type DesktopSettings, DesktopSettingsStore, lanUrls, parseSettingsPatch } from './settings';
import { memoryStore } from './testing/fake-electron';

describe('desktop settings', () => {
  it('parseSettingsPatch accepts the three settings and refuses anything else', () => {
    expect(parseSettingsPatch({ openAtLogin: true, lanAccess: false, port: 8080 })).toEqual({
      openAtLogin: true,
      lanAccess: false,
      port: 8080,
    });
    expect(() => parseSettingsPatch({ port: 80 })).toThrow(/1024/);
    expect(() => parseSettingsPatch({ port: '8080' })).toThrow();
    expect(() => parseSettingsPatch({ lanAccess: 'yes' })).toThrow();
    expect(() => parseSettingsPatch({ dataDir: '/' })).toThrow(/unknown setting/);
    expect(() => parseSettingsPatch(null)).toThrow();
  });
  it('write applies start-at-login and says when the server must restart', () => {
    const login: unknown[] = [];
    const s = new DesktopSettingsStore(memoryStore<DesktopSettings>({ port: 99 as number }), {
      setLoginItemSettings: (x) => login.push(x),
    });
    expect(s.read()).toEqual({ openAtLogin: false, lanAccess: false, port: 7878 }); // bad stored port ignored
    expect(s.write({ openAtLogin: true }).restartNeeded).toBe(false);
    expect(login).toEqual([{ openAtLogin: true, openAsHidden: true }]);
    expect(s.write({ lanAccess: true })).toEqual({
      settings: { openAtLogin: true, lanAccess: true, port: 7878 },
      restartNeeded: true,
    });
  });
  it('lanUrls lists external IPv4 addresses only', () => {
    expect(
      lanUrls(
        {
          lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true } as never],
          eth0: [
            { address: '192.168.1.20', family: 'IPv4', internal: false } as never,
            { address: 'fe80::1', family: 'IPv6', internal: false } as never,
          ],
        },
        7878,
      ),
    ).toEqual(['http://192.168.1.20:7878']);
  });
});

import { describe, expect, it } from 'vitest';
import type { AppContext } from '../context';
import { browserCandidates, chromiumExecutable, SYSTEM_CHROMIUM } from './chromium';

const ctx = (chromiumPath?: string) => ({ config: { chromiumPath } }) as unknown as AppContext;

describe('chromiumExecutable', () => {
  it('takes BELFRY_CHROMIUM_PATH alone when it is set, and null when it does not exist', () => {
    expect(chromiumExecutable(ctx('/opt/my/chrome'), (p) => p === '/opt/my/chrome')).toBe('/opt/my/chrome');
    // set but missing: no fallback to another browser (the setting names the one to use)
    expect(chromiumExecutable(ctx('/opt/my/chrome'), (p) => p === SYSTEM_CHROMIUM)).toBeNull();
  });

  it('finds an installed Chrome, Edge or Chromium at the usual places of each platform', () => {
    const linux = (installed: string) => chromiumExecutable(ctx(), (p) => p === installed, 'linux');
    expect(linux('/usr/bin/google-chrome-stable')).toBe('/usr/bin/google-chrome-stable');
    expect(linux('/usr/bin/microsoft-edge')).toBe('/usr/bin/microsoft-edge');
    expect(linux('/snap/bin/chromium')).toBe('/snap/bin/chromium');
    expect(chromiumExecutable(ctx(), () => false, 'linux')).toBeNull();
    // Debian's chromium first when several are installed
    expect(chromiumExecutable(ctx(), () => true, 'linux')).toBe(SYSTEM_CHROMIUM);

    expect(browserCandidates('darwin', {}, '/Users/ann')).toEqual(
      expect.arrayContaining([
        '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
        '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
        '/Applications/Chromium.app/Contents/MacOS/Chromium',
        '/Users/ann/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      ]),
    );
    const win = browserCandidates('win32', {
      LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local',
      PROGRAMFILES: 'C:\\Program Files',
      'PROGRAMFILES(X86)': 'C:\\Program Files (x86)',
    });
    expect(win).toEqual(
      expect.arrayContaining([
        'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
        'C:\\Users\\ann\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe',
        'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe',
        'C:\\Users\\ann\\AppData\\Local\\Chromium\\Application\\chrome.exe',
      ]),
    );
    // Chrome before Edge
    expect(win.indexOf('C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe')).toBeLessThan(
      win.indexOf('C:\\Program Files\\Microsoft\\Edge\\Application\\msedge.exe'),
    );
  });
});

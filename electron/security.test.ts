import { describe, expect, it } from 'vitest';
import { decidePermission, hardenSession, hardenWebContents, secureWebPreferences } from './security';
import { FakeSession, FakeWebContents, fakeEvent } from './testing/fake-electron';

const origin = 'http://127.0.0.1:7878';

describe('Electron lock-down', () => {
  it('web preferences isolate, sandbox and deny Node', () => {
    expect(secureWebPreferences('/p/preload.cjs')).toEqual({
      preload: '/p/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    });
  });
  it('navigation stays on the app; safe links go to the browser, others are dropped', () => {
    const opened: string[] = [];
    const wc = new FakeWebContents(new FakeSession());
    hardenWebContents(wc, () => origin, { openExternal: async (u) => void opened.push(u) });
    const inApp = fakeEvent();
    wc.fire('will-navigate', inApp, `${origin}/channels`);
    expect(inApp.prevented).toBe(false);
    const away = fakeEvent();
    wc.fire('will-navigate', away, 'https://example.com/docs');
    expect(away.prevented).toBe(true);
    const evil = fakeEvent();
    wc.fire('will-redirect', evil, 'file:///etc/passwd');
    expect(evil.prevented).toBe(true);
    const webview = fakeEvent();
    wc.fire('will-attach-webview', webview);
    expect(webview.prevented).toBe(true);
    expect(wc.windowOpenHandler!({ url: 'https://example.com/new' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler!({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler!({ url: `${origin}/inbox` })).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://example.com/docs', 'https://example.com/new']);
  });
  it('permissions: only clipboard writes, only for the app origin', () => {
    expect(decidePermission('clipboard-sanitized-write', `${origin}/`, origin)).toBe(true);
    expect(decidePermission('clipboard-sanitized-write', 'https://evil.example/', origin)).toBe(false);
    for (const p of ['media', 'geolocation', 'notifications', 'openExternal', 'hid'])
      expect(decidePermission(p, `${origin}/`, origin)).toBe(false);
    const s = new FakeSession();
    hardenSession(s, () => origin);
    let granted: boolean | null = null;
    s.permissionRequest!({ getURL: () => `${origin}/` }, 'media', (g) => {
      granted = g;
    });
    expect(granted).toBe(false);
    expect(s.permissionCheck!({ getURL: () => `${origin}/` }, 'clipboard-sanitized-write')).toBe(true);
  });
  it('the app page gets the strict CSP, replacing any other; other responses are untouched', () => {
    const s = new FakeSession();
    hardenSession(s, () => origin);
    let headers: Record<string, string[] | string> | undefined;
    s.headersListener!(
      {
        url: `${origin}/inbox`,
        resourceType: 'mainFrame',
        responseHeaders: { 'content-security-policy': ['x'] },
      },
      (r) => {
        headers = r.responseHeaders;
      },
    );
    const csp = String(headers!['Content-Security-Policy']);
    expect(headers!['content-security-policy']).toBeUndefined();
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain('ws://127.0.0.1:7878');
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    s.headersListener!(
      { url: `${origin}/assets/a.js`, resourceType: 'script', responseHeaders: { a: 'b' } },
      (r) => {
        headers = r.responseHeaders;
      },
    );
    expect(headers).toEqual({ a: 'b' });
  });
});

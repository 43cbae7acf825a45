import { contentSecurityPolicy } from '../server/http/static';
import type { Session, Shell, WebContents, WebPreferences } from './electron-api';
import { isAppUrl, isSafeExternalUrl } from './trusted-url';

/**
 * Electron lock-down in one place (conventions, habit 15). The window shows the hosted server's UI and
 * nothing else; the renderer gets no Node, runs sandboxed and isolated, and reaches the main process only
 * through the preload's named functions.
 */
export function secureWebPreferences(preloadPath: string): WebPreferences {
  return {
    preload: preloadPath,
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
  };
}

/** Permissions the UI may have: copying a key to the clipboard. Everything else is refused. */
export const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export function decidePermission(
  permission: string,
  requestingUrl: string | undefined,
  appOrigin: string,
): boolean {
  return (
    ALLOWED_PERMISSIONS.has(permission) && requestingUrl !== undefined && isAppUrl(requestingUrl, appOrigin)
  );
}

export function hardenSession(session: Session, appOrigin: () => string): void {
  const urlOf = (wc: unknown): string | undefined =>
    typeof (wc as { getURL?: unknown })?.getURL === 'function' ? (wc as WebContents).getURL() : undefined;
  session.setPermissionRequestHandler((wc, permission, callback) =>
    callback(decidePermission(permission, urlOf(wc), appOrigin())),
  );
  session.setPermissionCheckHandler((wc, permission) => decidePermission(permission, urlOf(wc), appOrigin()));
  // The server sends the CSP on its pages too; this also covers anything it did not (error pages).
  session.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...(details.responseHeaders ?? {}) };
    if (isAppUrl(details.url, appOrigin()) && (details.resourceType ?? 'mainFrame') === 'mainFrame') {
      for (const k of Object.keys(headers))
        if (k.toLowerCase() === 'content-security-policy') delete headers[k];
      headers['Content-Security-Policy'] = [contentSecurityPolicy(new URL(appOrigin()).host)];
    }
    callback({ responseHeaders: headers });
  });
}

/**
 * Navigation stays on the app origin; a link elsewhere goes to the system browser if it is a plain
 * http(s) URL, and is dropped otherwise. New windows are never created. Webviews are never attached.
 */
export function hardenWebContents(contents: WebContents, appOrigin: () => string, shell: Shell): void {
  const leave = (url: string) => {
    if (isSafeExternalUrl(url)) void shell.openExternal(url);
  };
  const guard = (event: { preventDefault(): void }, url: string) => {
    if (isAppUrl(url, appOrigin())) return;
    event.preventDefault();
    leave(url);
  };
  contents.on('will-navigate', guard);
  contents.on('will-redirect', guard);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (!isAppUrl(url, appOrigin())) leave(url);
    return { action: 'deny' };
  });
}

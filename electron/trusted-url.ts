/**
 * URL guards for the window: what the app may load, and what may be handed to the OS browser.
 * Kept free of Electron so they are unit-tested directly.
 */

/** True when `url` is on the hosted server's own origin (scheme, host and port all equal). */
export function isAppUrl(url: string, appOrigin: string): boolean {
  const u = parse(url);
  const o = parse(appOrigin);
  if (!u || !o) return false;
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  return u.origin === o.origin;
}

/**
 * Only plain http(s) links to a real host leave the app, never `file:`, `javascript:`, custom
 * protocols, URLs with credentials, or anything that does not parse.
 */
export function isSafeExternalUrl(url: string): boolean {
  if (typeof url !== 'string' || url.length > 2048) return false;
  const u = parse(url);
  if (!u) return false;
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (u.username || u.password) return false;
  if (!u.hostname) return false;
  // Control characters and whitespace have no place in a URL we pass to the shell.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point of this check
  if (/[\u0000-\u0020\u007f]/.test(url)) return false;
  return true;
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

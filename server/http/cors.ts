import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Browsers on other origins: only the configured ones, with credentials (contract). Sets the response
 * headers for an allowed origin; answers a preflight itself and then returns true.
 */
export function applyCors(
  req: IncomingMessage,
  res: ServerResponse,
  allowedOrigins: readonly string[],
): boolean {
  const origin = req.headers.origin;
  if (!origin || !allowedOrigins.includes(origin)) return false;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Allow-Credentials', 'true');
  res.setHeader('Vary', 'Origin');
  if (req.method !== 'OPTIONS') return false;
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
  res.setHeader(
    'Access-Control-Allow-Headers',
    req.headers['access-control-request-headers'] ?? 'Content-Type, Authorization',
  );
  res.statusCode = 204;
  res.end();
  return true;
}

function first(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/**
 * Whether a request that carries the session cookie comes from this app's own pages (or an origin of
 * BELFRY_ALLOWED_ORIGINS). Browsers send the cookie from every page of the same site (another port of
 * 127.0.0.1 or of the LAN address included) and WebSockets are not bound by CORS, so the cookie alone
 * proves nothing. Own pages: `Origin` naming the Host header's host (or the public URL's origin), or
 * `Sec-Fetch-Site: same-origin`. `Origin: null` (sandboxed frames, data: URLs) is never ours. A request
 * with neither header is not from a browser (browsers send `Origin` on every non-GET request and on
 * WebSocket upgrades): accepted, since its sender holds the cookie's token anyway.
 */
export function sameOriginOrAllowed(
  ctx: { config: { allowedOrigins: readonly string[]; publicUrl?: string | undefined } },
  req: { headers: IncomingMessage['headers'] },
): boolean {
  const origin = first(req.headers.origin);
  const site = first(req.headers['sec-fetch-site']);
  if (site === 'same-origin') return true;
  if (origin === undefined) return site === undefined;
  if (ctx.config.allowedOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    if (url.host === first(req.headers.host)) return true;
    return ctx.config.publicUrl !== undefined && url.origin === new URL(ctx.config.publicUrl).origin;
  } catch {
    return false;
  }
}

import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request } from 'express';
import { WebSocketServer } from 'ws';
import type { AppContext } from '../context';
import { kindOfToken, readCredential, requestMeta, resolveToken } from '../http/auth';
import { isAccountingListener } from '../http/connections';
import { sameOriginOrAllowed } from '../http/cors';
import { ApiError, errors, refuseOnSocket } from '../http/errors';
import { WS_MAX_INCOMING_BYTES } from '../lib/limits';
import type { LiveAuth, LiveHub } from './hub';

/** The message socket's paths: `/ws` (spec) and a WebSocket upgrade on `/stream` (the older protocol). */
export const WS_PATHS: ReadonlySet<string> = new Set(['/ws', '/stream']);

/**
 * Handles WebSocket upgrades on the HTTP server. An ordinary GET never reaches 'upgrade', so express
 * keeps serving SSE on `GET /stream`. A refused upgrade gets a plain HTTP response with the JSON error
 * body, like any other request.
 */
export function attachWebSockets(ctx: AppContext, server: Server, hub: LiveHub): void {
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: WS_MAX_INCOMING_BYTES,
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (err) => ctx.log.debug('upgrade socket error', { err: err.message }));
    // Nothing thrown here may reach the process (issue 21: `GET //[` with an Upgrade header killed it).
    try {
      handleUpgrade(req, socket, head);
    } catch (err) {
      ctx.log.error('websocket upgrade failed', { path: req.url?.slice(0, 200), err });
      refuseOnSocket(socket, errors.internal());
    }
  });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = requestTarget(req.url);
    if (!url) {
      refuseOnSocket(socket, errors.badRequest('malformed request target'));
      return;
    }
    if (!WS_PATHS.has(url.pathname)) {
      // Another listener may own this path; answer only when nobody else listens.
      if (server.listeners('upgrade').filter((l) => !isAccountingListener(l)).length === 1)
        refuseOnSocket(socket, errors.routeNotFound('GET', url.pathname));
      return;
    }
    if (hub.stopping) {
      refuseOnSocket(socket, errors.unavailable('the server is shutting down'));
      return;
    }
    let auth: LiveAuth;
    try {
      auth = authenticateUpgrade(ctx, req, url);
      // Per-token and per-user caps (429); the slot is given back when this socket closes.
      hub.admit(auth, socket);
    } catch (err) {
      if (!(err instanceof ApiError)) ctx.log.error('websocket authentication failed', { err });
      refuseOnSocket(socket, err instanceof ApiError ? err : errors.internal());
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (hub.stopping) {
        ws.terminate();
        return;
      }
      // After the 101 an HTTP error can no longer be sent: a failure here only closes this socket.
      try {
        const legacy = url.pathname === '/stream';
        // Service frames only on /ws opened with exactly events=1 (never on the /stream upgrade).
        const events = !legacy && url.searchParams.get('events') === '1';
        hub.addSocket(ws, auth, legacy ? 'legacy' : 'belfry', events);
      } catch (err) {
        ctx.log.error('could not register a websocket', { err });
        ws.terminate();
      }
    });
  }
}

/** RFC 9112 origin-form: a path of RFC 3986 pchars and slashes, then an optional query. */
const ORIGIN_FORM = /^\/[\w\-.~!$&'()*+,;=:@%/]*(?:\?\S*)?$/;

/**
 * The request-target of an upgrade as a URL, or null when it is not one (400): origin-form (`/ws?…`,
 * `//x` included, as a path) or absolute-form (`http://host/ws`). `*`, authority-form, a path with
 * characters RFC 3986 does not allow there (`//[`) and anything `new URL` refuses are null, never an
 * exception (issue 21: `new URL('//[', base)` threw and the process died).
 */
export function requestTarget(target: string | undefined): URL | null {
  if (!target) return null;
  try {
    if (ORIGIN_FORM.test(target)) return new URL(`http://localhost${target}`);
    if (/^https?:\/\//i.test(target)) return new URL(target);
  } catch {
    // fall through: not a URL
  }
  return null;
}

/**
 * Authenticates an upgrade with the spec's transports in its order (`?token=` is what clients use).
 * Accepted: a device token; a channel key (A) or share token (S) with read permission, which sees only
 * its channel. An API token or a username and password: 401; a key without read: 403.
 */
export function authenticateUpgrade(ctx: AppContext, req: IncomingMessage, url: URL): LiveAuth {
  const token = url.searchParams.get('token');
  // readCredential reads only headers and query.token; an upgrade has no express request around it.
  const view = { headers: req.headers, query: token === null ? {} : { token } } as unknown as Request;
  const cred = readCredential(view);
  if (!cred) throw errors.unauthorized();
  if (cred.transport === 'malformed-authorization')
    throw errors.unauthorized('malformed Authorization header');
  if (cred.transport === 'basic') throw errors.basicNotAccepted();
  const kind = kindOfToken(cred.token);
  if (kind === 'api') throw errors.wrongTokenKind();
  const meta = requestMeta(ctx, { headers: req.headers, query: {}, socket: req.socket, path: url.pathname });
  const principal = resolveToken(ctx, cred.token, meta);
  if (principal.kind === 'api') throw errors.wrongTokenKind();
  if ((principal.kind === 'app' || principal.kind === 'share') && !principal.canRead)
    throw errors.permissionDenied('read');
  if (cred.transport === 'cookie' && !sameOriginOrAllowed(ctx, req))
    throw errors.forbidden('a WebSocket from another origin cannot use the session cookie');
  return { principal, token: cred.token, meta };
}

import type { Request, Response } from 'express';
import type { AppContext } from '../context';
import { type AuthRule, principalOf, readCredential, requestMeta } from '../http/auth';
import { sseEvent } from './frames';
import type { LiveHub } from './hub';

/**
 * `GET /stream` (spec "Events", Server-Sent Events): device tokens only, from `?token=` or the session
 * cookie (any of the spec's transports works). API tokens and channel keys get 401: the stream carries
 * account-wide change signals, and /ws does not take API tokens either (docs/api.md, "Live streams").
 */
export const SSE_AUTH: AuthRule = { kinds: ['device'] };

/** Reconnection delay suggested to EventSource clients. */
const SSE_RETRY_MS = 5_000;

export function openStream(ctx: AppContext, hub: LiveHub, req: Request, res: Response): undefined {
  const principal = principalOf(req);
  const cred = readCredential(req);
  const token = cred && 'token' in cred ? cred.token : '';
  const auth = { principal, token, meta: requestMeta(ctx, req) };
  // Per-token and per-user caps (429 before any header is sent); the slot is freed when the response closes.
  hub.admit(auth, res);
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  req.socket.setNoDelay(true);
  req.socket.setKeepAlive(true);
  const stream = hub.addStream(res, auth);
  res.write(`retry: ${SSE_RETRY_MS}\n\n`);
  hub.writeStream(stream, sseEvent('connected', { deviceId: principal.deviceId }));
  ctx.log.debug('sse stream opened', { userId: principal.userId, deviceId: principal.deviceId });
  return undefined;
}

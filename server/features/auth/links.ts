import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../context';

/**
 * Single-purpose, expiring, HMAC-signed tokens for links in mail (contract, "Security defaults"):
 * `base64url(JSON payload).base64url(HMAC-SHA256(secret, purpose + payload))`.
 */
export type LinkPurpose = 'verify' | 'reset' | 'status-verify' | 'status-unsub' | 'read' | 'answer';

export function signLink(
  ctx: AppContext,
  purpose: LinkPurpose,
  data: Record<string, string | number>,
  ttlMs: number,
): string {
  const payload = Buffer.from(JSON.stringify({ ...data, exp: ctx.clock.now() + ttlMs })).toString(
    'base64url',
  );
  return `${payload}.${mac(ctx, purpose, payload)}`;
}

/** The payload when the signature matches the purpose and the link has not expired; else null. */
export function readLink(
  ctx: AppContext,
  purpose: LinkPurpose,
  token: unknown,
): Record<string, unknown> | null {
  if (typeof token !== 'string') return null;
  const [payload, sig] = token.split('.');
  if (!payload || !sig) return null;
  const want = Buffer.from(mac(ctx, purpose, payload));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null) return null;
  const exp = (data as { exp?: unknown }).exp;
  if (typeof exp !== 'number' || exp <= ctx.clock.now()) return null;
  return data as Record<string, unknown>;
}

function mac(ctx: AppContext, purpose: LinkPurpose, payload: string): string {
  return createHmac('sha256', ctx.secret).update(`belfry:link:${purpose}:${payload}`).digest('base64url');
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { type AuthRequest, readCookie, SESSION_COOKIE } from '../../http/auth';

export const SESSION_COOKIE_MAX_AGE_SEC = 31_536_000;

function secure(ctx: AppContext, req: Request): boolean {
  return req.secure || (ctx.config.publicUrl ?? '').startsWith('https:');
}

/** HttpOnly, SameSite=Lax, Secure over https (contract, "Security defaults"). */
export function setSessionCookie(ctx: AppContext, req: Request, res: Response, token: string): void {
  res.append(
    'Set-Cookie',
    `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${SESSION_COOKIE_MAX_AGE_SEC}; HttpOnly; SameSite=Lax${secure(ctx, req) ? '; Secure' : ''}`,
  );
}

export function clearSessionCookie(ctx: AppContext, req: Request, res: Response): void {
  res.append(
    'Set-Cookie',
    `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure(ctx, req) ? '; Secure' : ''}`,
  );
}

/**
 * Known client (issue 20): a browser that has signed in to an account gets a cookie that survives sign-out,
 * `<nonce>.<HMAC(install secret, account, nonce)>`, sent only to /auth. Its sign-ins are counted in a
 * bucket of their own (signInKeys), so a script failing on the same account from the same address cannot
 * lock the owner's browser out. It grants nothing else: a password is still needed.
 */
export const KNOWN_CLIENT_COOKIE = 'belfry-known-client';

function knownMac(ctx: AppContext, email: string, nonce: string): string {
  return createHmac('sha256', ctx.secret)
    .update(`belfry:known-client:${email.trim().toLowerCase()}:${nonce}`)
    .digest('base64url');
}

/** The nonce of the request's known-client cookie when it was issued for this account, else null. */
export function knownClientNonce(ctx: AppContext, req: AuthRequest, email: string): string | null {
  const value = readCookie(req.headers.cookie, KNOWN_CLIENT_COOKIE);
  const [nonce, sig, extra] = (value ?? '').split('.');
  if (!nonce || !sig || extra !== undefined || !/^[\w-]{16,64}$/.test(nonce)) return null;
  const want = Buffer.from(knownMac(ctx, email, nonce));
  const got = Buffer.from(sig);
  return got.length === want.length && timingSafeEqual(got, want) ? nonce : null;
}

export function setKnownClientCookie(ctx: AppContext, req: Request, res: Response, email: string): void {
  const nonce = randomBytes(16).toString('base64url');
  res.append(
    'Set-Cookie',
    `${KNOWN_CLIENT_COOKIE}=${nonce}.${knownMac(ctx, email, nonce)}; Path=/auth; Max-Age=${SESSION_COOKIE_MAX_AGE_SEC}; HttpOnly; SameSite=Lax${secure(ctx, req) ? '; Secure' : ''}`,
  );
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { type AuthRequest, readCookie, SESSION_COOKIE } from '../../http/auth';

export const SESSION_COOKIE_MAX_AGE_SEC = 31_536_000;

function secure(ctx: AppContext, req: Request): boolean {
  return req.secure || (ctx.config.publicUrl ?? '').startsWith('https:');
}

/** Every cookie Belfry sets: HttpOnly, SameSite=Lax, Secure over https (contract, "Security defaults"). */
function appendCookie(
  ctx: AppContext,
  req: Request,
  res: Response,
  nameValue: string,
  path: string,
  maxAgeSec: number,
): void {
  res.append(
    'Set-Cookie',
    `${nameValue}; Path=${path}; Max-Age=${maxAgeSec}; HttpOnly; SameSite=Lax${secure(ctx, req) ? '; Secure' : ''}`,
  );
}

export function setSessionCookie(ctx: AppContext, req: Request, res: Response, token: string): void {
  appendCookie(ctx, req, res, `${SESSION_COOKIE}=${token}`, '/', SESSION_COOKIE_MAX_AGE_SEC);
}

export function clearSessionCookie(ctx: AppContext, req: Request, res: Response): void {
  appendCookie(ctx, req, res, `${SESSION_COOKIE}=`, '/', 0);
}

/**
 * Known client (issue 20): a browser that has signed in to an account gets a cookie that survives sign-out,
 * `<nonce>.<HMAC(install secret, account, nonce)>`, sent only to /auth. Its sign-ins are counted in a
 * bucket of their own (signInKeys), so a script failing on the same account from the same address cannot
 * lock the owner's browser out. It grants nothing else: a password is still needed.
 */
export const KNOWN_CLIENT_COOKIE = 'belfry-known-client';

/**
 * `stamp` is the account's current password hash: a password change (or reset) makes every cookie issued
 * before it worthless, so a browser that was signed in by someone who knew the old password no longer
 * gets a bucket of its own.
 */
function knownMac(ctx: AppContext, email: string, stamp: string, nonce: string): string {
  return createHmac('sha256', ctx.secret)
    .update(`belfry:known-client:${email.trim().toLowerCase()}:${stamp}:${nonce}`)
    .digest('base64url');
}

/**
 * The nonce of the request's known-client cookie when it was issued for this account since its password
 * last changed (`stamp`: the current password hash, '' for no such account), else null.
 */
export function knownClientNonce(
  ctx: AppContext,
  req: AuthRequest,
  email: string,
  stamp: string,
): string | null {
  const value = readCookie(req.headers.cookie, KNOWN_CLIENT_COOKIE);
  const [nonce, sig, extra] = (value ?? '').split('.');
  if (!nonce || !sig || extra !== undefined || !/^[\w-]{16,64}$/.test(nonce)) return null;
  const want = Buffer.from(knownMac(ctx, email, stamp, nonce));
  const got = Buffer.from(sig);
  return got.length === want.length && timingSafeEqual(got, want) ? nonce : null;
}

export function setKnownClientCookie(
  ctx: AppContext,
  req: Request,
  res: Response,
  email: string,
  stamp: string,
): void {
  const nonce = randomBytes(16).toString('base64url');
  const value = `${nonce}.${knownMac(ctx, email, stamp, nonce)}`;
  appendCookie(ctx, req, res, `${KNOWN_CLIENT_COOKIE}=${value}`, '/auth', SESSION_COOKIE_MAX_AGE_SEC);
}

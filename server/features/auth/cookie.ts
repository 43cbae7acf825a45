import type { Request, Response } from 'express';
import type { AppContext } from '../../context';
import { SESSION_COOKIE } from '../../http/auth';

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

import type { AppContext, RequestMeta } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { SUDO_WINDOW_MS } from '../../lib/limits';
import { recordActivity } from '../devices/service';
import { checkRecoveryCode, checkTotp, sudoMethods } from '../mfa/service';
import { checkPassword } from '../users/service';
import { findUserById } from '../users/store';
import { limited, sudoKeys } from './rate-limit';
import { closeSudoWindows, openSudo, sudoUntil } from './store';

/** ctx.auth.sudo: a device with an open window passes; anything else gets 403 sudo_required + methods. */
export function sudoGuard(ctx: AppContext): (principal: Principal) => void {
  return (principal) => {
    if (principal.kind === 'device' && principal.deviceId !== undefined) {
      const until = sudoUntil(ctx.db, principal.deviceId);
      if (until !== undefined && until > ctx.clock.now()) return;
    }
    throw errors.sudoRequired(sudoMethods(ctx, principal.userId));
  };
}

export type SudoMethod = 'password' | 'totp' | 'recovery';

/**
 * `POST /current/user/sudo`: opens a 900 s window for the calling device. Without 2FA the password
 * confirms (wrong: 400 `wrong password`); with 2FA a TOTP or recovery code (wrong: 401 `invalid code`).
 * Failures count against the user and client address (429 after 10 a minute).
 */
export async function confirmSudo(
  ctx: AppContext,
  principal: Principal,
  input: { method?: SudoMethod; pass?: string; code?: string },
  meta: RequestMeta,
): Promise<{ ok: true; method: SudoMethod; expiresIn: number }> {
  const deviceId = principal.deviceId;
  if (principal.kind !== 'device' || deviceId === undefined)
    throw errors.forbidden('only a device session can confirm sensitive actions');
  return limited(ctx, sudoKeys(principal.userId, meta.ip), async () => {
    const user = findUserById(ctx.db, principal.userId);
    if (!user) throw errors.unauthorized();
    const methods = sudoMethods(ctx, user.id);
    const method = input.method ?? (methods[0] as SudoMethod);
    if (!methods.includes(method))
      throw errors.badRequest(
        `method ${method} is not available for this account; use one of: ${methods.join(', ')}`,
      );
    if (method === 'password') {
      if (!input.pass) throw errors.badRequest('pass: required');
      if (!(await checkPassword(ctx, user, input.pass))) throw errors.badRequest('wrong password');
    } else {
      if (!input.code) throw errors.badRequest('code: required');
      const ok =
        method === 'totp' ? checkTotp(ctx, user.id, input.code) : checkRecoveryCode(ctx, user.id, input.code);
      if (!ok) throw errors.invalidCode();
    }
    const now = ctx.clock.now();
    ctx.db.transaction(() => {
      openSudo(ctx.db, { deviceId, userId: user.id, method, expiresAt: now + SUDO_WINDOW_MS });
      recordActivity(ctx, { deviceId, userId: user.id, type: 'sudo', meta, detail: { method } });
    });
    return { ok: true as const, method, expiresIn: SUDO_WINDOW_MS / 1000 };
  });
}

/** Password changes close every open window of the user. */
export function closeAllSudo(ctx: AppContext, userId: number): void {
  closeSudoWindows(ctx.db, userId);
}

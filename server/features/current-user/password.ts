import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { closeAllSudo } from '../auth/sudo';
import { rotateAllDeviceTokens } from '../devices/service';
import { checkPassword, hashPasswordAsync } from '../users/service';
import { setPasswordHash } from '../users/store';
import { currentUserRow } from './service';

/**
 * `POST /current/user/password` (spec point 8): other devices are signed out (tokens rotated), every
 * sudo window closes, API tokens stay.
 */
export async function changeOwnPassword(
  ctx: AppContext,
  p: Principal,
  input: { pass: string; oldPass: string },
): Promise<void> {
  const user = currentUserRow(ctx, p.userId);
  if (!(await checkPassword(ctx, user, input.oldPass))) throw errors.badRequest('wrong password');
  const hash = await hashPasswordAsync(ctx, input.pass);
  const emit = ctx.db.transaction(() => {
    setPasswordHash(ctx.db, user.id, hash);
    closeAllSudo(ctx, user.id);
    return rotateAllDeviceTokens(ctx, user.id, 'password_change', p.deviceId);
  });
  emit();
}

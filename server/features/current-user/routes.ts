import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf, requestMeta, TOK, TOK_BASIC } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { parseBody } from '../../http/validate';
import { limited, sudoKeys } from '../auth/rate-limit';
import { confirmSudo } from '../auth/sudo';
import { changeOwnPlan, TOPUP_MAX_RUBLES, topUp } from '../plans/service';
import { passwordSchema, planSchema } from '../users/schema';
import { changeOwnPassword } from './password';
import { getQuietHours, quietHoursPatch, updateQuietHours } from './quiet-hours';
import { currentUserRow, presentCurrentUser } from './service';

const WRITE = { ...TOK, access: 'write' } as const;

const sudoBody = z.object({
  method: z.enum(['password', 'totp', 'recovery']).optional(),
  pass: z.string().optional(),
  code: z.string().optional(),
});
const passwordBody = z.object({ pass: passwordSchema, oldPass: z.string().min(1, 'oldPass is required') });
const planBody = z.object({ plan: planSchema });
const topupBody = z.object({
  amountRubles: z
    .number()
    .positive()
    .max(TOPUP_MAX_RUBLES)
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, 'at most 2 decimals'),
});

/** Spec "Current user, sudo, password, 2FA, plan" (2FA in mfa/, avatar in avatars/, quota in quota/). */
export function currentUserRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'current-user');
  t.get('/current/user', TOK_BASIC, (req) =>
    presentCurrentUser(ctx, currentUserRow(ctx, principalOf(req).userId)),
  );
  t.post('/current/user/sudo', DEV, (req) =>
    confirmSudo(ctx, principalOf(req), parseBody(req, sudoBody), requestMeta(ctx, req)),
  );
  t.post('/current/user/password', { ...DEV, sudo: true }, async (req) => {
    const body = parseBody(req, passwordBody);
    const keys = sudoKeys(principalOf(req).userId, requestMeta(ctx, req).ip);
    await limited(ctx, keys, () => changeOwnPassword(ctx, principalOf(req), body));
    return {};
  });
  t.post('/current/user/plan', WRITE, (req) => {
    const user = currentUserRow(ctx, principalOf(req).userId);
    changeOwnPlan(ctx, user, parseBody(req, planBody).plan);
    return presentCurrentUser(ctx, currentUserRow(ctx, user.id));
  });
  t.post('/current/user/topup', WRITE, (req) => {
    const user = currentUserRow(ctx, principalOf(req).userId);
    topUp(ctx, user, parseBody(req, topupBody).amountRubles);
    return presentCurrentUser(ctx, currentUserRow(ctx, user.id));
  });
  t.get('/current/user/quiet-hours', TOK, (req) => getQuietHours(ctx, principalOf(req).userId));
  t.put('/current/user/quiet-hours', WRITE, (req) =>
    updateQuietHours(ctx, principalOf(req).userId, parseBody(req, quietHoursPatch)),
  );
  return t;
}

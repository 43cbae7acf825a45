import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf, requestMeta, TOK_BASIC } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { parseBody } from '../../http/validate';
import { confirmSudo } from '../auth/sudo';
import { currentUserRow, presentCurrentUser } from './service';

const sudoBody = z.object({
  method: z.enum(['password', 'totp', 'recovery']).optional(),
  pass: z.string().optional(),
  code: z.string().optional(),
});

/** Spec "Current user, sudo, password, 2FA, plan" (the 2FA, plan, avatar and quiet-hours parts live beside). */
export function currentUserRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'current-user');
  t.get('/current/user', TOK_BASIC, (req) =>
    presentCurrentUser(ctx, currentUserRow(ctx, principalOf(req).userId)),
  );
  t.post('/current/user/sudo', DEV, (req) =>
    confirmSudo(ctx, principalOf(req), parseBody(req, sudoBody), requestMeta(req)),
  );
  return t;
}

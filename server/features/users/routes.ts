import type { Request } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { authenticate, clientAddress, principalOf, readCredential, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../lib/limits';
import { take, takeQuietly } from '../auth/rate-limit';
import { removeAvatarFile } from '../avatars/service';
import {
  adminCreateUser,
  adminDeleteUser,
  adminSetPlan,
  adminUpdateUser,
  confirmPasswordReset,
  presentUser,
  registerUser,
  requestPasswordReset,
  verifyEmail,
} from './accounts';
import { emailSchema, passwordSchema, planSchema } from './schema';
import { listUsers } from './store';

const ADMIN = { ...TOK, admin: true };
const ADMIN_SUDO = { ...TOK, admin: true, sudo: true };

const listQuery = z.object({
  limit: z.coerce.number().int().min(PAGE_LIMIT_MIN).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
  since: z.coerce.number().int().min(0).default(0),
});
const createBody = z.object({
  email: emailSchema,
  pass: passwordSchema.optional(),
  admin: z.boolean().default(false),
});
const registerBody = z.object({ email: emailSchema, pass: passwordSchema });
const updateBody = z.object({
  email: z.string().trim().min(1, 'email is required'),
  admin: z.boolean().default(false),
  pass: passwordSchema.optional(),
  resetMfa: z.boolean().optional(),
});
const planBody = z.object({ plan: planSchema });
const resetBody = z.object({ email: z.string().max(254) });
const confirmBody = z.object({ token: z.string().min(1, 'token is required'), pass: passwordSchema });

function viaLegacyHeader(req: Request): boolean {
  return readCredential(req)?.transport === 'legacy-key';
}

/** Spec "User administration" plus the public password and verification routes of "Login ...". */
export function userRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'users');
  t.get('/user', ADMIN, (req) => {
    const q = parseQuery(req, listQuery);
    const rows = listUsers(ctx.db, q.since, q.limit + 1);
    const more = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1]?.id;
    const paging: Record<string, unknown> = { size: page.length, limit: q.limit };
    if (more && last !== undefined) {
      paging.since = last;
      paging.next = `/user?limit=${q.limit}&since=${last}`;
    } else if (viaLegacyHeader(req)) paging.since = 0;
    return { paging, users: page.map((u) => presentUser(ctx, u)) };
  });
  // POST /user: an administrator creates a verified user; without credentials it is self-registration.
  t.post('/user', null, async (req) => {
    if (readCredential(req) !== null || !ctx.config.registration) {
      await authenticate(ctx, req, ADMIN_SUDO);
      return presentUser(ctx, await adminCreateUser(ctx, parseBody(req, createBody)));
    }
    const body = parseBody(req, registerBody);
    // Per client address and in all: 429 once spent. Every request counts, taken address or not.
    const address = clientAddress(ctx, req);
    take(ctx, [
      ['register', address],
      ['register-all', ''],
    ]);
    return registerUser(ctx, body);
  });
  t.put('/user/:id', ADMIN_SUDO, async (req) => {
    const body = parseBody(req, updateBody);
    const input = {
      email: body.email,
      admin: body.admin,
      ...(body.pass === undefined ? {} : { pass: body.pass }),
      resetMfa: body.resetMfa === true,
    };
    return presentUser(ctx, await adminUpdateUser(ctx, idParam(req), input));
  });
  t.post('/user/:id/plan', ADMIN_SUDO, (req) =>
    presentUser(ctx, adminSetPlan(ctx, idParam(req), parseBody(req, planBody).plan)),
  );
  t.delete('/user/:id', ADMIN_SUDO, async (req) => {
    const gone = adminDeleteUser(ctx, principalOf(req).userId, idParam(req));
    await removeAvatarFile(ctx, gone.image);
    return {};
  });
  t.get('/user/verify', null, (req) => verifyEmail(ctx, req.query.token));
  t.post('/user/reset-password', null, (req) => {
    const email = parseBody(req, resetBody).email.trim();
    take(ctx, [['reset-request', clientAddress(ctx, req)]]);
    // Spent: the same answer, no mail (see SCOPE_LIMITS in auth/rate-limit.ts).
    if (!takeQuietly(ctx, [['reset-mail', email.toLowerCase()]])) return {};
    requestPasswordReset(ctx, email);
    return {};
  });
  t.post('/user/reset-password/confirm', null, async (req) => {
    const body = parseBody(req, confirmBody);
    await confirmPasswordReset(ctx, body.token, body.pass);
    return {};
  });
  return t;
}

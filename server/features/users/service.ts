import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { AppContext, BasicResolver } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { PlanName } from '../../lib/limits';
import { countUsers, findUserByEmail, insertUser, type UserRow } from './store';

export function hashPassword(ctx: AppContext, password: string): string {
  return bcrypt.hashSync(password, ctx.config.bcryptRounds);
}

/** The same without blocking the event loop (bcryptjs yields between rounds); call it before a transaction. */
export function hashPasswordAsync(ctx: AppContext, password: string): Promise<string> {
  return bcrypt.hash(password, ctx.config.bcryptRounds);
}

// Compared against when the email is unknown, so a wrong address costs the same time as a wrong password.
let dummyHash: string | null = null;

export async function checkPassword(
  ctx: AppContext,
  user: UserRow | undefined,
  password: string,
): Promise<boolean> {
  if (!user) {
    dummyHash ??= bcrypt.hashSync('not-a-real-password', ctx.config.bcryptRounds);
    await bcrypt.compare(password, dummyHash);
    return false;
  }
  return bcrypt.compare(password, user.password_hash);
}

export function createUser(
  ctx: AppContext,
  input: { email: string; password: string; admin: boolean; verified: boolean; plan?: PlanName },
): number {
  const passwordHash = hashPassword(ctx, input.password);
  return insertUser(ctx.db, {
    email: input.email,
    passwordHash,
    admin: input.admin,
    verified: input.verified,
    plan: input.plan ?? 'free',
    now: ctx.clock.now(),
  });
}

/**
 * First start with an empty data dir: the admin from BELFRY_ADMIN_EMAIL/PASSWORD, or one with a
 * generated password that the caller prints once (contract, "Starting").
 */
export function ensureFirstAdmin(ctx: AppContext): { email: string; generatedPassword?: string } | null {
  if (countUsers(ctx.db) > 0) return null;
  const email = ctx.config.adminEmail ?? 'admin@localhost';
  const generatedPassword = ctx.config.adminPassword ? undefined : randomBytes(12).toString('base64url');
  const password = ctx.config.adminPassword ?? generatedPassword!;
  createUser(ctx, { email, password, admin: true, verified: true, plan: 'business' });
  return { email, generatedPassword };
}

/**
 * Hooks the accounts family adds to Basic sign-in (second factor). A Set of module-level functions taking
 * the context, so several servers in one process (tests) never see each other's checks.
 */
export const basicChecks = new Set<(ctx: AppContext, user: UserRow) => void>();

export function principalForUser(user: UserRow): Principal {
  return {
    kind: 'basic',
    userId: user.id,
    admin: user.admin === 1,
    access: 'write',
    canRead: true,
    canWrite: true,
  };
}

export function basicResolver(ctx: AppContext): BasicResolver {
  return async (email, password) => {
    const user = findUserByEmail(ctx.db, email);
    const ok = await checkPassword(ctx, user, password);
    if (!ok || !user) throw errors.unauthorized('wrong username or password');
    if (user.verified !== 1) throw errors.notVerified();
    for (const check of basicChecks) check(ctx, user);
    return principalForUser(user);
  };
}

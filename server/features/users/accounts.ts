import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import type { PlanName } from '../../lib/limits';
import { deleteUserApiTokens } from '../api-tokens/service';
import { readLink, signLink } from '../auth/links';
import { takeQuietly } from '../auth/rate-limit';
import { closeAllSudo } from '../auth/sudo';
import { avatarUrl } from '../avatars/service';
import { rotateAllDeviceTokens } from '../devices/service';
import { queueMail } from '../mail/service';
import { disableMfa, mfaEnabled } from '../mfa/service';
import { hashPassword, hashPasswordAsync } from './service';
import {
  countAdmins,
  deleteUserRow,
  findUserByEmail,
  findUserById,
  insertUser,
  setAdmin,
  setPasswordHash,
  setPlan,
  setVerified,
  type UserRow,
} from './store';

export const VERIFY_LINK_TTL_MS = 7 * 86_400_000;
export const RESET_LINK_TTL_MS = 3_600_000;

/** The user of the admin list and admin answers (the spec's "abbreviated" User). */
export function presentUser(ctx: AppContext, u: UserRow) {
  return {
    id: u.id,
    name: u.email,
    email: u.email,
    admin: u.admin === 1,
    verified: u.verified === 1,
    plan: u.plan,
    mfaEnabled: mfaEnabled(ctx, u.id),
    balanceKopecks: u.balance_kopecks,
    image: avatarUrl(ctx, u.image),
    createdAt: rfc3339(u.created_at),
  };
}

export function getUser(ctx: AppContext, id: number): UserRow {
  const u = findUserById(ctx.db, id);
  if (!u) throw errors.notFound('user');
  return u;
}

/** A password-hash fingerprint in reset links: once the password changes, the link is dead. */
function passwordStamp(u: UserRow): string {
  return createHash('sha256').update(u.password_hash).digest('base64url').slice(0, 16);
}

function resetLink(ctx: AppContext, u: UserRow): string {
  const token = signLink(ctx, 'reset', { uid: u.id, ps: passwordStamp(u) }, RESET_LINK_TTL_MS);
  return `${ctx.publicUrl()}/reset-password?token=${encodeURIComponent(token)}`;
}

function sendVerification(ctx: AppContext, u: UserRow): void {
  const token = signLink(ctx, 'verify', { uid: u.id, email: u.email.toLowerCase() }, VERIFY_LINK_TTL_MS);
  const link = `${ctx.publicUrl()}/verify-email?token=${encodeURIComponent(token)}`;
  queueMail(ctx, {
    to: u.email,
    subject: 'Confirm your Belfry address',
    text: `Open this link to confirm your address and activate your Belfry account:\n\n${link}\n\nThe link is valid for 7 days.`,
  });
}

async function insertNewUser(
  ctx: AppContext,
  u: { email: string; password: string; admin: boolean; verified: boolean },
): Promise<number> {
  if (findUserByEmail(ctx.db, u.email)) throw errors.conflict('a user with this email already exists');
  const passwordHash = await hashPasswordAsync(ctx, u.password);
  // Checked again after the await: two registrations of one address may race.
  if (findUserByEmail(ctx.db, u.email)) throw errors.conflict('a user with this email already exists');
  return ctx.db.transaction(() =>
    insertUser(ctx.db, {
      email: u.email,
      passwordHash,
      admin: u.admin,
      verified: u.verified,
      plan: 'free',
      now: ctx.clock.now(),
    }),
  );
}

/** `POST /user` by an administrator: verified at once; without `pass`, a "set your password" mail. */
export async function adminCreateUser(
  ctx: AppContext,
  input: { email: string; pass?: string; admin: boolean },
): Promise<UserRow> {
  const password = input.pass ?? randomBytes(24).toString('base64url');
  const id = await insertNewUser(ctx, { email: input.email, password, admin: input.admin, verified: true });
  const u = getUser(ctx, id);
  if (input.pass === undefined) {
    queueMail(ctx, {
      to: u.email,
      subject: 'Your Belfry account',
      text: `An administrator created a Belfry account for you. Choose your password here:\n\n${resetLink(ctx, u)}\n\nThe link is valid for 1 hour; afterwards ask for a new one on the sign-in page.`,
    });
  }
  return u;
}

/**
 * Self-registration (BELFRY_REGISTRATION): unverified until the mailed link is opened. Answers the same
 * for a taken and a free address (no enumeration): a taken address gets a mail saying someone tried to
 * register with it, with a reset link. The password is hashed either way, so both take as long. One
 * address receives at most REGISTRATION_MAILS_PER_HOUR of these mails (further requests: the same
 * answer, nothing sent).
 */
export async function registerUser(
  ctx: AppContext,
  input: { email: string; pass: string },
): Promise<{ email: string; verified: false }> {
  const answer = { email: input.email, verified: false as const };
  if (!takeQuietly(ctx, [['register-mail', input.email.toLowerCase()]])) return answer;
  const passwordHash = await hashPasswordAsync(ctx, input.pass);
  // Looked up after the await: two registrations of one address may race.
  const taken = findUserByEmail(ctx.db, input.email);
  if (taken) {
    sendAlreadyRegistered(ctx, taken);
    return answer;
  }
  const id = ctx.db.transaction(() =>
    insertUser(ctx.db, {
      email: input.email,
      passwordHash,
      admin: false,
      verified: false,
      plan: 'free',
      now: ctx.clock.now(),
    }),
  );
  sendVerification(ctx, getUser(ctx, id));
  return answer;
}

function sendAlreadyRegistered(ctx: AppContext, u: UserRow): void {
  queueMail(ctx, {
    to: u.email,
    subject: 'Someone tried to register with your Belfry address',
    text: `Someone (hopefully you) tried to create a Belfry account with this address, which already has one. If you forgot your password, choose a new one here:\n\n${resetLink(ctx, u)}\n\nThe link is valid for 1 hour. If it was not you, ignore this mail: nothing has changed.`,
  });
}

export function verifyEmail(ctx: AppContext, token: unknown): { verified: true; email: string } {
  const data = readLink(ctx, 'verify', token);
  const u = data && typeof data.uid === 'number' ? findUserById(ctx.db, data.uid) : undefined;
  if (!u || data?.email !== u.email.toLowerCase())
    throw errors.badRequest('invalid or expired verification link');
  if (u.verified !== 1) ctx.db.transaction(() => setVerified(ctx.db, u.id));
  return { verified: true, email: u.email };
}

/**
 * Signs a user out everywhere: every device token rotated, every API token deleted, sudo windows
 * closed (spec point 8: password reset and an administrator's password change). Inside a transaction;
 * returns the emitter to call after commit.
 */
function signOutEverywhere(
  ctx: AppContext,
  userId: number,
  reason: 'password_reset' | 'admin_password_change',
): () => void {
  const emit = rotateAllDeviceTokens(ctx, userId, reason);
  deleteUserApiTokens(ctx, userId);
  closeAllSudo(ctx, userId);
  return emit;
}

/** A password reset (mailed link or --reset-password): the new hash, the address verified, signed out everywhere. */
function setResetPassword(ctx: AppContext, userId: number, hash: string): void {
  const emit = ctx.db.transaction(() => {
    setPasswordHash(ctx.db, userId, hash);
    setVerified(ctx.db, userId);
    return signOutEverywhere(ctx, userId, 'password_reset');
  });
  emit();
}

/** `POST /user/reset-password`: the same work for known and unknown addresses; mail goes after the answer. */
export function requestPasswordReset(ctx: AppContext, email: string): void {
  const u = findUserByEmail(ctx.db, email);
  if (!u) return;
  queueMail(ctx, {
    to: u.email,
    subject: 'Reset your Belfry password',
    text: `Someone (hopefully you) asked to reset the password of your Belfry account. Choose a new one here:\n\n${resetLink(ctx, u)}\n\nThe link is valid for 1 hour. If you did not ask, ignore this mail.`,
  });
}

export async function confirmPasswordReset(ctx: AppContext, token: unknown, pass: string): Promise<void> {
  const data = readLink(ctx, 'reset', token);
  const u = data && typeof data.uid === 'number' ? findUserById(ctx.db, data.uid) : undefined;
  if (!u || data?.ps !== passwordStamp(u)) throw errors.badRequest('invalid or expired reset token');
  const hash = await hashPasswordAsync(ctx, pass);
  // Re-check after the await: the link is single use even when two confirmations race.
  const now = findUserById(ctx.db, u.id);
  if (!now || passwordStamp(now) !== data.ps) throw errors.badRequest('invalid or expired reset token');
  setResetPassword(ctx, u.id, hash);
}

/**
 * `npm run serve -- --reset-password EMAIL` (server/cli.ts, with the server stopped): whoever can run
 * Belfry on its data dir owns it, so this is the way back in when no mail reaches the owner (no SMTP and
 * the only administrator locked out). A generated password, the account verified and signed out everywhere.
 */
export function resetPasswordOffline(ctx: AppContext, email: string): string {
  const u = findUserByEmail(ctx.db, email);
  if (!u) throw errors.notFound('user');
  const password = randomBytes(12).toString('base64url');
  const hash = hashPassword(ctx, password);
  setResetPassword(ctx, u.id, hash);
  return password;
}

/** `PUT /user/{id}`: email fixed, `admin` absent = false, a new password signs the user out everywhere. */
export async function adminUpdateUser(
  ctx: AppContext,
  id: number,
  input: { email: string; admin: boolean; pass?: string; resetMfa?: boolean },
): Promise<UserRow> {
  const check = () => {
    const u = getUser(ctx, id);
    if (input.email.toLowerCase() !== u.email.toLowerCase())
      throw errors.badRequest('email cannot be changed');
    if (u.admin === 1 && !input.admin && countAdmins(ctx.db) <= 1)
      throw errors.badRequest('the last administrator cannot be removed or demoted');
    return u;
  };
  check();
  const hash = input.pass === undefined ? null : await hashPasswordAsync(ctx, input.pass);
  // Checked again after the await: another request may have demoted an administrator meanwhile.
  const u = check();
  const emit = ctx.db.transaction(() => {
    if ((u.admin === 1) !== input.admin) setAdmin(ctx.db, id, input.admin);
    if (input.resetMfa) disableMfa(ctx, id);
    if (hash === null) return null;
    setPasswordHash(ctx.db, id, hash);
    return signOutEverywhere(ctx, id, 'admin_password_change');
  });
  emit?.();
  return getUser(ctx, id);
}

export function adminSetPlan(ctx: AppContext, id: number, plan: PlanName): UserRow {
  getUser(ctx, id);
  ctx.db.transaction(() => setPlan(ctx.db, id, plan));
  return getUser(ctx, id);
}

export function adminDeleteUser(ctx: AppContext, callerId: number, id: number): UserRow {
  if (id === callerId) throw errors.badRequest('you cannot delete yourself');
  const u = getUser(ctx, id);
  if (u.admin === 1 && countAdmins(ctx.db) <= 1)
    throw errors.badRequest('the last administrator cannot be removed or demoted');
  ctx.db.transaction(() => deleteUserRow(ctx.db, id));
  ctx.bus.emit('user:devices_invalidated', { userId: id });
  return u;
}

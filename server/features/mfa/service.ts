import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { generateSecret, generateURI, verifySync } from 'otplib';
import type { AppContext, RequestMeta } from '../../context';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { MFA_CHALLENGE_TTL_MS, RECOVERY_CODE_COUNT } from '../../lib/limits';
import { seal as sealSecret, unseal as unsealSecret } from '../../lib/seal';
import { tokenDigest } from '../../lib/tokens';
import {
  addApprover,
  type ChallengeRow,
  countRecoveryCodes,
  deleteMfa,
  enableMfa,
  findChallengeByDigest,
  findMfa,
  insertChallenge,
  isApprover,
  isMfaEnabled,
  listApprovers,
  pendingChallenges,
  removeAllApprovers,
  removeApprover,
  replaceRecoveryCodes,
  setChallengeStatus,
  setLastStep,
  setMobileEnabled,
  setPendingSecret,
  useRecoveryCode,
} from './store';

export const TOTP_PERIOD_SEC = 30;
/** One time step either side: phones whose clocks drift a little still sign in. */
export const TOTP_TOLERANCE_SEC = 30;
export const TOTP_ISSUER = 'Belfry';

export type SecondFactor = 'totp' | 'recovery' | 'mobile';

// --- secrets at rest -------------------------------------------------------------------------------

const TOTP_SEAL_PURPOSE = 'belfry:totp-secret';
const seal = (ctx: AppContext, plain: string) => sealSecret(ctx.secret, TOTP_SEAL_PURPOSE, plain);
const unseal = (ctx: AppContext, sealed: string) => unsealSecret(ctx.secret, TOTP_SEAL_PURPOSE, sealed);

function recoveryDigest(ctx: AppContext, code: string): string {
  const normalized = code.toLowerCase().replace(/[^a-z0-9]/g, '');
  return createHmac('sha256', ctx.secret).update(`belfry:recovery:${normalized}`).digest('hex');
}

// --- TOTP and recovery codes ---------------------------------------------------------------------

/** The matched time step when `code` is valid now and newer than `afterStep`, else null. */
function matchTotp(ctx: AppContext, secret: string, code: string, afterStep: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const result = verifySync({
    secret,
    token: code,
    epoch: Math.floor(ctx.clock.now() / 1000),
    period: TOTP_PERIOD_SEC,
    epochTolerance: TOTP_TOLERANCE_SEC,
    ...(afterStep > 0 ? { afterTimeStep: afterStep } : {}),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** Checks a TOTP code of an enabled account; a code is accepted once (its time step is remembered). */
export function checkTotp(ctx: AppContext, userId: number, code: string): boolean {
  const row = findMfa(ctx.db, userId);
  if (row?.enabled !== 1 || !row.secret) return false;
  const step = matchTotp(ctx, unseal(ctx, row.secret), code.trim(), row.last_step);
  if (step === null) return false;
  ctx.db.transaction(() => setLastStep(ctx.db, userId, step));
  return true;
}

/** Spends a recovery code; each works once. */
export function checkRecoveryCode(ctx: AppContext, userId: number, code: string): boolean {
  if (!isMfaEnabled(ctx.db, userId)) return false;
  return ctx.db.transaction(() =>
    useRecoveryCode(ctx.db, userId, recoveryDigest(ctx, code), ctx.clock.now()),
  );
}

function newRecoveryCodes(ctx: AppContext, userId: number): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let s = '';
    for (let i = 0; i < 10; i++) s += alphabet[randomInt(alphabet.length)];
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  });
  replaceRecoveryCodes(
    ctx.db,
    userId,
    codes.map((c) => recoveryDigest(ctx, c)),
    ctx.clock.now(),
  );
  return codes;
}

export function mfaEnabled(ctx: AppContext, userId: number): boolean {
  return isMfaEnabled(ctx.db, userId);
}

/** Phone approval is offered when it was linked and an approver device is still there. */
function mobileAvailable(ctx: AppContext, userId: number): boolean {
  const row = findMfa(ctx.db, userId);
  return (
    row?.enabled === 1 &&
    row.mobile_enabled === 1 &&
    listApprovers(ctx.db, userId).some((a) => a.status === 'active')
  );
}

/** Methods a sudo confirmation accepts: the password without 2FA; a TOTP or recovery code with it. */
export function sudoMethods(ctx: AppContext, userId: number): string[] {
  return mfaEnabled(ctx, userId) ? ['totp', 'recovery'] : ['password'];
}

// --- settings (Dev + sudo) -------------------------------------------------------------------------

export function mfaStatus(ctx: AppContext, userId: number) {
  const row = findMfa(ctx.db, userId);
  const approvers = listApprovers(ctx.db, userId);
  return {
    enabled: row?.enabled === 1,
    pendingSetup: row?.enabled !== 1 && !!row?.pending_secret,
    recoveryCodesRemaining: row?.enabled === 1 ? countRecoveryCodes(ctx.db, userId) : 0,
    mobileConnected: approvers.some((a) => a.status === 'active'),
    mobileEnabled: row?.enabled === 1 && row.mobile_enabled === 1,
    approverDevices: approvers.map((a) => ({
      id: a.device_id,
      name: a.name,
      platform: a.platform,
      status: a.status,
      addedAt: rfc3339(a.created_at),
    })),
  };
}

export function startSetup(
  ctx: AppContext,
  user: { id: number; email: string },
): { secret: string; uri: string } {
  if (mfaEnabled(ctx, user.id)) throw errors.conflict('two-factor authentication is already enabled');
  const secret = generateSecret();
  ctx.db.transaction(() => setPendingSecret(ctx.db, user.id, seal(ctx, secret), ctx.clock.now()));
  return {
    secret,
    uri: generateURI({ issuer: TOTP_ISSUER, label: user.email, secret, period: TOTP_PERIOD_SEC }),
  };
}

export function confirmSetup(ctx: AppContext, userId: number, code: string): { recoveryCodes: string[] } {
  const row = findMfa(ctx.db, userId);
  if (row?.enabled === 1) throw errors.conflict('two-factor authentication is already enabled');
  if (!row?.pending_secret)
    throw errors.badRequest('no two-factor setup in progress; call /current/user/mfa/setup first');
  const step = matchTotp(ctx, unseal(ctx, row.pending_secret), code.trim(), 0);
  if (step === null) throw errors.invalidCode();
  return ctx.db.transaction(() => {
    enableMfa(ctx.db, userId, row.pending_secret!, step, ctx.clock.now());
    return { recoveryCodes: newRecoveryCodes(ctx, userId) };
  });
}

export function disableMfa(ctx: AppContext, userId: number): void {
  ctx.db.transaction(() => deleteMfa(ctx.db, userId));
}

export function regenerateRecoveryCodes(ctx: AppContext, userId: number): { recoveryCodes: string[] } {
  if (!mfaEnabled(ctx, userId)) throw errors.badRequest('two-factor authentication is not enabled');
  return ctx.db.transaction(() => ({ recoveryCodes: newRecoveryCodes(ctx, userId) }));
}

// --- challenges: login second step and phone linking -------------------------------------------------

function newMobileCode(ctx: AppContext, userId: number): string {
  const taken = new Set(pendingChallenges(ctx.db, userId, ctx.clock.now()).map((c) => c.mobile_code));
  for (;;) {
    const code = String(randomInt(1_000_000)).padStart(6, '0');
    if (!taken.has(code)) return code;
  }
}

function createChallenge(
  ctx: AppContext,
  userId: number,
  kind: ChallengeRow['kind'],
  methods: SecondFactor[],
  meta: RequestMeta,
  device: { name?: string; platform?: string } = {},
): { challenge: string; mobileCode: string; expiresIn: number } {
  const challenge = randomBytes(24).toString('base64url');
  const now = ctx.clock.now();
  const mobileCode = ctx.db.transaction(() => {
    const code = newMobileCode(ctx, userId);
    insertChallenge(ctx.db, {
      user_id: userId,
      kind,
      challenge_digest: tokenDigest(challenge),
      mobile_code: code,
      methods: JSON.stringify(methods),
      device_name: device.name ?? '',
      device_platform: device.platform ?? '',
      ip: meta.ip,
      user_agent: meta.userAgent,
      created_at: now,
      expires_at: now + MFA_CHALLENGE_TTL_MS,
    });
    return code;
  });
  return { challenge, mobileCode, expiresIn: MFA_CHALLENGE_TTL_MS / 1000 };
}

/** The 401 body's `mfa` object for a correct password of a 2FA account. */
export function loginChallenge(
  ctx: AppContext,
  userId: number,
  meta: RequestMeta,
  device: { name?: string; platform?: string },
): { challenge: string; methods: SecondFactor[]; mobileCode: string; expiresIn: number } {
  const methods: SecondFactor[] = mobileAvailable(ctx, userId)
    ? ['totp', 'mobile', 'recovery']
    : ['totp', 'recovery'];
  const c = createChallenge(ctx, userId, 'login', methods, meta, device);
  return { challenge: c.challenge, methods, mobileCode: c.mobileCode, expiresIn: c.expiresIn };
}

function secondsLeft(ctx: AppContext, row: ChallengeRow): number {
  return Math.max(0, Math.ceil((row.expires_at - ctx.clock.now()) / 1000));
}

/** A live challenge by its value: unknown 404, used or expired 410. */
function liveChallenge(ctx: AppContext, challenge: string, kind: ChallengeRow['kind']): ChallengeRow {
  const row =
    typeof challenge === 'string' && challenge
      ? findChallengeByDigest(ctx.db, tokenDigest(challenge))
      : undefined;
  if (!row || row.kind !== kind) throw errors.notFound('challenge');
  if (row.status === 'consumed' || row.expires_at <= ctx.clock.now())
    throw errors.gone('this challenge has expired or was already used; sign in again');
  return row;
}

/** The account a challenge belongs to (live or not), for throttling its second step; unknown: undefined. */
export function challengeUser(ctx: AppContext, challenge: string): number | undefined {
  return findChallengeByDigest(ctx.db, tokenDigest(challenge))?.user_id;
}

/** `POST /auth/mfa/challenge`: the web client polls until the phone approved. */
export function pollChallenge(ctx: AppContext, challenge: string) {
  const row = liveChallenge(ctx, challenge, 'login');
  return {
    status: row.status as 'pending' | 'approved',
    mobileCode: row.mobile_code,
    expiresIn: secondsLeft(ctx, row),
  };
}

/**
 * `POST /auth/mfa/verify`: checks the second factor and consumes the challenge. Returns the user and the
 * device name and platform given at login (the verify body may override them).
 */
export function verifyChallenge(
  ctx: AppContext,
  input: { challenge: string; method: SecondFactor; code?: string },
): { userId: number; name: string; platform: string } {
  const row = liveChallenge(ctx, input.challenge, 'login');
  const methods = JSON.parse(row.methods) as SecondFactor[];
  if (!methods.includes(input.method))
    throw errors.badRequest(
      `method ${input.method} is not available for this sign-in; use one of: ${methods.join(', ')}`,
    );
  let ok = false;
  if (input.method === 'mobile') {
    if (row.status !== 'approved') throw errors.unauthorized('sign-in not approved on the phone yet');
    ok = true;
  } else if (!input.code) {
    throw errors.badRequest('code: required for totp and recovery');
  } else if (input.method === 'totp') {
    ok = checkTotp(ctx, row.user_id, input.code);
  } else {
    ok = checkRecoveryCode(ctx, row.user_id, input.code);
  }
  if (!ok) throw errors.invalidCode();
  ctx.db.transaction(() => setChallengeStatus(ctx.db, row.id, 'consumed'));
  return { userId: row.user_id, name: row.device_name, platform: row.device_platform };
}

/** `GET /auth/mfa/pending`: sign-ins and phone links of the user waiting for a code from a phone. */
export function pendingApprovals(ctx: AppContext, userId: number) {
  return pendingChallenges(ctx.db, userId, ctx.clock.now()).map((c) => ({
    id: c.id,
    kind: c.kind,
    ip: c.ip,
    userAgent: c.user_agent,
    createdAt: rfc3339(c.created_at),
    expiresIn: secondsLeft(ctx, c),
  }));
}

/**
 * `POST /auth/mfa/approve`: the phone enters the code shown on the login (or linking) screen. A login
 * needs an approver device (403 otherwise); linking is what makes a device an approver.
 */
export function approve(ctx: AppContext, userId: number, deviceId: number, code: string) {
  const match = pendingChallenges(ctx.db, userId, ctx.clock.now()).find((c) => c.mobile_code === code.trim());
  if (!match) throw errors.notFound('pending sign-in with this code');
  if (match.kind === 'login' && !isApprover(ctx.db, deviceId))
    throw errors.forbidden('this device is not an approver');
  ctx.db.transaction(() => setChallengeStatus(ctx.db, match.id, 'approved', deviceId));
  return { status: 'approved' as const, kind: match.kind, expiresIn: secondsLeft(ctx, match) };
}

export function startMobileLink(ctx: AppContext, userId: number, meta: RequestMeta) {
  if (!mfaEnabled(ctx, userId)) throw errors.badRequest('two-factor authentication is not enabled');
  const c = createChallenge(ctx, userId, 'link', ['mobile'], meta);
  return { challenge: c.challenge, code: c.mobileCode, expiresIn: c.expiresIn };
}

/** Finishes linking: the device that entered the code becomes an approver; phone approval is on. */
export function confirmMobileLink(ctx: AppContext, userId: number, challenge: string) {
  const row = liveChallenge(ctx, challenge, 'link');
  if (row.user_id !== userId) throw errors.notFound('challenge');
  if (row.status !== 'approved' || row.approved_by === null)
    throw errors.conflict('the code has not been entered on the phone yet');
  ctx.db.transaction(() => {
    addApprover(ctx.db, userId, row.approved_by!, ctx.clock.now());
    setMobileEnabled(ctx.db, userId, true, ctx.clock.now());
    setChallengeStatus(ctx.db, row.id, 'consumed');
  });
  return mfaStatus(ctx, userId);
}

export function disableMobile(ctx: AppContext, userId: number) {
  ctx.db.transaction(() => {
    removeAllApprovers(ctx.db, userId);
    setMobileEnabled(ctx.db, userId, false, ctx.clock.now());
  });
  return mfaStatus(ctx, userId);
}

export function removeApproverDevice(ctx: AppContext, userId: number, deviceId: number) {
  const removed = ctx.db.transaction(() => removeApprover(ctx.db, userId, deviceId));
  if (!removed) throw errors.notFound('approver device');
  return mfaStatus(ctx, userId);
}

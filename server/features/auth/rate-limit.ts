import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import {
  LOGIN_ACCOUNT_FAILURES_PER_HOUR,
  LOGIN_FAILURES_PER_MINUTE,
  RATE_WINDOW_MS,
  REGISTRATION_MAILS_PER_HOUR,
  REGISTRATIONS_PER_ADDRESS_PER_HOUR,
  REGISTRATIONS_PER_HOUR,
  RESET_MAILS_PER_HOUR,
} from '../../lib/limits';

const HOUR_MS = 3_600_000;

/**
 * Which attempts count together. Sign-in (login, Basic) per account and address pair and per account;
 * the second step per account and address; sudo per user and address; pairing claims and password-reset
 * requests per address; reset and registration mails per target address; registrations per address and
 * in all.
 */
export type RateScope =
  | 'login'
  | 'login-account'
  | 'login-known'
  | 'mfa'
  | 'sudo'
  | 'pairing'
  | 'reset-request'
  | 'reset-mail'
  | 'register'
  | 'register-all'
  | 'register-mail';

/**
 * Attempts per key in a sliding window (contract, "Security defaults": 10 failed sign-ins a minute).
 * In memory on purpose: a restart forgets them, which costs an attacker a restart they cannot cause.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly ctx: AppContext,
    private readonly max = LOGIN_FAILURES_PER_MINUTE,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  /** Throws 429 with Retry-After when the address has used up its failures. */
  check(key: string): void {
    const now = this.ctx.clock.now();
    const list = this.recent(key, now);
    if (list.length >= this.max) {
      const retryMs = list[0]! + this.windowMs - now;
      throw errors.retryLater('too many failed attempts', retryMs / 1000);
    }
  }

  /** Counts one attempt now; returns its time, which refund() takes back. */
  fail(key: string): number {
    const now = this.ctx.clock.now();
    const list = this.recent(key, now);
    list.push(now);
    this.failures.set(key, list);
    if (this.failures.size > 10_000) this.sweep(now);
    return now;
  }

  /** Takes back an attempt counted by fail() (it turned out right, or did not count). */
  refund(key: string, at: number): void {
    const list = this.failures.get(key);
    const i = list?.lastIndexOf(at) ?? -1;
    if (!list || i < 0) return;
    list.splice(i, 1);
    if (list.length === 0) this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  private sweep(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
  }
}

/**
 * Password-reset mail: every request from an address counts (10 a minute, then 429, whether or not the
 * email exists), and one account gets at most 3 reset mails an hour (further requests still answer 200,
 * silently), so the endpoint cannot be used to flood someone's inbox or to probe addresses.
 */
const SCOPE_LIMITS: Partial<Record<RateScope, [number, number]>> = {
  'reset-request': [LOGIN_FAILURES_PER_MINUTE, RATE_WINDOW_MS],
  'reset-mail': [RESET_MAILS_PER_HOUR, HOUR_MS],
  'login-account': [LOGIN_ACCOUNT_FAILURES_PER_HOUR, HOUR_MS],
  register: [REGISTRATIONS_PER_ADDRESS_PER_HOUR, HOUR_MS],
  'register-all': [REGISTRATIONS_PER_HOUR, HOUR_MS],
  'register-mail': [REGISTRATION_MAILS_PER_HOUR, HOUR_MS],
};

const limiters = new WeakMap<AppContext, Map<RateScope, FailureLimiter>>();

export function limiter(ctx: AppContext, scope: RateScope): FailureLimiter {
  let byScope = limiters.get(ctx);
  if (!byScope) {
    byScope = new Map();
    limiters.set(ctx, byScope);
  }
  let l = byScope.get(scope);
  if (!l) {
    l = new FailureLimiter(ctx, ...(SCOPE_LIMITS[scope] ?? []));
    byScope.set(scope, l);
  }
  return l;
}

/** One count an attempt is held to: the scope and the key within it (an address, an account, a pair). */
export type RateKey = readonly [scope: RateScope, key: string];

/**
 * The keys of a sign-in attempt (login, Basic): the account with the client address, and the account.
 * A known client (a browser holding the known-client cookie of this account, auth/cookie.ts) is counted
 * apart, under its cookie's nonce only: failures of anyone else, even from its address, never reach it.
 */
export function signInKeys(email: string, address: string, knownNonce: string | null = null): RateKey[] {
  const account = email.trim().toLowerCase();
  if (knownNonce) return [['login-known', `${account}\n${knownNonce}`]];
  return [
    ['login', `${account}\n${address}`],
    ['login-account', account],
  ];
}

/** The key of a sudo confirmation or a password change (old password): the user with the client address. */
export function sudoKeys(userId: number, address: string): RateKey[] {
  return [['sudo', `${userId}\n${address}`]];
}

/** A wrong password or code counts; a right password that still needs a second factor does not. */
function wrongCredential(err: unknown): boolean {
  const e = err as { status?: unknown; description?: unknown };
  return (e.status === 400 || e.status === 401) && e.description !== 'second factor required';
}

/** Refused with 429 when any of the keys has used up its attempts (Retry-After: the longest wait). */
function checkAll(ctx: AppContext, keys: readonly RateKey[]): void {
  let refusal: unknown;
  let wait = -1;
  for (const [scope, key] of keys) {
    try {
      limiter(ctx, scope).check(key);
    } catch (err) {
      const retry = Number((err as { headers?: Record<string, string> }).headers?.['Retry-After'] ?? 0);
      if (retry > wait) [refusal, wait] = [err, retry];
    }
  }
  if (refusal) throw refusal;
}

/**
 * Counts one attempt under every key, or refuses it with 429 (nothing counted) when any key is spent
 * (checkAll). Returns what takes the attempt back.
 */
export function take(ctx: AppContext, keys: readonly RateKey[]): () => void {
  checkAll(ctx, keys);
  const taken = keys.map(([scope, key]) => {
    const l = limiter(ctx, scope);
    const at = l.fail(key);
    return () => l.refund(key, at);
  });
  return () => {
    for (const t of taken) t();
  };
}

/** take() for answers that must not differ when spent: false (nothing counted) instead of the 429. */
export function takeQuietly(ctx: AppContext, keys: readonly RateKey[]): boolean {
  try {
    take(ctx, keys);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs an attempt under its keys' limits. The attempt is counted BEFORE it is evaluated (a password
 * check awaits bcrypt, and counting afterwards let every concurrent guess through the check), and
 * refunded when it succeeds or fails in a way that does not count (`counts`; by default a 400 or 401
 * other than `second factor required`).
 */
export async function limited<T>(
  ctx: AppContext,
  keys: readonly RateKey[],
  attempt: () => T | Promise<T>,
  counts: (err: unknown) => boolean = wrongCredential,
): Promise<T> {
  const refund = take(ctx, keys);
  let result: T;
  try {
    result = await attempt();
  } catch (err) {
    if (!counts(err)) refund();
    throw err;
  }
  refund();
  return result;
}

import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { LOGIN_FAILURES_PER_MINUTE, RATE_WINDOW_MS, RESET_MAILS_PER_HOUR } from '../../lib/limits';

/** Which failures count together: sign-in (login and Basic), the second step, sudo confirmation. */
export type RateScope = 'login' | 'mfa' | 'sudo' | 'reset-request' | 'reset-mail';

/**
 * Failed attempts per source address in a sliding window (contract, "Security defaults": 10 a minute).
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
      throw errors.tooManyRequests('too many failed attempts; try again later', retryMs / 1000);
    }
  }

  fail(key: string): void {
    const now = this.ctx.clock.now();
    const list = this.recent(key, now);
    list.push(now);
    this.failures.set(key, list);
    if (this.failures.size > 10_000) this.sweep(now);
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
  'reset-mail': [RESET_MAILS_PER_HOUR, 3_600_000],
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

/** Runs an attempt under the scope's limit: refused with 429 when spent, counted when it throws 4xx. */
export async function limited<T>(
  ctx: AppContext,
  scope: RateScope,
  ip: string,
  attempt: () => T | Promise<T>,
): Promise<T> {
  const l = limiter(ctx, scope);
  l.check(ip);
  try {
    return await attempt();
  } catch (err) {
    // A wrong password or code counts; a right password that still needs a second factor does not.
    const e = err as { status?: unknown; description?: unknown };
    if ((e.status === 400 || e.status === 401) && e.description !== 'second factor required') l.fail(ip);
    throw err;
  }
}

import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { avatarUrl } from '../avatars/service';
import { mfaEnabled } from '../mfa/service';
import { storageSnapshot, userCounters } from '../quota/service';
import { findUserById, type UserRow } from '../users/store';

export type ResourceCounter = 'heartbeatCounter' | 'monitorCounter' | 'webScriptCounter';

/**
 * Families that own heartbeats, monitors and web scripts register how many a user has; until they do,
 * the counter is 0. Keyed by context so several servers in one process stay apart.
 */
const counters = new WeakMap<AppContext, Map<ResourceCounter, (userId: number) => number>>();

export function registerUserCounter(
  ctx: AppContext,
  name: ResourceCounter,
  count: (userId: number) => number,
): void {
  let m = counters.get(ctx);
  if (!m) {
    m = new Map();
    counters.set(ctx, m);
  }
  m.set(name, count);
}

function resourceCount(ctx: AppContext, name: ResourceCounter, userId: number): number {
  const fn = counters.get(ctx)?.get(name);
  if (!fn) return 0;
  try {
    return fn(userId);
  } catch (err) {
    ctx.log.warn('user counter failed', { name, err });
    return 0;
  }
}

/** The User of the spec plus `name` (the email; contract, "Compatibility"). */
export function presentCurrentUser(ctx: AppContext, user: UserRow) {
  const { eventCounter, messageCounter } = userCounters(ctx, user.id);
  return {
    id: user.id,
    name: user.email,
    email: user.email,
    admin: user.admin === 1,
    verified: user.verified === 1,
    plan: user.plan,
    eventCounter,
    messageCounter,
    heartbeatCounter: resourceCount(ctx, 'heartbeatCounter', user.id),
    monitorCounter: resourceCount(ctx, 'monitorCounter', user.id),
    webScriptCounter: resourceCount(ctx, 'webScriptCounter', user.id),
    balanceKopecks: user.balance_kopecks,
    storageBytes: storageSnapshot(ctx, user.id, user.image).totalBytes,
    image: avatarUrl(ctx, user.image),
    mfaEnabled: mfaEnabled(ctx, user.id),
  };
}

export function currentUserRow(ctx: AppContext, userId: number): UserRow {
  const user = findUserById(ctx.db, userId);
  if (!user) throw errors.unauthorized();
  return user;
}

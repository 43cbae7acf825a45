import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import type { PlanLimits, PlanName } from '../../lib/limits';
import { findUserById } from '../users/store';
import { CAP_KINDS, type CapKind, configBytes, countOf } from './store';

export type { CapKind };

const NAMES: Record<CapKind, string> = {
  channels: 'channels',
  webhooks: 'public webhooks',
  channelKeys: 'channel keys',
  shares: 'shares',
  apiTokens: 'API tokens',
};

export function planLimitsOf(ctx: AppContext, userId: number): { plan: PlanName; limits: PlanLimits } {
  const user = findUserById(ctx.db, userId);
  if (!user) throw errors.notFound('user');
  return { plan: user.plan, limits: ctx.config.plans[user.plan] };
}

type UserPlan = ReturnType<typeof planLimitsOf>;

function assertRoomFor(ctx: AppContext, userId: number, { plan, limits }: UserPlan, kind: CapKind): void {
  if (countOf(ctx.db, userId, kind) >= limits[kind])
    throw errors.planLimit(`at most ${limits[kind]} ${NAMES[kind]} on the ${plan} plan`);
}

/** 403 when the user's configuration bytes (plus `room`) exceed the plan, unless they did not grow from `before`. */
function assertBytes(
  ctx: AppContext,
  userId: number,
  { plan, limits }: UserPlan,
  room: 0 | 1,
  before = Number.NEGATIVE_INFINITY,
): void {
  const now = configBytes(ctx.db, userId);
  if (now + room > limits.configBytes && now > before)
    throw errors.planLimit(`at most ${limits.configBytes} bytes of configuration on the ${plan} plan`);
}

/**
 * Before creating one more `kind` (shares, API tokens): 403 `plan limit reached: …` when the user already
 * has as many as the plan allows, or has no configuration bytes left. Synchronous: call it right before
 * the insert, with no await in between.
 */
export function assertWithinPlan(ctx: AppContext, userId: number, kind: CapKind): void {
  const plan = planLimitsOf(ctx, userId);
  assertRoomFor(ctx, userId, plan, kind);
  assertBytes(ctx, userId, plan, 1);
}

/**
 * Runs a write of the user's configuration in one transaction: with `kind` (a create), first checks there
 * is room for one more; after the write, checks the user's configuration bytes against the plan (beyond
 * them the write is rolled back and 403). Measuring after the write counts exactly what is stored. An
 * update (`kind` null) that does not grow the total is always allowed, so a user over the cap after a
 * downgrade can still trim.
 */
export function writeWithinPlan<T>(ctx: AppContext, userId: number, kind: CapKind | null, write: () => T): T {
  return ctx.db.transaction(() => {
    const plan = planLimitsOf(ctx, userId);
    if (kind) assertRoomFor(ctx, userId, plan, kind);
    const before = kind ? undefined : configBytes(ctx.db, userId);
    const result = write();
    assertBytes(ctx, userId, plan, 0, before);
    return result;
  });
}

/** 400 when one webhook's title and text are beyond the plan's `webhookTemplateBytes`. */
export function assertWebhookTemplate(ctx: AppContext, userId: number, title: string, text: string): void {
  const { plan, limits } = planLimitsOf(ctx, userId);
  if (Buffer.byteLength(title) + Buffer.byteLength(text) > limits.webhookTemplateBytes)
    throw errors.badRequest(
      `title and text: at most ${limits.webhookTemplateBytes} bytes together on the ${plan} plan`,
    );
}

export type PlanCaps = Record<CapKind | 'configBytes', { used: number; limit: number }> & {
  webhookTemplateBytes: { limit: number };
};

/** The plan's caps with what the user has of each, for `GET /user/quota-breakdown`. */
export function planCaps(ctx: AppContext, userId: number): PlanCaps {
  const { limits } = planLimitsOf(ctx, userId);
  const caps = {
    configBytes: { used: configBytes(ctx.db, userId), limit: limits.configBytes },
    webhookTemplateBytes: { limit: limits.webhookTemplateBytes },
  } as PlanCaps;
  for (const kind of CAP_KINDS) caps[kind] = { used: countOf(ctx.db, userId, kind), limit: limits[kind] };
  return caps;
}

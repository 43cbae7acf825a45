import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { type PlanName, planRank } from '../../lib/limits';
import { addBalance, setPlan, type UserRow } from '../users/store';

export const TOPUP_MAX_RUBLES = 1_000_000;

/** `POST /current/user/plan`: keep or downgrade at once; an upgrade waits for payment (402). */
export function changeOwnPlan(ctx: AppContext, user: UserRow, plan: PlanName): void {
  if (planRank(plan) > planRank(user.plan)) throw errors.paymentRequired('plan upgrade requires payment');
  if (plan !== user.plan) ctx.db.transaction(() => setPlan(ctx.db, user.id, plan));
}

/**
 * `POST /current/user/topup`: there is no payment gateway. A user gets 402 with the bank-transfer
 * instructions; an administrator (the operator) credits their own balance at once.
 */
export function topUp(ctx: AppContext, user: UserRow, amountRubles: number): void {
  if (user.admin !== 1)
    throw errors.paymentRequired('top-up requires payment by bank transfer', {
      message: `To add ${amountRubles} RUB to your balance, pay by bank transfer; an operator credits your balance once the payment arrives.`,
      amountRubles,
      paymentMethod: 'bank_transfer',
    });
  ctx.db.transaction(() => addBalance(ctx.db, user.id, Math.round(amountRubles * 100)));
}

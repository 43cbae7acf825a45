import type { AppContext } from '../../context';
import { DELIVERY_DELAY_DEFAULT_SEC } from '../../lib/limits';
import { insertRedelivery } from './store';

/**
 * The enqueue hook of the one message writing path (messages/service.ts insertAll), inside its
 * transaction (§6.1 first row): one `redelivery` entry per enabled adapter whose `minPriority` the
 * message reaches, due at `date + delaySec`. A channel without deliveryConfig costs one string compare
 * (`'{}'`): no query, no parse. A configured channel's plan is parsed once per distinct config text.
 */
export interface RedeliveryPlan {
  adapters: readonly { name: string; minPriority: number; delaySec: number }[];
}

/** Distinct config texts kept parsed (a config is small; the map is cleared when it grows past this). */
const PLAN_CACHE_MAX = 1_000;
const plans = new Map<string, RedeliveryPlan | null>();

/** The adapters a message of this channel may be re-delivered through, or null (none: the fast path). */
export function redeliveryPlan(deliveryConfigColumn: string): RedeliveryPlan | null {
  if (deliveryConfigColumn === '{}') return null;
  const cached = plans.get(deliveryConfigColumn);
  if (cached !== undefined) return cached;
  // enabled/minPriority/delaySec are never sealed (only secrets are): the column is read as stored.
  const config = JSON.parse(deliveryConfigColumn) as Record<string, Record<string, unknown>>;
  const adapters = Object.entries(config)
    .filter(([, c]) => c.enabled !== false)
    .map(([name, c]) => ({
      name,
      minPriority: typeof c.minPriority === 'number' ? c.minPriority : 0,
      delaySec: typeof c.delaySec === 'number' ? c.delaySec : DELIVERY_DELAY_DEFAULT_SEC,
    }));
  const plan = adapters.length > 0 ? { adapters } : null;
  if (plans.size >= PLAN_CACHE_MAX) plans.clear();
  plans.set(deliveryConfigColumn, plan);
  return plan;
}

/** Queues the message's re-deliveries (inside the caller's transaction) and arms the due timer. */
export function enqueueRedelivery(
  ctx: AppContext,
  plan: RedeliveryPlan,
  m: { ownerId: number; appid: number; messageId: number; priority: number; date: number; now: number },
): void {
  let first: number | null = null;
  for (const a of plan.adapters) {
    if (m.priority < a.minPriority) continue;
    const at = m.date + a.delaySec * 1000;
    insertRedelivery(ctx.db, m.ownerId, m.appid, m.messageId, a.name, m.now, at);
    if (first === null || at < first) first = at;
  }
  // Harmless before commit: the timer only decides when to look; a rolled-back row is simply not found.
  if (first !== null) ctx.due.poke(first);
}

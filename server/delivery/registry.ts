import type { AppContext } from '../context';
import type { DeliveryAdapter } from './adapter';
import { callAdapter } from './adapters/call';
import { discordAdapter } from './adapters/discord';
import { emailAdapter } from './adapters/email';
import { mattermostAdapter } from './adapters/mattermost';
import { opsgenieAdapter } from './adapters/opsgenie';
import { pagerdutyAdapter } from './adapters/pagerduty';
import { slackAdapter } from './adapters/slack';
import { smsAdapter } from './adapters/sms';
import { teamsAdapter } from './adapters/teams';
import { telegramAdapter } from './adapters/telegram';
import { webhookAdapter } from './adapters/webhook';

/**
 * The one list of delivery adapters (filled by server/delivery/adapters/*). Order is the order the UI
 * shows them in. Tests may replace an adapter of one server with `overrideAdapter` (a recording fake),
 * so the outbox's state machine is tested without the network.
 */
export const DELIVERY_ADAPTER_LIST: readonly DeliveryAdapter[] = [
  emailAdapter,
  smsAdapter,
  callAdapter,
  slackAdapter,
  discordAdapter,
  teamsAdapter,
  mattermostAdapter,
  telegramAdapter,
  webhookAdapter,
  pagerdutyAdapter,
  opsgenieAdapter,
];

const overrides = new WeakMap<AppContext, Map<string, DeliveryAdapter>>();

/** The adapter of that name for this server (an override first), or undefined. */
export function adapterNamed(ctx: AppContext | null, name: string): DeliveryAdapter | undefined {
  const o = ctx ? overrides.get(ctx)?.get(name) : undefined;
  return o ?? DELIVERY_ADAPTER_LIST.find((a) => a.name === name);
}

export function adapterNames(): string[] {
  return DELIVERY_ADAPTER_LIST.map((a) => a.name);
}

/** Test hook: this server sends `name` through `adapter` instead (its schema and secrets stay the real one's). */
export function overrideAdapter(ctx: AppContext, name: string, adapter: DeliveryAdapter): void {
  let m = overrides.get(ctx);
  if (!m) {
    m = new Map();
    overrides.set(ctx, m);
  }
  m.set(name, adapter);
}

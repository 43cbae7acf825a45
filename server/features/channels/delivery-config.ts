import { z } from 'zod';
import { errors } from '../../http/errors';
import {
  DELIVERY_DELAY_DEFAULT_SEC,
  DELIVERY_DELAY_MAX_SEC,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../lib/limits';

/**
 * `deliveryConfig` of a channel: one validated settings object per re-delivery adapter (spec "Channel";
 * conventions habit 10: kinds behind one registry). The adapters that send come in a later version; this
 * registry is where they will hang their schema. Secrets are masked in output; the mask sent back in an
 * update keeps the stored secret.
 */
export const SECRET_MASK = '********';

const common = {
  enabled: z.boolean().default(true),
  minPriority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).default(PRIORITY_MIN),
  delaySec: z.number().int().min(0).max(DELIVERY_DELAY_MAX_SEC).default(DELIVERY_DELAY_DEFAULT_SEC),
};
const httpsUrl = z.url({ protocol: /^https?$/ }).max(2000);
const secret = z.string().min(1).max(2000);
const region = z.enum(['us', 'eu']).default('us');
const phone = z.string().regex(/^\+?[0-9]{6,16}$/, 'expected a phone number');
const twilio = z.strictObject({
  ...common,
  provider: z.literal('twilio').default('twilio'),
  accountSid: z.string().min(1).max(100),
  authToken: secret,
  from: phone,
  to: phone,
});

interface AdapterConfig {
  schema: z.ZodType<Record<string, unknown>>;
  /** Top-level fields holding secrets. */
  secrets: readonly string[];
}

export const DELIVERY_ADAPTERS: Readonly<Record<string, AdapterConfig>> = {
  email: { schema: z.strictObject({ ...common, to: z.array(z.email()).min(1).max(10) }), secrets: [] },
  sms: { schema: twilio, secrets: ['authToken'] },
  call: { schema: twilio, secrets: ['authToken'] },
  slack: { schema: z.strictObject({ ...common, webhookUrl: httpsUrl }), secrets: ['webhookUrl'] },
  discord: { schema: z.strictObject({ ...common, webhookUrl: httpsUrl }), secrets: ['webhookUrl'] },
  teams: { schema: z.strictObject({ ...common, webhookUrl: httpsUrl }), secrets: ['webhookUrl'] },
  mattermost: {
    schema: z.strictObject({
      ...common,
      webhookUrl: httpsUrl,
      channel: z.string().max(200).optional(),
      username: z.string().max(200).optional(),
    }),
    secrets: ['webhookUrl'],
  },
  telegram: {
    schema: z.strictObject({
      ...common,
      botToken: secret,
      chatId: z.union([z.string().min(1).max(100), z.number().int()]),
    }),
    secrets: ['botToken'],
  },
  webhook: {
    schema: z.strictObject({
      ...common,
      url: httpsUrl,
      secret: secret.optional(),
      headers: z.record(z.string().max(200), z.string().max(2000)).optional(),
    }),
    secrets: ['secret'],
  },
  pagerduty: { schema: z.strictObject({ ...common, routingKey: secret, region }), secrets: ['routingKey'] },
  opsgenie: { schema: z.strictObject({ ...common, apiKey: secret, region }), secrets: ['apiKey'] },
};

export type DeliveryConfig = Record<string, Record<string, unknown>>;

/**
 * Validates an incoming deliveryConfig. A secret equal to the mask keeps the stored value (so a client
 * can send back what it read); a mask with nothing stored is a 400.
 */
export function validateDeliveryConfig(input: unknown, stored: DeliveryConfig = {}): DeliveryConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw errors.badRequest('deliveryConfig: expected an object');
  const out: DeliveryConfig = {};
  for (const [name, raw] of Object.entries(input as Record<string, unknown>)) {
    const adapter = DELIVERY_ADAPTERS[name];
    if (!adapter)
      throw errors.badRequest(
        `deliveryConfig.${name}: unknown adapter (known: ${Object.keys(DELIVERY_ADAPTERS).join(', ')})`,
      );
    let value = raw;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      const copy: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
      for (const key of adapter.secrets) {
        if (copy[key] !== SECRET_MASK) continue;
        const kept = stored[name]?.[key];
        if (kept === undefined)
          throw errors.badRequest(`deliveryConfig.${name}.${key}: no stored secret to keep`);
        copy[key] = kept;
      }
      value = copy;
    }
    const parsed = adapter.schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = ['deliveryConfig', name, ...issue.path.map(String)].join('.');
      throw errors.badRequest(`${path}: ${issue.message}`);
    }
    out[name] = parsed.data;
  }
  return out;
}

/** For output: every secret replaced by the mask. */
export function maskDeliveryConfig(config: DeliveryConfig): DeliveryConfig {
  const out: DeliveryConfig = {};
  for (const [name, value] of Object.entries(config)) {
    const copy = { ...value };
    for (const key of DELIVERY_ADAPTERS[name]?.secrets ?? [])
      if (copy[key] !== undefined) copy[key] = SECRET_MASK;
    out[name] = copy;
  }
  return out;
}

export function enabledAdapters(config: DeliveryConfig): string[] {
  return Object.entries(config)
    .filter(([, v]) => v.enabled !== false)
    .map(([k]) => k);
}

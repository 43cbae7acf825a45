import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { apiBase, commonFields, cut, region, secretString } from './common';

/** Opsgenie's limits on `message` and `description`. */
export const OPSGENIE_MESSAGE_MAX = 130;
export const OPSGENIE_DESCRIPTION_MAX = 15_000;

export function opsgeniePriority(priority: number): string {
  return priority >= 9 ? 'P1' : priority >= 7 ? 'P2' : priority >= 5 ? 'P3' : priority >= 3 ? 'P4' : 'P5';
}

/** §6.2 opsgenie: alert `belfry-msg-{id}` (digests/tests: by outbox entry), P1–P5 by priority. */
export function opsgenieBody(item: DeliveryItem): Record<string, unknown> {
  const details: Record<string, string> = { channel: item.channel.name, link: item.links.message };
  if (item.links.read) details.readUrl = item.links.read;
  return {
    message: cut(item.title || item.message || 'Belfry', OPSGENIE_MESSAGE_MAX),
    alias: item.messageId !== null ? `belfry-msg-${item.messageId}` : `belfry-${item.kind}-${item.outboxId}`,
    description: cut(item.message, OPSGENIE_DESCRIPTION_MAX),
    priority: opsgeniePriority(item.priority),
    source: 'Belfry',
    details,
  };
}

export const opsgenieAdapter: DeliveryAdapter = {
  name: 'opsgenie',
  schema: z.strictObject({ ...commonFields, apiKey: secretString, region }),
  secrets: ['apiKey'],
  async send(io, config, item) {
    const key = config.apiKey as string;
    const fallback = config.region === 'eu' ? 'https://api.eu.opsgenie.com' : 'https://api.opsgenie.com';
    await deliveryPost(io, {
      url: `${apiBase(io.ctx, 'opsgenie', fallback)}/v2/alerts`,
      json: opsgenieBody(item),
      headers: { Authorization: `GenieKey ${key}` },
      secrets: [key],
    });
  },
};

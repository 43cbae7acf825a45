import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { apiBase, commonFields, cut, isoDate, itemLinks, oneLine, region, secretString } from './common';

/** PagerDuty's limit on `payload.summary`. */
export const PAGERDUTY_SUMMARY_MAX = 1024;

export function pagerdutySeverity(priority: number): 'critical' | 'error' | 'warning' | 'info' {
  return priority >= 9 ? 'critical' : priority >= 7 ? 'error' : priority >= 4 ? 'warning' : 'info';
}

/** §6.2 pagerduty: an Events API v2 `trigger` keyed `belfry-msg-{id}` (digests/tests: by outbox entry). */
export function pagerdutyBody(item: DeliveryItem, routingKey: string): Record<string, unknown> {
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key:
      item.messageId !== null ? `belfry-msg-${item.messageId}` : `belfry-${item.kind}-${item.outboxId}`,
    payload: {
      summary: cut(oneLine(item), PAGERDUTY_SUMMARY_MAX),
      source: 'belfry',
      severity: pagerdutySeverity(item.priority),
      timestamp: isoDate(item),
      group: item.channel.name,
      custom_details: { channel: item.channel.name, priority: item.priority, message: item.message },
    },
    client: 'Belfry',
    client_url: item.links.message,
    links: itemLinks(item).map((l) => ({ href: l.url, text: l.label })),
  };
}

export const pagerdutyAdapter: DeliveryAdapter = {
  name: 'pagerduty',
  schema: z.strictObject({ ...commonFields, routingKey: secretString, region }),
  secrets: ['routingKey'],
  async send(io, config, item) {
    const key = config.routingKey as string;
    const fallback =
      config.region === 'eu' ? 'https://events.eu.pagerduty.com' : 'https://events.pagerduty.com';
    await deliveryPost(io, {
      url: `${apiBase(io.ctx, 'pagerduty', fallback)}/v2/enqueue`,
      json: pagerdutyBody(item, key),
      secrets: [key],
    });
  },
};

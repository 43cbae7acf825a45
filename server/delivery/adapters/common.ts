import { z } from 'zod';
import type { AppContext } from '../../context';
import {
  DELIVERY_DELAY_DEFAULT_SEC,
  DELIVERY_DELAY_MAX_SEC,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../lib/limits';
import type { DeliveryItem } from '../adapter';

/** The fields every adapter object has (docs/api.md "deliveryConfig"). */
export const commonFields = {
  enabled: z.boolean().default(true),
  minPriority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).default(PRIORITY_MIN),
  delaySec: z.number().int().min(0).max(DELIVERY_DELAY_MAX_SEC).default(DELIVERY_DELAY_DEFAULT_SEC),
};
export const httpsUrl = z.url({ protocol: /^https?$/ }).max(2000);
export const secretString = z.string().min(1).max(2000);
export const region = z.enum(['us', 'eu']).default('us');

/** `{...common, webhookUrl}`: Slack, Discord and Teams (the URL is the secret). */
export const webhookUrlSchema = z.strictObject({ ...commonFields, webhookUrl: httpsUrl });

/** Base URL of a public API: BELFRY_DELIVERY_API_URLS replaces every region's (tests: loopback fakes). */
export function apiBase(
  ctx: AppContext,
  name: 'telegram' | 'pagerduty' | 'opsgenie' | 'twilio',
  fallback: string,
): string {
  return ctx.config.deliveryApiUrls[name] ?? fallback;
}

/** `text` cut to `max` characters (code points), ending with `…` when cut. */
export function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `[{channel}] {title}: {message}` (SMS, PagerDuty). */
export function oneLine(item: DeliveryItem): string {
  return `[${item.channel.name}] ${item.title}: ${item.message}`;
}

/** The link buttons of a chat message: Open always, Mark as read when there is a read link. */
export function itemLinks(item: DeliveryItem): { label: string; url: string }[] {
  const out = [{ label: 'Open', url: item.links.message }];
  if (item.links.read) out.push({ label: 'Mark as read', url: item.links.read });
  return out;
}

/** The message date as RFC 3339 (UTC). */
export function isoDate(item: DeliveryItem): string {
  return new Date(item.date).toISOString();
}

import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { signatureHeaders } from '../signature';
import { commonFields, httpsUrl, secretString } from './common';

export const WEBHOOK_HEADERS_MAX = 20;
const headers = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/, 'expected an HTTP header name'),
    z
      .string()
      .max(2000)
      .regex(/^[^\r\n\0]*$/, 'a header value cannot contain line breaks'),
  )
  .refine((h) => Object.keys(h).length <= WEBHOOK_HEADERS_MAX, `at most ${WEBHOOK_HEADERS_MAX} headers`);

const EVENTS = { redelivery: 'message.redelivery', digest: 'digest', test: 'delivery.test' } as const;

/** §6.2 webhook body. */
export function webhookBody(item: DeliveryItem): Record<string, unknown> {
  return {
    event: EVENTS[item.kind],
    message: {
      id: item.messageId,
      appid: item.channel.id,
      title: item.title,
      message: item.message,
      priority: item.priority,
      date: new Date(item.date).toISOString(),
      ...(item.extras ? { extras: item.extras } : {}),
    },
    channel: { id: item.channel.id, name: item.channel.name },
    links: { message: item.links.message, read: item.links.read },
  };
}

/** Headers the configured ones cannot replace (the receiver's de-duplication and signature check). */
const OWN_HEADERS = /^(x-belfry-|content-type$|content-length$|host$)/i;

export const webhookAdapter: DeliveryAdapter = {
  name: 'webhook',
  schema: z.strictObject({
    ...commonFields,
    url: httpsUrl,
    secret: secretString.optional(),
    headers: headers.optional(),
  }),
  secrets: ['secret'],
  secretMaps: ['headers'],
  url: 'url',
  async send(io, config, item) {
    const body = JSON.stringify(webhookBody(item));
    const configured = (config.headers ?? {}) as Record<string, string>;
    const secret = config.secret as string | undefined;
    await deliveryPost(io, {
      url: config.url as string,
      jsonText: body,
      headers: {
        ...Object.fromEntries(Object.entries(configured).filter(([k]) => !OWN_HEADERS.test(k))),
        'X-Belfry-Event': EVENTS[item.kind],
        'X-Belfry-Delivery': String(item.outboxId),
        ...signatureHeaders(secret, io.ctx.clock.now(), body),
      },
      secrets: [...Object.values(configured), ...(secret ? [secret] : [])],
    });
  },
};

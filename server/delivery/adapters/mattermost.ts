import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { commonFields, httpsUrl, itemLinks } from './common';

/** §6.2 mattermost: Markdown text with the links; `channel` and `username` when configured. */
export function mattermostBody(item: DeliveryItem, config: Record<string, unknown>): Record<string, unknown> {
  const links = itemLinks(item)
    .map((l) => `[${l.label}](${l.url})`)
    .join(' · ');
  return {
    text: `#### ${item.title}\n${item.message}\n\n${links}`,
    ...(typeof config.channel === 'string' && config.channel !== '' ? { channel: config.channel } : {}),
    ...(typeof config.username === 'string' && config.username !== '' ? { username: config.username } : {}),
  };
}

export const mattermostAdapter: DeliveryAdapter = {
  name: 'mattermost',
  schema: z.strictObject({
    ...commonFields,
    webhookUrl: httpsUrl,
    channel: z.string().max(200).optional(),
    username: z.string().max(200).optional(),
  }),
  secrets: ['webhookUrl'],
  async send(io, config, item) {
    await deliveryPost(io, { url: config.webhookUrl as string, json: mattermostBody(item, config) });
  },
};

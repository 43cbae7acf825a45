import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { cut, isoDate, webhookUrlSchema } from './common';

const RED = 0xe74c3c;
const ORANGE = 0xe67e22;
const GREY = 0x95a5a6;

/** §6.2 discord: one embed, mentions disabled (`@everyone` in a message pings nobody). */
export function discordBody(item: DeliveryItem): Record<string, unknown> {
  const read = item.links.read ? `\n[Mark as read](${item.links.read})` : '';
  return {
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(item.title, 256),
        description: `${cut(item.message, 4096 - read.length)}${read}`,
        url: item.links.message,
        color: item.priority >= 8 ? RED : item.priority >= 5 ? ORANGE : GREY,
        fields: [
          { name: 'Channel', value: cut(item.channel.name, 1024), inline: true },
          { name: 'Priority', value: String(item.priority), inline: true },
        ],
        timestamp: isoDate(item),
      },
    ],
  };
}

export const discordAdapter: DeliveryAdapter = {
  name: 'discord',
  schema: webhookUrlSchema,
  secrets: ['webhookUrl'],
  async send(io, config, item) {
    await deliveryPost(io, { url: config.webhookUrl as string, json: discordBody(item) });
  },
};

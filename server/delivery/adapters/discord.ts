import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { cut, isoDate, markdownLinks, questionParts, webhookUrlSchema } from './common';

/** Embed description limit, and the part of it a question's answer links may take (the rest: the message). */
const DISCORD_DESCRIPTION_MAX = 4096;
export const DISCORD_ANSWERS_MAX = 3000;

const RED = 0xe74c3c;
const ORANGE = 0xe67e22;
const GREY = 0x95a5a6;

/**
 * §6.2 discord: one embed, mentions disabled (`@everyone` in a message pings nobody). A webhook that no
 * application owns cannot send buttons, so a question's answers are Markdown links in the description
 * (all of them when they fit in DISCORD_ANSWERS_MAX characters, else one "Answer in Belfry"), then its
 * options/deadline.
 */
export function discordBody(item: DeliveryItem, now?: number): Record<string, unknown> {
  const q = questionParts(item, now, (b) => markdownLinks(b).length <= DISCORD_ANSWERS_MAX);
  const answers = q
    ? [q.buttons.length ? markdownLinks(q.buttons) : '', ...q.lines].filter((l) => l !== '')
    : [];
  const question = answers.length ? `\n\n${answers.join('\n')}` : '';
  const read = item.links.read ? `\n[Mark as read](${item.links.read})` : '';
  const room = DISCORD_DESCRIPTION_MAX - [...question].length - [...read].length;
  return {
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(item.title, 256),
        description: `${cut(item.message, room)}${question}${read}`,
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
    await deliveryPost(io, { url: config.webhookUrl as string, json: discordBody(item, io.ctx.clock.now()) });
  },
};

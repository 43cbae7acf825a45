import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { apiBase, commonFields, cut, escapeHtml, itemLinks, questionParts, secretString } from './common';

/** Telegram's text limit (after entity parsing); the message is cut so the whole stays under it. */
export const TELEGRAM_TEXT_MAX = 4096;

/**
 * §6.2 telegram: HTML `<b>{title}</b>\n{message}`, inline keyboard, silent below priority 4. A question
 * adds its options/deadline in italics after the message and one keyboard row per answer button above
 * the Open / Mark read row (URL buttons; at most 10 options, well under the keyboard's 100 buttons).
 */
export function telegramBody(item: DeliveryItem, chatId: unknown, now?: number): Record<string, unknown> {
  const q = questionParts(item, now);
  const title = cut(item.title, 256);
  const notes = q?.lines.join('\n') ?? '';
  const room = TELEGRAM_TEXT_MAX - [...title].length - 1 - (notes ? [...notes].length + 2 : 0);
  return {
    chat_id: chatId,
    parse_mode: 'HTML',
    text: `<b>${escapeHtml(title)}</b>\n${escapeHtml(cut(item.message, room))}${notes && `\n\n<i>${escapeHtml(notes)}</i>`}`,
    disable_notification: item.priority < 4,
    reply_markup: {
      inline_keyboard: [
        ...(q?.buttons ?? []).map((b) => [{ text: b.label, url: b.url }]),
        itemLinks(item).map((l) => ({
          text: l.label === 'Mark as read' ? 'Mark read' : l.label,
          url: l.url,
        })),
      ],
    },
  };
}

export const telegramAdapter: DeliveryAdapter = {
  name: 'telegram',
  schema: z.strictObject({
    ...commonFields,
    botToken: secretString,
    chatId: z.union([z.string().min(1).max(100), z.number().int()]),
  }),
  secrets: ['botToken'],
  async send(io, config, item) {
    const token = config.botToken as string;
    const base = apiBase(io.ctx, 'telegram', 'https://api.telegram.org');
    await deliveryPost(io, {
      url: `${base}/bot${token}/sendMessage`,
      json: telegramBody(item, config.chatId, io.ctx.clock.now()),
      secrets: [token],
    });
  },
};

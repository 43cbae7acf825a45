import { z } from 'zod';
import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { commonFields, httpsUrl, itemLinks, markdownLinks, questionParts } from './common';

/**
 * §6.2 mattermost: Markdown text with the links; `channel` and `username` when configured. A question
 * adds a line of answer links (`**Answer:** [yes](…) · [no](…)`) and its options/deadline after the
 * message (a post holds 16,383 characters; ten option links take about 4,000 at most).
 */
export function mattermostBody(
  item: DeliveryItem,
  config: Record<string, unknown>,
  now?: number,
): Record<string, unknown> {
  const q = questionParts(item, now);
  const question = q
    ? [q.buttons.length ? `**Answer:** ${markdownLinks(q.buttons)}` : '', ...q.lines].filter((l) => l !== '')
    : [];
  const links = itemLinks(item)
    .map((l) => `[${l.label}](${l.url})`)
    .join(' · ');
  return {
    text: `#### ${item.title}\n${item.message}\n\n${question.length ? `${question.join('\n')}\n\n` : ''}${links}`,
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
    await deliveryPost(io, {
      url: config.webhookUrl as string,
      json: mattermostBody(item, config, io.ctx.clock.now()),
    });
  },
};

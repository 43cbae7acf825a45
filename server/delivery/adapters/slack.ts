import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { cut, itemLinks, webhookUrlSchema } from './common';

/** Slack's mrkdwn escaping of user text: `&`, `<`, `>`. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** §6.2 slack: fallback text and Block Kit header, section, context and link buttons. */
export function slackBody(item: DeliveryItem): Record<string, unknown> {
  return {
    text: cut(slackEscape(`${item.title}: ${item.message}`), 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(item.title || ' ', 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: cut(slackEscape(item.message) || ' ', 3000) } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: slackEscape(`${item.channel.name} · priority ${item.priority}`) }],
      },
      {
        type: 'actions',
        elements: itemLinks(item).map((l) => ({
          type: 'button',
          text: { type: 'plain_text', text: l.label },
          url: l.url,
        })),
      },
    ],
  };
}

export const slackAdapter: DeliveryAdapter = {
  name: 'slack',
  schema: webhookUrlSchema,
  secrets: ['webhookUrl'],
  async send(io, config, item) {
    await deliveryPost(io, { url: config.webhookUrl as string, json: slackBody(item) });
  },
};

import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { cut, itemLinks, questionParts, webhookUrlSchema } from './common';

/** Block Kit: a button's text ≤ 75 characters, an actions block ≤ 25 elements. */
const SLACK_BUTTON_TEXT_MAX = 75;
const SLACK_ACTIONS_MAX = 25;

/** Slack's mrkdwn escaping of user text: `&`, `<`, `>`. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * §6.2 slack: fallback text and Block Kit header, section, context and link buttons; a question adds a
 * section with its options/deadline and an actions block of answer buttons (the default one `primary`).
 */
export function slackBody(item: DeliveryItem, now?: number): Record<string, unknown> {
  const q = questionParts(item, now, (b) => b.length <= SLACK_ACTIONS_MAX);
  const button = (label: string, url: string, primary = false) => ({
    type: 'button',
    text: { type: 'plain_text', text: cut(label, SLACK_BUTTON_TEXT_MAX) },
    url,
    ...(primary ? { style: 'primary' } : {}),
  });
  const question: Record<string, unknown>[] = [];
  if (q?.lines.length)
    question.push({
      type: 'section',
      text: { type: 'mrkdwn', text: cut(slackEscape(q.lines.join('\n')), 3000) },
    });
  if (q?.buttons.length)
    question.push({
      type: 'actions',
      elements: q.buttons.map((b) => button(b.label, b.url, b.primary)),
    });
  return {
    text: cut(slackEscape(`${item.title}: ${item.message}`), 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(item.title || ' ', 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: cut(slackEscape(item.message) || ' ', 3000) } },
      ...question,
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: slackEscape(`${item.channel.name} · priority ${item.priority}`) }],
      },
      { type: 'actions', elements: itemLinks(item).map((l) => button(l.label, l.url)) },
    ],
  };
}

export const slackAdapter: DeliveryAdapter = {
  name: 'slack',
  schema: webhookUrlSchema,
  secrets: ['webhookUrl'],
  async send(io, config, item) {
    await deliveryPost(io, { url: config.webhookUrl as string, json: slackBody(item, io.ctx.clock.now()) });
  },
};

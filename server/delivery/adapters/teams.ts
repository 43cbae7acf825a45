import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { itemLinks, markdownLinks, questionParts, webhookUrlSchema } from './common';

/** Teams shows at most 6 actions of a set (more go to an overflow menu): answers are split into sets of 6. */
export const TEAMS_ACTIONS_PER_SET = 6;

/** A legacy Microsoft 365 connector URL (`*.webhook.office.com`): those take a MessageCard. */
export function isConnectorUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host === 'webhook.office.com' || host.endsWith('.webhook.office.com');
  } catch {
    return false;
  }
}

/**
 * §6.2 teams: an Adaptive Card 1.4 in the "message with attachments" envelope Workflows expect. A
 * question adds its options/deadline and `ActionSet`s of `Action.OpenUrl` answer buttons (the default
 * one `positive`) after the message; Open / Mark as read stay the card's actions.
 */
export function adaptiveCard(item: DeliveryItem, now?: number): Record<string, unknown> {
  const q = questionParts(item, now);
  const question: Record<string, unknown>[] = [];
  if (q?.lines.length)
    question.push({ type: 'TextBlock', text: q.lines.join('\n\n'), wrap: true, isSubtle: true });
  for (let i = 0; q && i < q.buttons.length; i += TEAMS_ACTIONS_PER_SET)
    question.push({
      type: 'ActionSet',
      actions: q.buttons.slice(i, i + TEAMS_ACTIONS_PER_SET).map((b) => ({
        type: 'Action.OpenUrl',
        title: b.label,
        url: b.url,
        ...(b.primary ? { style: 'positive' } : {}),
      })),
    });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', size: 'Large', weight: 'Bolder', text: item.title, wrap: true },
            { type: 'TextBlock', text: item.message, wrap: true },
            ...question,
            {
              type: 'FactSet',
              facts: [
                { title: 'Channel', value: item.channel.name },
                { title: 'Priority', value: String(item.priority) },
              ],
            },
          ],
          actions: itemLinks(item).map((l) => ({ type: 'Action.OpenUrl', title: l.label, url: l.url })),
        },
      },
    ],
  };
}

/**
 * The legacy connector's MessageCard (`summary` is required there). A connector card takes at most 4
 * `potentialAction`s, so a question's answers are Markdown links in a section of their own.
 */
export function messageCard(item: DeliveryItem, now?: number): Record<string, unknown> {
  const q = questionParts(item, now);
  const answers = q ? [markdownLinks(q.buttons), ...q.lines].filter((l) => l !== '') : [];
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: item.title || item.message.slice(0, 100) || 'Belfry',
    themeColor: item.priority >= 8 ? 'E74C3C' : item.priority >= 5 ? 'E67E22' : '95A5A6',
    title: item.title,
    text: item.message,
    sections: [
      ...(answers.length ? [{ text: answers.join('\n\n') }] : []),
      {
        facts: [
          { name: 'Channel', value: item.channel.name },
          { name: 'Priority', value: String(item.priority) },
        ],
      },
    ],
    potentialAction: itemLinks(item).map((l) => ({
      '@type': 'OpenUri',
      name: l.label,
      targets: [{ os: 'default', uri: l.url }],
    })),
  };
}

export const teamsAdapter: DeliveryAdapter = {
  name: 'teams',
  schema: webhookUrlSchema,
  secrets: ['webhookUrl'],
  async send(io, config, item) {
    const url = config.webhookUrl as string;
    const now = io.ctx.clock.now();
    await deliveryPost(io, {
      url,
      json: isConnectorUrl(url) ? messageCard(item, now) : adaptiveCard(item, now),
    });
  },
};

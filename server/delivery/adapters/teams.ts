import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { deliveryPost } from '../http';
import { itemLinks, webhookUrlSchema } from './common';

/** A legacy Microsoft 365 connector URL (`*.webhook.office.com`): those take a MessageCard. */
export function isConnectorUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host === 'webhook.office.com' || host.endsWith('.webhook.office.com');
  } catch {
    return false;
  }
}

/** §6.2 teams: an Adaptive Card 1.4 in the "message with attachments" envelope Workflows expect. */
export function adaptiveCard(item: DeliveryItem): Record<string, unknown> {
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

/** The legacy connector's MessageCard (`summary` is required there). */
export function messageCard(item: DeliveryItem): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: item.title || item.message.slice(0, 100) || 'Belfry',
    themeColor: item.priority >= 8 ? 'E74C3C' : item.priority >= 5 ? 'E67E22' : '95A5A6',
    title: item.title,
    text: item.message,
    sections: [
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
    await deliveryPost(io, { url, json: isConnectorUrl(url) ? messageCard(item) : adaptiveCard(item) });
  },
};

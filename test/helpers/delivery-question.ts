import type { DeliveryItem } from '../../server/delivery/adapter';
import { QUESTION_EXTRA } from '../../server/delivery/adapters/common';
import { sampleItem } from './delivery-io';

/** The question's deadline in the samples: an hour after the test clock's start (12:00 UTC). */
export const QUESTION_EXPIRES_AT = '2026-01-15T12:59:00.000Z';

/**
 * A signed answer link as the questions feature makes them (§7.4): `base64url(payload).base64url(mac)`
 * under this server's public URL, about as long as a real one.
 */
export function answerLink(option: string, questionId = 5): string {
  const payload = Buffer.from(
    JSON.stringify({ q: questionId, o: option, exp: Date.UTC(2026, 0, 16, 12, 59) }),
  ).toString('base64url');
  return `https://belfry.example.test/a/answer?token=${payload}.${'S'.repeat(43)}`;
}

/** The §7.1 extras of a question (a choice of yes / no / later unless told). */
export function questionExtras(over: Record<string, unknown> = {}): Record<string, unknown> {
  const options = (over.options as string[] | undefined) ?? ['yes', 'no', 'later'];
  const type = (over.type as string | undefined) ?? 'choice';
  return {
    id: 5,
    type,
    options,
    defaultOption: type === 'choice' ? options[0] : null,
    multiSelect: type === 'multi',
    fields: [],
    format: 'text',
    expiresAt: QUESTION_EXPIRES_AT,
    ...(type === 'choice' ? { links: Object.fromEntries(options.map((o) => [o, answerLink(o)])) } : {}),
    ...over,
  };
}

/** A re-delivery of message 42 that is a question (`extras["service::question"]`). */
export function questionItem(question: Record<string, unknown> = {}, over: Partial<DeliveryItem> = {}) {
  return sampleItem({
    title: 'Question',
    message: 'Restart db-07 now?',
    extras: {
      [QUESTION_EXTRA]: questionExtras(question),
      'client::notification': { click: { url: 'https://belfry.example.test/inbox?channel=7#message-42' } },
    },
    ...over,
  });
}

import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { cut, oneLine } from './common';
import { twilioPost, twilioSchema } from './twilio';

/** Characters of `[{channel}] {title}: {message}` in an SMS before the read link. */
export const SMS_TEXT_MAX = 300;

/** §6.2 sms: `[{channel}] {title}: {message}` cut to 300 characters + `\nRead: {readUrl}`. */
export function smsBody(item: DeliveryItem): string {
  const text = cut(oneLine(item), SMS_TEXT_MAX);
  return item.links.read ? `${text}\nRead: ${item.links.read}` : text;
}

export const smsAdapter: DeliveryAdapter = {
  name: 'sms',
  schema: twilioSchema,
  secrets: ['authToken'],
  send: (io, config, item) => twilioPost(io, config, 'Messages.json', { Body: smsBody(item) }),
};

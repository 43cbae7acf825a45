import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { cut, escapeHtml } from './common';
import { twilioPost, twilioSchema } from './twilio';

/** Characters of the spoken text of a call. */
export const CALL_TEXT_MAX = 500;

/** §6.2 call: inline TwiML `<Say loop="2">{channel}. {title}. {message}</Say>` (text ≤ 500 characters, XML-escaped). */
export function callTwiml(item: DeliveryItem): string {
  const said = cut(`${item.channel.name}. ${item.title}. ${item.message}`, CALL_TEXT_MAX);
  return `<Response><Say loop="2">${escapeHtml(said)}</Say></Response>`;
}

export const callAdapter: DeliveryAdapter = {
  name: 'call',
  schema: twilioSchema,
  secrets: ['authToken'],
  send: (io, config, item) => twilioPost(io, config, 'Calls.json', { Twiml: callTwiml(item) }),
};

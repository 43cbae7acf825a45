import type { DeliveryAdapter, DeliveryItem } from '../adapter';
import { type AnswerButton, cut, oneLine, questionParts } from './common';
import { twilioPost, twilioSchema } from './twilio';

/** Characters of `[{channel}] {title}: {message}` in an SMS before the read link. */
export const SMS_TEXT_MAX = 300;

const answerLines = (buttons: AnswerButton[]) => buttons.map((b) => `\n${b.label}: ${b.url}`).join('');

/**
 * §6.2 sms: `[{channel}] {title}: {message}` cut to 300 characters + `\nRead: {readUrl}`. An open choice
 * question adds one `\n{option}: {answer link}` line per option, only when those lines together fit in
 * 300 characters as well (all or none); other questions, or longer links, add nothing.
 */
export function smsBody(item: DeliveryItem, now?: number): string {
  const text = cut(oneLine(item), SMS_TEXT_MAX);
  const q = questionParts(item, now, (b) => [...answerLines(b)].length <= SMS_TEXT_MAX);
  const answers = q?.perOption ? answerLines(q.buttons) : '';
  return `${item.links.read ? `${text}\nRead: ${item.links.read}` : text}${answers}`;
}

export const smsAdapter: DeliveryAdapter = {
  name: 'sms',
  schema: twilioSchema,
  secrets: ['authToken'],
  send: (io, config, item) =>
    twilioPost(io, config, 'Messages.json', { Body: smsBody(item, io.ctx.clock.now()) }),
};

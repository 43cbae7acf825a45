import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { QuestionRow } from './store';
import type { FormField } from './validate';

/** Secrets are shown as this (wire rules §0.3). */
export const MASKED = '********';

function json<T>(raw: string | null): T | null {
  return raw === null ? null : (JSON.parse(raw) as T);
}

/** The record of §7.2, plus `priority`, `defaultAnswer` and the callback (its secret masked). */
export function presentQuestion(row: QuestionRow) {
  return {
    id: row.id,
    appid: row.channel_id,
    messageId: row.message_id,
    status: row.status,
    title: row.title,
    question: row.question,
    type: row.type,
    options: JSON.parse(row.options) as string[],
    defaultOption: row.default_option,
    multiSelect: row.type === 'multi',
    fields: JSON.parse(row.fields) as FormField[],
    format: row.format,
    answer: json<unknown>(row.answer),
    answeredAt: rfc3339OrNull(row.answered_at),
    answeredBy: row.answered_by,
    expiresAt: rfc3339(row.expires_at),
    timeout_sec: row.timeout_sec,
    clientMessageId: row.client_message_id,
    parentId: row.parent_id,
    nextQuestionId: row.next_question_id,
    createdAt: rfc3339(row.created_at),
    priority: row.priority,
    defaultAnswer: json<unknown>(row.default_answer),
    callbackUrl: row.callback_url,
    callbackSecret: row.callback_secret === null ? null : MASKED,
  };
}

/** One entry of GET /ask/pending-answers. */
export function presentReady(row: QuestionRow) {
  return {
    id: row.id,
    status: row.status,
    answer: json<unknown>(row.answer),
    answeredAt: rfc3339OrNull(row.answered_at),
    clientMessageId: row.client_message_id,
    messageId: row.message_id,
  };
}

/** The answer as a line of text (the link pages): an option, options joined, JSON otherwise. */
export function answerText(raw: string | null): string {
  const v = json<unknown>(raw);
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(', ');
  return JSON.stringify(v);
}

import type { AppContext } from '../../context';
import { seal } from '../../lib/seal';
import { insertDelivery } from './store';

/**
 * Question callbacks (wire rules §7.5) ride the outbox: one `kind: "callback"`, `adapter: "callback"` entry
 * per outcome (answered, expired, cancelled) of a question with a `callbackUrl`, with the §6.1 backoff and
 * give-up. This module is the one door the questions family uses; the outbox's claim and send paths serve
 * the entry (service.ts).
 */

/** The body POSTed to the callback URL (§7.5); it is serialised once, so every retry sends the same bytes. */
export interface CallbackBody {
  id: number;
  status: string;
  answer: unknown;
  answeredAt: string | null;
  clientMessageId: string | null;
}

export interface QuestionCallback {
  /** The channel owner (whose deliveries log shows the entry). */
  userId: number;
  appid: number;
  /** The question's message (null when it is gone). */
  messageId: number | null;
  url: string;
  /** Plain text here; sealed at rest in the entry's payload. */
  secret: string | null;
  body: CallbackBody;
}

/** The entry's `payload` column. */
export interface CallbackPayload {
  url: string;
  /** `seal(secret, CALLBACK_SEAL_PURPOSE, …)` or null. */
  secret: string | null;
  /** The exact JSON text to POST. */
  body: string;
}

export const CALLBACK_ADAPTER = 'callback';
export const CALLBACK_SEAL_PURPOSE = 'question-callback-secret';

/**
 * Queues one callback, due now, inside the caller's transaction, and arms the due timer (harmless before
 * commit: a rolled-back row is simply not found). Returns the entry id.
 */
export function enqueueCallback(ctx: AppContext, cb: QuestionCallback): number {
  const now = ctx.clock.now();
  const payload: CallbackPayload = {
    url: cb.url,
    secret: cb.secret === null ? null : seal(ctx.secret, CALLBACK_SEAL_PURPOSE, cb.secret),
    body: JSON.stringify(cb.body),
  };
  const id = insertDelivery(ctx.db, {
    userId: cb.userId,
    appid: cb.appid,
    messageId: cb.messageId,
    adapter: CALLBACK_ADAPTER,
    kind: 'callback',
    status: 'queued',
    attempts: 0,
    createdAt: now,
    nextAttemptAt: now,
    lastAttemptAt: null,
    payload: JSON.stringify(payload),
  });
  ctx.due.poke(now);
  return id;
}

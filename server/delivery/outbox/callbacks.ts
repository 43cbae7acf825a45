import type { AppContext } from '../../context';
import { seal, unseal } from '../../lib/seal';
import type { SendIo } from '../adapter';
import { deliveryPost } from '../http';
import { signatureHeaders } from '../signature';
import { insertDelivery } from './store';

/**
 * Question callbacks (wire rules §7.5) ride the outbox: one `kind: "callback"`, `adapter: "callback"` entry
 * per outcome (answered, expired, cancelled) of a question with a `callbackUrl`, with the §6.1 backoff and
 * give-up. This module is the one door the questions family uses; the outbox's claim (service.ts `decide`)
 * opens the payload with `openCallback` and its pool sends it with `postCallback`.
 *
 * What the outbox does differently for a callback: no channel adapter settings to re-check (only a deleted
 * channel cancels it, `config`; in practice the channel's entries go with it), never held by quiet hours,
 * never cancelled by a read mark or the message's deletion (migration 0017), no quota. Everything else is
 * the §6.1 state machine: 2xx sent; network errors, 408, 429 and 5xx retried after the backoff (a larger
 * `Retry-After` honoured up to an hour); any other status failed at once — 3xx included, since redirects are
 * not followed and a moved endpoint does not come back by retrying; given up after 24 h.
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

/** An entry's payload with the secret opened: what one attempt needs (kept in memory only). */
export interface OpenedCallback {
  url: string;
  secret: string | null;
  body: string;
}

/** Reads an entry's payload; throws on anything else (the claim then fails that entry alone). */
export function openCallback(ctx: AppContext, payload: string | null): OpenedCallback {
  const p = JSON.parse(payload ?? 'null') as Partial<CallbackPayload> | null;
  if (typeof p?.url !== 'string' || typeof p.body !== 'string') throw new Error('not a callback payload');
  const sealed = p.secret ?? null;
  return {
    url: p.url,
    body: p.body,
    secret: sealed === null ? null : unseal(ctx.secret, CALLBACK_SEAL_PURPOSE, sealed),
  };
}

/**
 * One attempt (§7.5): POSTs the stored body byte for byte with `Content-Type: application/json`,
 * `User-Agent: Belfry/{version}` (deliveryPost), `X-Belfry-Delivery: {entry id}` (the same on every retry),
 * `X-Belfry-Timestamp` of this attempt and, with a secret, `X-Belfry-Signature`. deliveryPost applies the
 * time limits, the private-target rule (`io.allowPrivate`), no redirects and the status classification,
 * and keeps the URL and the secret out of error texts.
 */
export async function postCallback(io: SendIo, entryId: number, cb: OpenedCallback): Promise<void> {
  await deliveryPost(io, {
    url: cb.url,
    jsonText: cb.body,
    headers: {
      'Content-Type': 'application/json',
      'X-Belfry-Delivery': String(entryId),
      ...signatureHeaders(cb.secret ?? undefined, io.ctx.clock.now(), cb.body),
    },
    secrets: cb.secret ? [cb.secret] : [],
  });
}

import { rfc3339OrNull } from '../../lib/clock';
import type { DeliveryRow } from './store';

/** One outbox entry on the wire (§6.1); `cancelReason` only on cancelled entries. */
export interface PresentedDelivery {
  id: number;
  messageId: number | null;
  appid: number;
  adapter: string;
  kind: string;
  status: string;
  attempts: number;
  createdAt: string;
  nextAttemptAt: string | null;
  heldUntil: string | null;
  lastAttemptAt: string | null;
  lastError: string | null;
  sentAt: string | null;
  cancelReason?: string;
}

export function presentDelivery(r: DeliveryRow): PresentedDelivery {
  return {
    id: r.id,
    messageId: r.message_id,
    appid: r.appid,
    adapter: r.adapter,
    kind: r.kind,
    status: r.status,
    attempts: r.attempts,
    createdAt: rfc3339OrNull(r.created_at)!,
    nextAttemptAt: r.status === 'queued' ? rfc3339OrNull(r.next_attempt_at) : null,
    heldUntil: rfc3339OrNull(r.held_until),
    lastAttemptAt: rfc3339OrNull(r.last_attempt_at),
    lastError: r.last_error,
    sentAt: rfc3339OrNull(r.sent_at),
    ...(r.status === 'cancelled' && r.cancel_reason !== null ? { cancelReason: r.cancel_reason } : {}),
  };
}

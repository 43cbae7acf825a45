import type { BusMessage } from '../../lib/bus';
import { rfc3339 } from '../../lib/clock';
import type { MessageRow } from './store';

/** The bus's Message with what a reader of the list sees: always a sender, and its own read mark. */
export interface PresentedMessage extends BusMessage {
  senderName: string;
  read?: true;
}

/**
 * The spec's Message: `extras` only when sent, `read: true` only when read by the caller's user. Built
 * by assignment, not by spreading conditional objects: a page of 100 allocates no throw-away objects.
 */
export function presentMessage(row: MessageRow, read: boolean): PresentedMessage {
  const m: PresentedMessage = {
    id: row.id,
    appid: row.channel_id,
    message: row.message,
    title: row.title,
    priority: row.priority,
    date: rfc3339(row.date),
    senderName: row.sender_name,
  };
  if (row.extras !== null) m.extras = JSON.parse(row.extras) as Record<string, unknown>;
  if (read) m.read = true;
  return m;
}

export type WireMessage = PresentedMessage | BusMessage;

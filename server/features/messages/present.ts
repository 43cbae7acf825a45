import type { BusMessage } from '../../lib/bus';
import { rfc3339 } from '../../lib/clock';
import type { MessageRow } from './store';

/** The spec's Message: `extras` only when sent, `read: true` only when read by the caller's user. */
export function presentMessage(row: MessageRow, read: boolean) {
  return {
    id: row.id,
    appid: row.channel_id,
    message: row.message,
    title: row.title,
    priority: row.priority,
    date: rfc3339(row.date),
    senderName: row.sender_name,
    ...(row.extras === null ? {} : { extras: JSON.parse(row.extras) as Record<string, unknown> }),
    ...(read ? { read: true as const } : {}),
  };
}

export type WireMessage = ReturnType<typeof presentMessage> | BusMessage;

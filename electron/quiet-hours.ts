/**
 * Quiet hours as `GET /current/user/quiet-hours` returns them (spec, "Quiet hours"): a window in the
 * user's IANA timezone; an end earlier than the start spans midnight; `days` (ISO 1=Mon … 7=Sun) are
 * counted by the day the window starts, so Friday 23:00–08:00 covers Saturday morning too.
 */

import { quietWindowAt } from '../server/delivery/outbox/quiet-window';
import type { QuietHours } from '../server/features/current-user/quiet-hours';

export type { QuietHours };

/** Whether `date` falls inside the quiet window (the server's quietWindowAt: one definition of the window). */
export function isQuietAt(qh: QuietHours, date: Date): boolean {
  return quietWindowAt(qh, date.getTime()) !== null;
}

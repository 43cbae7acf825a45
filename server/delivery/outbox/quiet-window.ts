import type { QuietHours } from '../../features/current-user/quiet-hours';
import { currentOrNext } from '../../features/maintenance/schedule';

/**
 * The one quiet-hours window function (server holds and digests, Electron's OS notifications): the
 * window of `qh` that contains instant `t`, as instants, or null when `t` is not quiet. Local times in
 * the user's IANA zone (an unknown zone counts as UTC), DST-correct through maintenance's schedule
 * arithmetic: a start or end skipped by a DST change moves to the first valid instant after the gap, a
 * repeated one takes its first occurrence. An end before the start spans midnight; `days` (ISO 1 = Monday
 * … 7 = Sunday, none = every day) count by the day the window starts; start inclusive, end exclusive;
 * start equal to end is never quiet.
 */
export interface QuietWindow {
  start: number;
  end: number;
}

const EVERY_DAY = [1, 2, 3, 4, 5, 6, 7];

function knownZone(timezone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone;
  } catch {
    return 'UTC';
  }
}

export function quietWindowAt(qh: QuietHours, t: number): QuietWindow | null {
  if (!qh.enabled || qh.start === qh.end) return null;
  const o = currentOrNext(
    {
      type: 'weekly',
      timezone: knownZone(qh.timezone),
      days: qh.days.length > 0 ? qh.days : EVERY_DAY,
      start: qh.start,
      end: qh.end,
    },
    t,
  );
  if (!o || o.startsAt > t) return null;
  return { start: o.startsAt, end: o.endsAt };
}

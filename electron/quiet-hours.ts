/**
 * Quiet hours as `GET /current/user/quiet-hours` returns them (spec, "Quiet hours"): a window in the
 * user's IANA timezone; an end earlier than the start spans midnight; `days` (ISO 1=Mon … 7=Sun) are
 * counted by the day the window starts, so Friday 23:00–08:00 covers Saturday morning too.
 */
import type { QuietHours } from '../server/features/current-user/quiet-hours';

export type { QuietHours };

const MINUTES_PER_DAY = 24 * 60;

/** Minutes since midnight of `HH:MM`, or null when malformed. */
export function parseHm(value: string): number | null {
  const m = /^(\d{1,2}):(\d{2})$/.exec(value);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h > 23 || min > 59) return null;
  return h * 60 + min;
}

/** Local wall-clock of `date` in `timeZone`: ISO weekday and minutes since midnight. */
export function localTime(date: Date, timeZone: string): { isoDay: number; minutes: number } {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(date);
  } catch {
    // An unknown zone name must not silence everything or nothing at random: fall back to UTC.
    return localTime(date, 'UTC');
  }
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  const isoDay = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday')) + 1;
  return { isoDay, minutes: (Number(get('hour')) % 24) * 60 + Number(get('minute')) };
}

/** Whether `date` falls inside the quiet window. */
export function isQuietAt(qh: QuietHours, date: Date): boolean {
  if (!qh.enabled) return false;
  const start = parseHm(qh.start);
  const end = parseHm(qh.end);
  if (start === null || end === null || start === end) return false;
  const days = qh.days.length ? qh.days : [1, 2, 3, 4, 5, 6, 7];
  const { isoDay, minutes } = localTime(date, qh.timezone);
  if (start < end) return minutes >= start && minutes < end && days.includes(isoDay);
  // Spans midnight: the evening part belongs to today, the morning part to yesterday's window.
  if (minutes >= start) return days.includes(isoDay);
  if (minutes < end) {
    const yesterday = isoDay === 1 ? 7 : isoDay - 1;
    return days.includes(yesterday);
  }
  return false;
}

export { MINUTES_PER_DAY };

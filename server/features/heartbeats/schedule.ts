import { Cron } from 'croner';
import { errors } from '../../http/errors';

/**
 * When the next ping is due: `intervalSec` after a time, or the next fire of a 5-field cron `schedule`
 * in an IANA `timezone` (croner: evaluated through Intl, so DST is handled — a time skipped by
 * spring-forward fires at the jump, a repeated time fires once).
 */
export interface Period {
  intervalSec: number | null;
  schedule: string | null;
  timezone: string;
}

const cache = new Map<string, Cron>();
const CACHE_MAX = 2_000;

function cronOf(schedule: string, timezone: string): Cron {
  const key = `${timezone}\u0000${schedule}`;
  let c = cache.get(key);
  if (!c) {
    c = new Cron(schedule, { timezone, paused: true, mode: '5-part' });
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, c);
  }
  return c;
}

/** The first due time strictly after `t` (unix ms); null when a schedule never fires again. */
export function nextAfter(p: Period, t: number): number | null {
  if (p.schedule === null) return t + (p.intervalSec ?? 300) * 1000;
  const next = cronOf(p.schedule, p.timezone).nextRun(new Date(t));
  return next ? next.getTime() : null;
}

/** The next `n` fire times after `t` (validation and the UI's preview). */
export function nextRuns(p: Period, t: number, n: number): number[] {
  if (p.schedule === null)
    return Array.from({ length: n }, (_, i) => t + (i + 1) * (p.intervalSec ?? 300) * 1000);
  return cronOf(p.schedule, p.timezone)
    .nextRuns(n, new Date(t))
    .map((d) => d.getTime());
}

export function isTimeZone(tz: string): boolean {
  if (tz === '' || tz.length > 100) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** How many upcoming fires are compared when checking a schedule against the minimum interval. */
const FIRES_CHECKED = 200;

/**
 * 400 unless the schedule parses as a 5-field cron (or `@hourly`…), fires at all, and never fires twice
 * within `minIntervalSec` over its next fires (a year of a daily job; every minute list repeats hourly).
 */
export function checkSchedule(schedule: string, timezone: string, minIntervalSec: number, now: number): void {
  let c: Cron;
  try {
    if (schedule.length > 200 || /[^\w\s*,/\-@?#LW]/.test(schedule)) throw new Error('characters');
    c = cronOf(schedule.trim(), timezone);
  } catch {
    throw errors.badRequest('schedule: invalid cron expression');
  }
  const fires = c.nextRuns(FIRES_CHECKED, new Date(now)).map((d) => d.getTime());
  if (fires.length === 0) throw errors.badRequest('schedule: never fires');
  for (let i = 1; i < fires.length; i++)
    if (fires[i]! - fires[i - 1]! < minIntervalSec * 1000)
      throw errors.badRequest(`schedule: fires more often than every ${minIntervalSec} s`);
}

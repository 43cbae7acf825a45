import { Cron } from 'croner';

/**
 * Schedules as the server reads them (docs/api.md "Heartbeats"): an interval in seconds, or a 5-field
 * cron expression (or @hourly … @yearly) evaluated in an IANA time zone, day-of-month and day-of-week
 * OR-ed like Vixie cron. The same library as the server (croner), so the preview is what will happen.
 */

export const UNITS = [
  { unit: 'd', label: 'days', sec: 86_400 },
  { unit: 'h', label: 'hours', sec: 3_600 },
  { unit: 'm', label: 'minutes', sec: 60 },
  { unit: 's', label: 'seconds', sec: 1 },
] as const;
export type Unit = (typeof UNITS)[number]['unit'];

/** Two largest units, like the server's messages: `2d 3h`, `5m 10s`, `42s`. */
export function formatDuration(sec: number): string {
  let rest = Math.max(0, Math.floor(sec));
  const parts: string[] = [];
  for (const u of UNITS) {
    const n = Math.floor(rest / u.sec);
    rest -= n * u.sec;
    if (n > 0 || parts.length > 0) parts.push(`${n}${u.unit}`);
    if (parts.length === 2) break;
  }
  const shown = parts.filter((p, i) => i === 0 || !p.startsWith('0'));
  return shown.length ? shown.join(' ') : '0s';
}

/** An interval in the largest unit that divides it evenly, for the form's number + unit inputs. */
export function splitInterval(sec: number): { value: number; unit: Unit } {
  for (const u of UNITS) if (sec >= u.sec && sec % u.sec === 0) return { value: sec / u.sec, unit: u.unit };
  return { value: sec, unit: 's' };
}

export function unitSeconds(unit: Unit): number {
  return UNITS.find((u) => u.unit === unit)?.sec ?? 1;
}

/** Every IANA zone the browser knows, UTC first (Intl lists only region zones). */
export function timeZones(): string[] {
  const list =
    (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ??
    [];
  return ['UTC', ...list.filter((z) => z !== 'UTC')];
}

export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

export function isTimeZone(tz: string): boolean {
  if (!tz.trim()) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * The next `n` fire times of a cron schedule after `from`, or the reason it is not one. Only 5 fields
 * (the server refuses seconds and years).
 */
export function nextFires(
  schedule: string,
  timezone: string,
  n: number,
  from: Date,
): { fires: Date[]; error?: undefined } | { fires?: undefined; error: string } {
  const expr = schedule.trim();
  if (!expr) return { error: 'Enter a cron expression, e.g. 0 3 * * * for every day at 03:00.' };
  if (!isTimeZone(timezone)) return { error: `Unknown time zone “${timezone}”.` };
  const fields = expr.startsWith('@') ? 1 : expr.split(/\s+/).length;
  if (!expr.startsWith('@') && fields !== 5)
    return { error: `A cron expression has 5 fields (minute hour day month weekday), not ${fields}.` };
  try {
    const cron = new Cron(expr, { timezone, mode: '5-part', domAndDow: false });
    return { fires: cron.nextRuns(n, from) };
  } catch (err) {
    return { error: `Not a valid cron expression (${err instanceof Error ? err.message : String(err)}).` };
  }
}

/** A fire time as a person in that zone reads it: `Mon, 30 Mar 2026, 02:00 CEST`. */
export function formatInZone(d: Date, timezone: string): string {
  return new Intl.DateTimeFormat(undefined, {
    timeZone: timezone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(d);
}

/** How the list names a schedule. */
export function describeSchedule(hb: {
  intervalSec: number | null;
  schedule: string | null;
  timezone: string;
}) {
  if (hb.schedule) return `cron ${hb.schedule} (${hb.timezone})`;
  return `every ${formatDuration(hb.intervalSec ?? 0)}`;
}

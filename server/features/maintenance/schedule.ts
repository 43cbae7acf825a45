/**
 * Occurrences of a maintenance window's schedule (docs/api.md, "Maintenance windows"): `once` is one
 * fixed span; `weekly` repeats on ISO weekdays (1 = Monday … 7 = Sunday) from a local `start` to a
 * local `end` in an IANA time zone. `end` before `start` spans midnight, `end` equal to `start` lasts a
 * day. Local times are turned into instants through Intl: a time skipped by a DST change moves to the
 * first valid instant after the gap, a repeated time takes its first occurrence.
 */

export type Schedule =
  | { type: 'once'; startsAt: number; endsAt: number }
  | { type: 'weekly'; timezone: string; days: number[]; start: string; end: string };

export interface Occurrence {
  startsAt: number;
  endsAt: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(timezone, f);
  }
  return f;
}

/** The zone's offset from UTC at instant `t`, in ms (local = t + offset). */
export function offsetAt(timezone: string, t: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(new Date(t)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day!,
    parts.hour!,
    parts.minute!,
    parts.second!,
  );
  return local - Math.floor(t / 1000) * 1000;
}

/**
 * The instant of a local wall time (`wall` = the wall time written as if it were UTC, in ms). Of two
 * instants (a repeated hour) the first; none (a skipped hour) the first valid instant after the gap.
 */
export function wallToInstant(timezone: string, wall: number): number {
  const before = offsetAt(timezone, wall - DAY_MS);
  const after = offsetAt(timezone, wall + DAY_MS);
  const candidates = [...new Set([before, after])]
    .map((o) => wall - o)
    .filter((t) => t + offsetAt(timezone, t) === wall)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return candidates[0]!;
  // In a gap: the transition instant, found to the minute between the two offsets' readings.
  let lo = wall - before - DAY_MS / 24; // still on the old offset
  let hi = wall - after + DAY_MS / 24; // already on the new one
  if (offsetAt(timezone, lo) !== before) lo = wall - DAY_MS;
  if (offsetAt(timezone, hi) === before) hi = wall + DAY_MS;
  while (hi - lo > MINUTE_MS) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
    if (mid === lo) break;
    if (offsetAt(timezone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

export function parseHHMM(s: string): number {
  const [h, m] = s.split(':').map(Number);
  return (h! * 60 + m!) * MINUTE_MS;
}

/** ISO weekday (1 = Monday … 7 = Sunday) of a wall date (ms at local midnight written as UTC). */
function isoDay(wallMidnight: number): number {
  const d = new Date(wallMidnight).getUTCDay();
  return d === 0 ? 7 : d;
}

/** The weekly occurrence starting on the local date `wallMidnight`. */
function weeklyOn(s: Extract<Schedule, { type: 'weekly' }>, wallMidnight: number): Occurrence {
  const start = parseHHMM(s.start);
  const end = parseHHMM(s.end);
  const endDay = end <= start ? wallMidnight + DAY_MS : wallMidnight;
  return {
    startsAt: wallToInstant(s.timezone, wallMidnight + start),
    endsAt: wallToInstant(s.timezone, endDay + end),
  };
}

/**
 * The occurrence in progress at `now`, else the next one; null when none is left. Occurrences that
 * touch (a daily 24 h window) hand over at the boundary: at `endsAt` the next one is current.
 */
export function currentOrNext(s: Schedule, now: number): Occurrence | null {
  if (s.type === 'once') return s.endsAt > now ? { startsAt: s.startsAt, endsAt: s.endsAt } : null;
  const wallNow = now + offsetAt(s.timezone, now);
  const today = Math.floor(wallNow / DAY_MS) * DAY_MS;
  // An occurrence lasts at most a day and a DST hour, so one that began two local days ago has ended.
  for (let i = -2; i <= 8; i++) {
    const day = today + i * DAY_MS;
    if (!s.days.includes(isoDay(day))) continue;
    const o = weeklyOn(s, day);
    if (o.endsAt > now) return o;
  }
  return null;
}

/** The first start or end strictly after `now` (when coverage may change next), or null. */
export function nextBoundary(s: Schedule, now: number): number | null {
  const o = currentOrNext(s, now);
  if (!o) return null;
  return o.startsAt > now ? o.startsAt : o.endsAt;
}

import type { MaintenanceInput, MaintenanceWindow, SourceRef, WeekDay, WindowSchedule } from './types';

/**
 * Maintenance schedules as the form edits them and the list reads them (docs/api.md "Maintenance
 * windows"): once (two instants) or weekly (ISO weekdays, `HH:MM` start and end in an IANA zone; an end
 * before the start runs past midnight, an end equal to the start lasts 24 hours).
 */

export const WEEK: { day: WeekDay; short: string; long: string }[] = [
  { day: 1, short: 'Mon', long: 'Monday' },
  { day: 2, short: 'Tue', long: 'Tuesday' },
  { day: 3, short: 'Wed', long: 'Wednesday' },
  { day: 4, short: 'Thu', long: 'Thursday' },
  { day: 5, short: 'Fri', long: 'Friday' },
  { day: 6, short: 'Sat', long: 'Saturday' },
  { day: 7, short: 'Sun', long: 'Sunday' },
];

/** An instant as a `datetime-local` value in the browser's zone (`2026-03-29T01:30`); '' for none. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A `datetime-local` value (the browser's zone) as RFC 3339 UTC; '' when empty or invalid. */
export function fromLocalInput(value: string): string {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** Everything the form holds, as plain strings and lists (every input controlled). */
export interface WindowDraft {
  name: string;
  enabled: boolean;
  type: 'once' | 'weekly';
  startsAt: string;
  endsAt: string;
  days: WeekDay[];
  start: string;
  end: string;
  timezone: string;
  channelIds: number[];
  includeSubtree: boolean;
  monitors: SourceRef[];
}

export function draftOf(w: MaintenanceWindow | undefined, browserZone: string): WindowDraft {
  const s = w?.schedule;
  return {
    name: w?.name ?? '',
    enabled: w?.enabled ?? true,
    type: s?.type ?? 'weekly',
    startsAt: s?.type === 'once' ? toLocalInput(s.startsAt) : '',
    endsAt: s?.type === 'once' ? toLocalInput(s.endsAt) : '',
    days: s?.type === 'weekly' ? [...s.days] : [],
    start: s?.type === 'weekly' ? s.start : '02:00',
    end: s?.type === 'weekly' ? s.end : '04:00',
    timezone: s?.type === 'weekly' ? s.timezone : browserZone,
    channelIds: w ? [...w.channelIds] : [],
    includeSubtree: w?.includeSubtree ?? false,
    monitors: w ? w.monitors.map((m) => ({ kind: m.kind, id: m.id })) : [],
  };
}

export function bodyOf(d: WindowDraft): MaintenanceInput {
  const schedule: WindowSchedule =
    d.type === 'once'
      ? { type: 'once', startsAt: fromLocalInput(d.startsAt), endsAt: fromLocalInput(d.endsAt) }
      : {
          type: 'weekly',
          timezone: d.timezone.trim(),
          days: [...d.days].sort((a, b) => a - b),
          start: d.start,
          end: d.end,
        };
  return {
    name: d.name.trim(),
    enabled: d.enabled,
    schedule,
    channelIds: [...d.channelIds],
    includeSubtree: d.includeSubtree,
    monitors: d.monitors.map((m) => ({ kind: m.kind, id: m.id })),
  };
}

/** Adds or removes one item, keeping the rest (checkbox lists). */
export function toggle<T>(list: T[], item: T, on: boolean, same: (a: T, b: T) => boolean = Object.is): T[] {
  const rest = list.filter((x) => !same(x, item));
  return on ? [...rest, item] : rest;
}

export const sameSource = (a: SourceRef, b: SourceRef) => a.kind === b.kind && a.id === b.id;

/** `Mon, Wed, Fri`; `every day`; ranges are not folded (a week has only seven). */
export function describeDays(days: WeekDay[]): string {
  if (days.length === 7) return 'every day';
  return WEEK.filter((w) => days.includes(w.day))
    .map((w) => w.short)
    .join(', ');
}

/** How long one weekly occurrence lasts, in minutes: past midnight when end < start, 24 h when equal. */
export function weeklyMinutes(start: string, end: string): number | null {
  const m = (t: string) => {
    const r = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(t);
    return r ? Number(r[1]) * 60 + Number(r[2]) : null;
  };
  const a = m(start);
  const b = m(end);
  if (a === null || b === null) return null;
  return b > a ? b - a : b + 1440 - a;
}

/** The schedule in words: `Mon, Thu 22:00–02:00 (next day) Europe/Berlin`, `once`. */
export function describeSchedule(s: WindowSchedule): string {
  if (s.type === 'once') return 'once';
  const mins = weeklyMinutes(s.start, s.end);
  const overnight = mins !== null && s.end <= s.start ? ' (next day)' : '';
  return `${describeDays(s.days)} ${s.start}–${s.end}${overnight} ${s.timezone}`;
}

/** An instant in a zone, 24-hour like the form's `HH:MM`: `Sun, 29 Mar 2026, 03:00 CEST`. */
export function formatAt(iso: string, timeZone?: string): string {
  return new Intl.DateTimeFormat(undefined, {
    ...(timeZone ? { timeZone } : {}),
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).format(new Date(iso));
}

/**
 * The current or next occurrence, in the viewer's zone and (when it differs) the window's:
 * `{ when: 'Now, until …' | '… – …' | 'No occurrence left' | 'Disabled', zoned?: '…' }`.
 */
export function occurrenceText(
  w: Pick<MaintenanceWindow, 'active' | 'enabled' | 'nextStart' | 'nextEnd' | 'schedule'>,
  viewerZone: string,
): { when: string; zoned: string | null } {
  if (!w.enabled) return { when: 'Disabled', zoned: null };
  if (!w.nextStart || !w.nextEnd) return { when: 'No occurrence left', zoned: null };
  const tz = w.schedule.type === 'weekly' ? w.schedule.timezone : null;
  const span = (zone: string | undefined) =>
    w.active
      ? `until ${formatAt(w.nextEnd as string, zone)}`
      : `${formatAt(w.nextStart as string, zone)} – ${formatAt(w.nextEnd as string, zone)}`;
  return {
    when: `${w.active ? 'Now, ' : ''}${span(viewerZone)}`,
    zoned: tz && tz !== viewerZone ? `${span(tz)} (${tz})` : null,
  };
}

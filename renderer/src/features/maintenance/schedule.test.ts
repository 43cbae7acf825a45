import { describe, expect, it } from 'vitest';
import {
  bodyOf,
  describeSchedule,
  draftOf,
  fromLocalInput,
  occurrenceText,
  toggle,
  toLocalInput,
  weeklyMinutes,
} from './schedule';
import type { MaintenanceWindow } from './types';

const weekly: MaintenanceWindow = {
  id: 3,
  name: 'Nightly deploy',
  channelIds: [4],
  includeSubtree: true,
  monitors: [{ kind: 'heartbeat', id: 9 }],
  schedule: { type: 'weekly', timezone: 'Europe/Berlin', days: [7, 1], start: '22:00', end: '02:00' },
  enabled: true,
  active: false,
  nextStart: '2026-03-29T20:00:00.000Z',
  nextEnd: '2026-03-30T00:00:00.000Z',
  coveredChannelIds: [4, 5],
  createdAt: '2026-03-01T00:00:00.000Z',
};

describe('maintenance schedule helpers', () => {
  it('round-trips a datetime-local value through RFC 3339 in the browser zone', () => {
    const iso = fromLocalInput('2026-10-25T02:30');
    expect(iso).toMatch(/^2026-10-2\dT\d\d:30:00\.000Z$/);
    expect(toLocalInput(iso)).toBe('2026-10-25T02:30');
    expect(fromLocalInput('')).toBe('');
    expect(toLocalInput(null)).toBe('');
  });

  it('builds the create body from a weekly draft (days sorted, zone trimmed) and back', () => {
    const d = draftOf(weekly, 'UTC');
    expect(d.type).toBe('weekly');
    expect(d.timezone).toBe('Europe/Berlin');
    expect(bodyOf({ ...d, timezone: ' Europe/Berlin ' })).toEqual({
      name: 'Nightly deploy',
      enabled: true,
      channelIds: [4],
      includeSubtree: true,
      monitors: [{ kind: 'heartbeat', id: 9 }],
      schedule: { type: 'weekly', timezone: 'Europe/Berlin', days: [1, 7], start: '22:00', end: '02:00' },
    });
  });

  it('starts a new window weekly in the browser zone, and sends a once window as two instants', () => {
    const d = draftOf(undefined, 'Asia/Tokyo');
    expect(d).toMatchObject({ type: 'weekly', timezone: 'Asia/Tokyo', days: [], enabled: true });
    const once = bodyOf({
      ...d,
      name: ' x ',
      type: 'once',
      startsAt: '2026-05-01T10:00',
      endsAt: '2026-05-01T12:00',
    });
    expect(once.name).toBe('x');
    expect(once.schedule).toEqual({
      type: 'once',
      startsAt: new Date('2026-05-01T10:00').toISOString(),
      endsAt: new Date('2026-05-01T12:00').toISOString(),
    });
  });

  it('reads midnight spans and 24-hour windows as the server does', () => {
    expect(weeklyMinutes('22:00', '02:00')).toBe(240);
    expect(weeklyMinutes('03:00', '03:00')).toBe(1440);
    expect(weeklyMinutes('01:00', '01:30')).toBe(30);
    expect(weeklyMinutes('25:00', '01:00')).toBeNull();
    expect(describeSchedule(weekly.schedule)).toBe('Mon, Sun 22:00–02:00 (next day) Europe/Berlin');
    expect(describeSchedule({ ...weekly.schedule, days: [1, 2, 3, 4, 5, 6, 7], end: '23:00' } as never)).toBe(
      'every day 22:00–23:00 Europe/Berlin',
    );
  });

  it('shows the next occurrence in the viewer zone and in the window zone when they differ', () => {
    const next = occurrenceText(weekly, 'UTC');
    expect(next.when).toMatch(/^Sun, .*20:00.* – .*00:00/);
    expect(next.zoned).toMatch(/22:00.* – .*02:00.*\(Europe\/Berlin\)$/);
    expect(occurrenceText(weekly, 'Europe/Berlin').zoned).toBeNull();
    const now = occurrenceText({ ...weekly, active: true }, 'UTC');
    expect(now.when).toMatch(/^Now, until .*00:00/);
    expect(occurrenceText({ ...weekly, enabled: false }, 'UTC').when).toBe('Disabled');
    expect(occurrenceText({ ...weekly, nextStart: null, nextEnd: null }, 'UTC').when).toBe(
      'No occurrence left',
    );
  });

  it('toggles checkbox lists by value', () => {
    expect(toggle([1, 2], 3, true)).toEqual([1, 2, 3]);
    expect(toggle([1, 2], 1, false)).toEqual([2]);
    const same = (a: { id: number }, b: { id: number }) => a.id === b.id;
    expect(toggle([{ id: 1 }], { id: 1 }, true, same)).toEqual([{ id: 1 }]);
  });
});

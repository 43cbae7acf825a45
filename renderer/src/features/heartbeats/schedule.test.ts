import { describe, expect, it } from 'vitest';
import {
  describeSchedule,
  formatDuration,
  isTimeZone,
  nextFires,
  splitInterval,
  timeZones,
} from './schedule';

describe('heartbeat schedules in the UI', () => {
  it('formatDuration shows the two largest units like the server’s messages', () => {
    expect(formatDuration(42)).toBe('42s');
    expect(formatDuration(310)).toBe('5m 10s');
    expect(formatDuration(300)).toBe('5m');
    expect(formatDuration(2 * 86_400 + 3 * 3_600 + 59)).toBe('2d 3h');
    expect(formatDuration(86_400 + 30)).toBe('1d');
    expect(formatDuration(0)).toBe('0s');
  });

  it('splitInterval picks the largest unit that divides the interval', () => {
    expect(splitInterval(300)).toEqual({ value: 5, unit: 'm' });
    expect(splitInterval(7_200)).toEqual({ value: 2, unit: 'h' });
    expect(splitInterval(90)).toEqual({ value: 90, unit: 's' });
    expect(splitInterval(172_800)).toEqual({ value: 2, unit: 'd' });
  });

  it('nextFires evaluates cron in the chosen zone across a DST change', () => {
    // Europe/Berlin springs forward on 2026-03-29: 03:00 local is 01:00Z before, 01:00Z after too (CEST).
    const r = nextFires('0 3 * * *', 'Europe/Berlin', 3, new Date('2026-03-27T12:00:00Z'));
    expect(r.fires?.map((d) => d.toISOString())).toEqual([
      '2026-03-28T02:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T01:00:00.000Z',
    ]);
    expect(
      nextFires('@hourly', 'UTC', 2, new Date('2026-01-15T12:10:00Z')).fires?.map((d) => d.toISOString()),
    ).toEqual(['2026-01-15T13:00:00.000Z', '2026-01-15T14:00:00.000Z']);
  });

  it('nextFires explains what is wrong instead of throwing', () => {
    expect(nextFires('', 'UTC', 3, new Date()).error).toMatch(/Enter a cron expression/);
    expect(nextFires('* * * * * *', 'UTC', 3, new Date()).error).toMatch(/5 fields .* not 6/);
    expect(nextFires('61 * * * *', 'UTC', 3, new Date()).error).toMatch(/Not a valid cron expression/);
    expect(nextFires('0 3 * * *', 'Mars/Olympus', 3, new Date()).error).toBe(
      'Unknown time zone “Mars/Olympus”.',
    );
  });

  it('lists UTC first among the IANA zones and checks zone names', () => {
    const zones = timeZones();
    expect(zones[0]).toBe('UTC');
    expect(zones).toContain('Europe/Berlin');
    expect(isTimeZone('America/New_York')).toBe(true);
    expect(isTimeZone('Nowhere/Town')).toBe(false);
  });

  it('describeSchedule names an interval or a cron schedule', () => {
    expect(describeSchedule({ intervalSec: 300, schedule: null, timezone: 'UTC' })).toBe('every 5m');
    expect(describeSchedule({ intervalSec: null, schedule: '0 3 * * *', timezone: 'Europe/Berlin' })).toBe(
      'cron 0 3 * * * (Europe/Berlin)',
    );
  });
});

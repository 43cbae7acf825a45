import { describe, expect, it } from 'vitest';
import { isQuietAt, type QuietHours } from './quiet-hours';

const qh = (over: Partial<QuietHours> = {}): QuietHours => ({
  enabled: true,
  timezone: 'UTC',
  start: '23:00',
  end: '08:00',
  days: [1, 2, 3, 4, 5, 6, 7],
  breakthroughPriority: 8,
  digest: false,
  ...over,
});

describe('quiet hours', () => {
  it('is never quiet when disabled or when start equals end', () => {
    expect(isQuietAt(qh({ enabled: false }), new Date('2026-01-05T23:30:00Z'))).toBe(false);
    expect(isQuietAt(qh({ start: '10:00', end: '10:00' }), new Date('2026-01-05T10:00:00Z'))).toBe(false);
  });
  it('a window spanning midnight covers the evening and the next morning', () => {
    expect(isQuietAt(qh(), new Date('2026-01-05T23:00:00Z'))).toBe(true);
    expect(isQuietAt(qh(), new Date('2026-01-06T07:59:00Z'))).toBe(true);
    expect(isQuietAt(qh(), new Date('2026-01-06T08:00:00Z'))).toBe(false);
    expect(isQuietAt(qh(), new Date('2026-01-05T22:59:00Z'))).toBe(false);
  });
  it('a same-day window is start inclusive, end exclusive', () => {
    const day = qh({ start: '12:00', end: '14:00' });
    expect(isQuietAt(day, new Date('2026-01-05T12:00:00Z'))).toBe(true);
    expect(isQuietAt(day, new Date('2026-01-05T14:00:00Z'))).toBe(false);
  });
  it('days are counted by the start day: Friday night covers Saturday morning, Sunday night is free', () => {
    const fri = qh({ days: [5] }); // 2026-01-09 is a Friday
    expect(isQuietAt(fri, new Date('2026-01-09T23:30:00Z'))).toBe(true);
    expect(isQuietAt(fri, new Date('2026-01-10T06:00:00Z'))).toBe(true); // Saturday morning
    expect(isQuietAt(fri, new Date('2026-01-10T23:30:00Z'))).toBe(false); // Saturday night
    expect(isQuietAt(fri, new Date('2026-01-09T06:00:00Z'))).toBe(false); // Friday morning belongs to Thursday
    const mon = qh({ days: [1] });
    expect(isQuietAt(mon, new Date('2026-01-06T03:00:00Z'))).toBe(true); // Tuesday 03:00 from Monday's window
    expect(isQuietAt(qh({ days: [7] }), new Date('2026-01-05T03:00:00Z'))).toBe(true); // Monday 03:00 from Sunday
  });
  it('uses the user timezone, not the machine one', () => {
    const ny = qh({ timezone: 'America/New_York' });
    expect(isQuietAt(ny, new Date('2026-01-06T04:30:00Z'))).toBe(true); // 23:30 in New York
    expect(isQuietAt(ny, new Date('2026-01-05T23:30:00Z'))).toBe(false); // 18:30 in New York
  });
  it('an unknown zone counts as UTC', () => {
    expect(isQuietAt(qh({ timezone: 'Not/AZone' }), new Date('2026-01-05T23:30:00Z'))).toBe(true);
  });
  it('a DST day in Europe/Berlin: the window ends at 08:00 local on the new offset', () => {
    // 2026-03-29: clocks go from 02:00 CET to 03:00 CEST. 08:00 CEST is 06:00 UTC.
    const berlin = qh({ timezone: 'Europe/Berlin' });
    expect(isQuietAt(berlin, new Date('2026-03-29T05:59:00Z'))).toBe(true);
    expect(isQuietAt(berlin, new Date('2026-03-29T06:00:00Z'))).toBe(false);
  });
});

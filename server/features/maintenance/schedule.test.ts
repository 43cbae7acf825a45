import { describe, expect, it } from 'vitest';
import { currentOrNext, nextBoundary, wallToInstant } from './schedule';

const iso = (t: number) => new Date(t).toISOString();
const wall = (s: string) => Date.parse(`${s}Z`);

describe('maintenance schedule', () => {
  it('wallToInstant moves a start in a skipped hour to the first valid instant (Berlin, 2026-03-29)', () => {
    // 02:30 does not exist; 03:00 CEST = 01:00Z is the first valid instant.
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-03-29T02:30:00')))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-03-29T03:30:00')))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-03-29T01:30:00')))).toBe('2026-03-29T00:30:00.000Z');
  });

  it('wallToInstant takes the first occurrence of a repeated hour (Berlin, 2026-10-25)', () => {
    // 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET): the first.
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-10-25T02:30:00')))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(wallToInstant('America/New_York', wall('2026-01-10T09:00:00')))).toBe(
      '2026-01-10T14:00:00.000Z',
    );
  });

  it('currentOrNext spans midnight and treats end = start as 24 h', () => {
    const night = { type: 'weekly' as const, timezone: 'UTC', days: [5], start: '22:00', end: '02:00' };
    // 2026-01-09 is a Friday.
    const o = currentOrNext(night, Date.parse('2026-01-10T01:00:00Z'))!;
    expect([iso(o.startsAt), iso(o.endsAt)]).toEqual([
      '2026-01-09T22:00:00.000Z',
      '2026-01-10T02:00:00.000Z',
    ]);
    const day = { type: 'weekly' as const, timezone: 'UTC', days: [6], start: '08:00', end: '08:00' };
    const d = currentOrNext(day, Date.parse('2026-01-05T00:00:00Z'))!;
    expect([iso(d.startsAt), iso(d.endsAt)]).toEqual([
      '2026-01-10T08:00:00.000Z',
      '2026-01-11T08:00:00.000Z',
    ]);
    expect(iso(nextBoundary(day, d.startsAt)!)).toBe('2026-01-11T08:00:00.000Z');
  });

  it('currentOrNext across DST: 23 h and 25 h local days stay on wall time', () => {
    const w = { type: 'weekly' as const, timezone: 'Europe/Berlin', days: [7], start: '02:30', end: '04:00' };
    const spring = currentOrNext(w, Date.parse('2026-03-28T12:00:00Z'))!;
    expect([iso(spring.startsAt), iso(spring.endsAt)]).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T02:00:00.000Z',
    ]);
    const autumn = currentOrNext(w, Date.parse('2026-10-24T12:00:00Z'))!;
    expect([iso(autumn.startsAt), iso(autumn.endsAt)]).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('currentOrNext of a once window is null after its end', () => {
    const once = { type: 'once' as const, startsAt: 1000, endsAt: 2000 };
    expect(currentOrNext(once, 1500)).toEqual({ startsAt: 1000, endsAt: 2000 });
    expect(currentOrNext(once, 2000)).toBeNull();
  });
});

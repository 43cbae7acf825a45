import { describe, expect, it } from 'vitest';
import type { HistoryInterval } from '../history/service';
import { incidentsOf, meanUptime, overallOf, publicStatus } from './summary';

const iv = (status: string, start: number, end: number | null): HistoryInterval => ({
  kind: 'heartbeat',
  source_id: 1,
  status,
  class: status === 'up' ? 'up' : status === 'down' ? 'down' : 'other',
  start_at: start,
  end_at: end,
});

describe('status page summary rules', () => {
  it('overallOf: outage, degraded, maintenance, operational, the first that holds', () => {
    expect(overallOf([])).toBe('operational');
    expect(overallOf(['pending', 'unknown'])).toBe('operational');
    expect(overallOf(['up', 'pending'])).toBe('operational');
    expect(overallOf(['down'])).toBe('outage');
    expect(overallOf(['down', 'pending', 'maintenance'])).toBe('outage');
    expect(overallOf(['down', 'up'])).toBe('degraded');
    expect(overallOf(['up', 'maintenance'])).toBe('maintenance');
    expect(overallOf(['maintenance'])).toBe('maintenance');
  });

  it('meanUptime truncates the mean to 3 decimals without float drift; null without values', () => {
    expect(meanUptime([])).toBeNull();
    expect(meanUptime([null, null])).toBeNull();
    expect(meanUptime([100, null, 99.999])).toBe(99.999);
    // 99.123 + 99.124 = 198.247 / 2 = 99.1235: truncated, not rounded.
    expect(meanUptime([99.123, 99.124])).toBe(99.123);
    expect(meanUptime([0.001, 0, 0])).toBe(0);
    expect(meanUptime([33.333, 33.334, 33.333])).toBe(33.333);
  });

  it('publicStatus maps the families’ states onto the five public ones', () => {
    expect(
      ['up', 'late', 'down', 'maintenance', 'new', 'pending', 'unknown', 'odd'].map(publicStatus),
    ).toEqual(['up', 'up', 'down', 'maintenance', 'pending', 'pending', 'unknown', 'unknown']);
  });

  it('incidentsOf: a down run continues across unknown gaps and ends at the next other status', () => {
    expect(
      incidentsOf([
        iv('up', 0, 10),
        iv('down', 10, 20),
        iv('unknown', 20, 30),
        iv('down', 30, 40),
        iv('up', 40, 50),
        iv('down', 50, 60),
        iv('maintenance', 60, 70),
        iv('down', 70, 80),
        iv('unknown', 80, null),
      ]),
    ).toEqual([
      { startedAt: 10, resolvedAt: 40 },
      { startedAt: 50, resolvedAt: 60 },
      { startedAt: 70, resolvedAt: null },
    ]);
    expect(incidentsOf([iv('new', 0, 5), iv('up', 5, null)])).toEqual([]);
  });
});

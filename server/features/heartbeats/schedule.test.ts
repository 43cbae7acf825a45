import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../http/errors';
import { checkSchedule, isTimeZone, nextAfter, nextRuns } from './schedule';

const berlin = (schedule: string) => ({ intervalSec: null, schedule, timezone: 'Europe/Berlin' });

describe('heartbeat schedules', () => {
  it('nextAfter adds the interval, or finds the next cron fire strictly after the time', () => {
    const t = Date.UTC(2026, 0, 15, 12, 0, 0);
    expect(nextAfter({ intervalSec: 90, schedule: null, timezone: 'UTC' }, t)).toBe(t + 90_000);
    expect(nextAfter({ intervalSec: null, schedule: '0 12 * * *', timezone: 'UTC' }, t)).toBe(
      Date.UTC(2026, 0, 16, 12, 0, 0),
    );
    expect(nextAfter({ intervalSec: null, schedule: '@hourly', timezone: 'UTC' }, t)).toBe(t + 3_600_000);
  });

  it('a daily 02:30 in Europe/Berlin fires at the spring-forward jump and once on the repeated hour', () => {
    // 2026-03-29: 02:00 → 03:00 CEST, so 02:30 does not exist: fires at 03:00 CEST = 01:00 UTC.
    expect(nextRuns(berlin('30 2 * * *'), Date.UTC(2026, 2, 28, 12), 3)).toEqual([
      Date.UTC(2026, 2, 29, 1, 0),
      Date.UTC(2026, 2, 30, 0, 30),
      Date.UTC(2026, 2, 31, 0, 30),
    ]);
    // 2026-10-25: 03:00 CEST → 02:00 CET, 02:30 happens twice: one fire (00:30 UTC), then CET.
    expect(nextRuns(berlin('30 2 * * *'), Date.UTC(2026, 9, 24, 12), 2)).toEqual([
      Date.UTC(2026, 9, 25, 0, 30),
      Date.UTC(2026, 9, 26, 1, 30),
    ]);
  });

  it('checkSchedule refuses bad expressions, six fields and schedules closer than the minimum', () => {
    const now = Date.UTC(2026, 0, 15);
    const message = (fn: () => void) => {
      try {
        fn();
        return 'ok';
      } catch (e) {
        return (e as ApiError).description;
      }
    };
    expect(message(() => checkSchedule('*/5 * * * MON-FRI', 'UTC', 30, now))).toBe('ok');
    expect(message(() => checkSchedule('0 0 1 JAN *', 'UTC', 30, now))).toBe('ok');
    expect(message(() => checkSchedule('0 0 * * * *', 'UTC', 30, now))).toBe(
      'schedule: invalid cron expression',
    );
    expect(message(() => checkSchedule('nonsense', 'UTC', 30, now))).toBe(
      'schedule: invalid cron expression',
    );
    expect(message(() => checkSchedule('0 25 * * *', 'UTC', 30, now))).toBe(
      'schedule: invalid cron expression',
    );
    expect(message(() => checkSchedule('* * * * *', 'UTC', 120, now))).toBe(
      'schedule: fires more often than every 120 s',
    );
    expect(message(() => checkSchedule('0,1 3 1 1 *', 'UTC', 120, now))).toBe(
      'schedule: fires more often than every 120 s',
    );
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});

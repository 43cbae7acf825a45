import { describe, expect, it } from 'vitest';
import { ManualClock, rfc3339, systemClock } from './clock';

describe('rfc3339', () => {
  it('writes exactly what toISOString writes, across days, years and edge values', () => {
    const samples = [
      0,
      1,
      999,
      1000,
      59_999,
      86_399_999,
      86_400_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2026, 11, 31, 23, 59, 59, 5),
      Date.UTC(2027, 0, 1, 0, 0, 0, 50),
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z
      253_402_300_800_000, // +010000-…: six-digit years go through Date
      -1,
      -86_400_001,
      1.5,
    ];
    // Pseudo-random dates, in and out of order, so the day cache is hit and missed.
    let x = 12345;
    for (let i = 0; i < 5_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      samples.push(Date.UTC(1970 + (x % 120), 0, 1) + ((x * 7919) % (400 * 86_400_000)));
      if (i % 3 === 0) samples.push(samples[samples.length - 1]! + (x % 5000));
    }
    for (const ms of samples) expect(rfc3339(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});

describe('ManualClock', () => {
  it('advance and a forward set move both clocks; sleep moves only the wall clock', () => {
    const c = new ManualClock(1_000_000);
    const m0 = c.monotonic();
    c.advance(5_000);
    expect([c.now(), c.monotonic() - m0]).toEqual([1_005_000, 5_000]);
    c.sleep(600_000);
    expect([c.now(), c.monotonic() - m0]).toEqual([1_605_000, 5_000]);
    c.set(1_606_000);
    expect([c.now(), c.monotonic() - m0]).toEqual([1_606_000, 6_000]);
    c.set(1_000_000); // the wall clock set back: the monotonic clock never goes back
    expect([c.now(), c.monotonic() - m0]).toEqual([1_000_000, 6_000]);
  });

  it('the system clock has a monotonic reading that does not go back', () => {
    const a = systemClock.monotonic();
    const b = systemClock.monotonic();
    expect(b).toBeGreaterThanOrEqual(a);
  });
});

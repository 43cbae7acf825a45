/** The one source of time. Nothing deep in the code calls Date.now(): tests move a ManualClock instead. */
export interface Clock {
  /** Wall-clock time, unix ms: what is stored and shown. Jumps when the host sleeps or its clock is set. */
  now(): number;
  /**
   * Monotonic ms from an arbitrary origin: never set back and, on Linux and macOS, not advanced while the
   * host sleeps. The gap between the two clocks is how a sleep (or a clock change) is noticed.
   */
  monotonic(): number;
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

/**
 * A clock tests set and advance; listeners let the scheduler re-plan when time jumps. `advance` and a
 * forward `set` move both clocks (time passing while awake); `sleep` moves only the wall clock (the host
 * slept: the monotonic clock stood still).
 */
export class ManualClock implements Clock {
  private listeners = new Set<(now: number) => void>();
  private mono = 0;
  constructor(private current = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.current;
  }
  monotonic(): number {
    return this.mono;
  }
  /** Sets the wall clock; a step forward counts as awake time (the monotonic clock moves with it). */
  set(ms: number): void {
    if (ms > this.current) this.mono += ms - this.current;
    this.moveWall(ms);
  }
  advance(ms: number): void {
    this.set(this.current + ms);
  }
  /** The host slept for `ms`: the wall clock jumps, the monotonic clock does not. */
  sleep(ms: number): void {
    this.moveWall(this.current + ms);
  }
  onChange(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  private moveWall(ms: number): void {
    this.current = ms;
    for (const l of this.listeners) l(ms);
  }
}

export function isManualClock(clock: Clock): clock is ManualClock {
  return clock instanceof ManualClock;
}

const DAY_MS = 86_400_000;
/** 9999-12-31T23:59:59.999Z: beyond it toISOString writes six-digit years. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;
let cachedDay = Number.NaN;
let cachedDayPrefix = '';

/**
 * RFC 3339 in UTC with milliseconds, the format of every timestamp on the wire: exactly what
 * `toISOString()` writes. Every message of a page or a fan-out gets one, so the date part is kept
 * for the last day seen and only the time is formatted (Date objects for 100 dates were 8 % of a page).
 */
export function rfc3339(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_FOUR_DIGIT_YEAR_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    cachedDay = day;
  }
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${cachedDayPrefix}${two(h)}:${two(m)}:${two(s)}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

export function rfc3339OrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : rfc3339(ms);
}

/** The one source of time. Nothing deep in the code calls Date.now(): tests move a ManualClock instead. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests set and advance; listeners let the scheduler re-plan when time jumps. */
export class ManualClock implements Clock {
  private listeners = new Set<(now: number) => void>();
  constructor(private current = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
    for (const l of this.listeners) l(ms);
  }
  advance(ms: number): void {
    this.set(this.current + ms);
  }
  onChange(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function isManualClock(clock: Clock): clock is ManualClock {
  return clock instanceof ManualClock;
}

/** RFC 3339 in UTC with milliseconds, the format of every timestamp on the wire. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export function rfc3339OrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : rfc3339(ms);
}

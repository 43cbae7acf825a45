import type { AppContext } from '../context';

/**
 * A family whose items fall due at stored times (heartbeat deadlines; later monitor checks, question
 * deadlines, outbox retries). The due times live in the database, so a restart resumes them.
 */
export interface DueSource {
  /** 'heartbeat', later 'monitor', 'question', 'outbox'. */
  name: string;
  /** Earliest due time (unix ms) of its items, or null. Must be cheap: an indexed MIN(). */
  nextDueAt(ctx: AppContext): number | null;
  /** Apply everything due at or before `now` (in bounded batches; may be called with nothing due). */
  runDue(ctx: AppContext, now: number): void | Promise<void>;
  /**
   * Resolves when the work runDue started and did not await has been applied (monitor checks run in a
   * pool after runDue returns). Only the test hook Scheduler.tick() waits for it.
   */
  idle?(ctx: AppContext): Promise<void>;
}

/** The timer never sleeps longer than this, so a wall-clock jump (sleep, clock change) is noticed. */
export const DUE_TIMER_CAP_MS = 60_000;
/** A failing source is retried after 1 s, 2 s, 4 s ... up to this, so it can neither spin nor wedge the rest. */
export const DUE_FAILURE_BACKOFF_MAX_MS = 60_000;
/** runDueNow() repeats a source while it stays due (bounded batches), at most this many rounds. */
const MAX_ROUNDS = 100;

interface SourceState {
  source: DueSource;
  /** The source's run in progress: a second run waits for it (a source never overlaps itself). */
  running: Promise<void> | null;
  failures: number;
  /** While failing: not run again before this time. */
  retryAt: number;
}

/**
 * One owner of per-item deadlines: one real timer, armed for the earliest due time of every registered
 * source (capped at DUE_TIMER_CAP_MS). No polling of items, no timer per item. Writes that change due
 * times call poke(); Scheduler.tick() awaits runDueNow(), so tests drive it with a ManualClock.
 * Decisions are taken by ctx.clock; the real timer only decides when to look.
 */
export class DueTimer {
  private readonly states: SourceState[] = [];
  private ctx: AppContext | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Wall time (ctx.clock) the armed timer was set for. */
  private armedFor: number | null = null;
  private readonly wakes = new Set<Promise<void>>();
  private stopped = false;
  /** Called on every timer wake before sources run (wall-jump detection, server/jobs/alive.ts). */
  onWake: (() => void) | null = null;

  constructor(private readonly capMs = DUE_TIMER_CAP_MS) {}

  /** At feature init. Names are unique. */
  register(source: DueSource): void {
    if (this.states.some((s) => s.source.name === source.name))
      throw new Error(`due source ${source.name} registered twice`);
    this.states.push({ source, running: null, failures: 0, retryAt: 0 });
    this.poke();
  }

  /** Binds the server's context and arms the timer (server start). Before it, poke() only records. */
  start(ctx: AppContext): void {
    if (this.stopped) return;
    this.ctx = ctx;
    this.arm();
  }

  /**
   * A write changed due times: re-arm the one timer if `at` (or, without `at`, the sources' new
   * earliest time) is earlier than the time it is armed for. Cheap; call after commit.
   */
  poke(at?: number): void {
    if (!this.ctx || this.stopped) return;
    if (at === undefined) {
      this.arm();
      return;
    }
    const armed = this.armedFor;
    // Already armed for an earlier time that is still ahead: nothing to do.
    if (armed !== null && at >= armed && armed > this.ctx.clock.now()) return;
    // An armed time that has passed without a wake yet (its callback is queued, or the wall clock jumped
    // while the real timer still counts the old delay) means due work now: fire at once. Re-arming for the
    // later `at` instead would push that work back by up to DUE_TIMER_CAP_MS (found by the monitors bench:
    // a check result applied in that window made every monitor wait for the 60 s cap).
    this.setTimer(armed === null ? at : Math.min(at, armed));
  }

  /**
   * Runs every source whose nextDueAt <= clock.now() until none is due (bounded), waiting for a run of
   * the same source already in progress; then re-arms. Awaited by Scheduler.tick().
   */
  async runDueNow(): Promise<void> {
    if (!this.ctx || this.stopped) return;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const ran = await Promise.all(this.states.map((s) => this.runIfDue(s)));
      if (!ran.includes(true) || this.stopped) break;
      // Between batches, let requests in: a backlog must not hold the event loop for all its rounds.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.arm();
  }

  /**
   * Runs what is due and waits until the work it started is applied (every source's idle()), repeating
   * while something became due meanwhile (bounded). The test hook behind Scheduler.tick(); production
   * never calls it: the timer alone wakes due work.
   */
  async settle(): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      await this.runDueNow();
      const ctx = this.ctx;
      if (!ctx || this.stopped) return;
      await Promise.all([...this.wakes]);
      await Promise.all(this.states.map((s) => s.source.idle?.(ctx)));
      const at = this.earliest();
      if (at === null || at > ctx.clock.now()) return;
    }
  }

  /** When (ctx.clock time) the timer will next look, or null when it is not armed (diagnostics, tests). */
  get armedAt(): number | null {
    return this.armedFor;
  }

  /** The earliest due time over the sources (failing ones at their retry time), or null. */
  earliest(): number | null {
    if (!this.ctx) return null;
    let min: number | null = null;
    for (const s of this.states) {
      const at = this.dueOf(s);
      if (at !== null && (min === null || at < min)) min = at;
    }
    return min;
  }

  /** Clears the timer and waits for runs in progress. Nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await Promise.allSettled([...this.wakes, ...this.states.flatMap((s) => (s.running ? [s.running] : []))]);
  }

  private arm(): void {
    if (!this.ctx || this.stopped) return;
    const at = this.earliest();
    this.setTimer(at ?? this.ctx.clock.now() + this.capMs);
  }

  private setTimer(at: number): void {
    const ctx = this.ctx;
    if (!ctx || this.stopped) return;
    this.clearTimer();
    const delay = Math.min(Math.max(at - ctx.clock.now(), 0), this.capMs);
    this.armedFor = ctx.clock.now() + delay;
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }

  /** Timer wake: one round (a source left due by its batch bound is re-armed at 0, letting I/O in). */
  private wake(): void {
    this.timer = null;
    this.armedFor = null;
    const p = (async () => {
      try {
        this.onWake?.();
      } catch (err) {
        this.ctx?.log.error('due timer wake hook failed', { err });
      }
      await Promise.all(this.states.map((s) => this.runIfDue(s)));
      this.arm();
    })();
    this.wakes.add(p);
    void p.finally(() => this.wakes.delete(p));
  }

  /** Due time of one source, its retry time while failing; a failing nextDueAt counts as a failure. */
  private dueOf(s: SourceState): number | null {
    const ctx = this.ctx as AppContext;
    let at: number | null;
    try {
      at = s.source.nextDueAt(ctx);
    } catch (err) {
      this.failed(s, err, 'nextDueAt');
      return s.retryAt;
    }
    if (at === null) return null;
    return s.failures > 0 ? Math.max(at, s.retryAt) : at;
  }

  /** Runs the source if it is due, after any run of it in progress; true when it ran. */
  private async runIfDue(s: SourceState): Promise<boolean> {
    while (s.running) await s.running;
    const ctx = this.ctx;
    if (!ctx || this.stopped) return false;
    const now = ctx.clock.now();
    const at = this.dueOf(s);
    if (at === null || at > now) return false;
    const run = (async () => {
      await null; // s.running is set below before any of this runs, even when runDue throws at once
      try {
        await s.source.runDue(ctx, now);
        if (s.failures > 0) ctx.log.info(`due source ${s.source.name} recovered`, { failures: s.failures });
        s.failures = 0;
      } catch (err) {
        this.failed(s, err, 'runDue');
      } finally {
        s.running = null;
      }
    })();
    s.running = run;
    await run;
    return s.failures === 0;
  }

  private failed(s: SourceState, err: unknown, what: string): void {
    const ctx = this.ctx as AppContext;
    s.failures++;
    const backoff = Math.min(1_000 * 2 ** Math.min(s.failures - 1, 16), DUE_FAILURE_BACKOFF_MAX_MS);
    s.retryAt = ctx.clock.now() + backoff;
    ctx.log.error(`due source ${s.source.name} failed in ${what}`, { err, failures: s.failures, backoff });
  }
}

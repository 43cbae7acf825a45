import type { AppContext } from '../context';

/** A background job: one module, one name, an interval in ms, and a run that may be async. */
export interface Job {
  name: string;
  intervalMs: number;
  run(ctx: AppContext): void | Promise<void>;
  /** Abandon a run in progress (outbound requests) when the server stops, so stop() does not wait for it. */
  stop?(): void;
}

export interface SchedulerHooks {
  /** Runs first on every tick (wall-jump detection, server/jobs/alive.ts). */
  beforeTick?(): void;
}

/**
 * One scheduler owns time (conventions, habit 9). It ticks on a real timer but decides what is due by
 * the injectable clock, so tests advance a ManualClock and call tick() instead of sleeping. A job is
 * skipped while its previous run is going; failures are logged and isolated; stop() awaits running jobs.
 * The real interval runs only the jobs: per-item due times (server/jobs/due.ts) have their own timer and
 * are never polled. tick(), the test hook, also settles ctx.due: what is due runs and the work it started
 * (monitor checks) is applied before it returns.
 */
export class Scheduler {
  private readonly next = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly jobs: readonly Job[],
    private readonly tickMs = 1_000,
    private readonly hooks: SchedulerHooks = {},
  ) {}

  start(): void {
    const now = this.ctx.clock.now();
    for (const job of this.jobs) this.next.set(job.name, now + job.intervalMs);
    this.timer = setInterval(() => void this.runJobs(), this.tickMs);
    this.timer.unref();
  }

  /**
   * The test hook: runs every job that is due now and settles the due sources (their due items and the
   * checks those started); returns when all of it has been applied.
   */
  async tick(): Promise<void> {
    if (this.stopped) return;
    await Promise.all([this.runJobs(), this.ctx.due.settle()]);
  }

  /** The real interval: every job that is due now; returns when they have finished. */
  private async runJobs(): Promise<void> {
    if (this.stopped) return;
    try {
      this.hooks.beforeTick?.();
    } catch (err) {
      this.ctx.log.error('scheduler tick hook failed', { err });
    }
    const now = this.ctx.clock.now();
    const started: Promise<void>[] = [];
    for (const job of this.jobs) {
      if ((this.next.get(job.name) ?? 0) > now || this.running.has(job.name)) continue;
      this.next.set(job.name, now + job.intervalMs);
      started.push(this.runJob(job));
    }
    await Promise.all(started);
  }

  /** Runs one job now, whatever its due time (tests, and re-planning after the laptop wakes). */
  async runNow(name: string): Promise<void> {
    const job = this.jobs.find((j) => j.name === name);
    if (!job) throw new Error(`no job named ${name}`);
    await (this.running.get(name) ?? this.runJob(job));
  }

  /** After sleep/wake: re-read due times from now instead of firing everything that "was due". */
  replan(): void {
    const now = this.ctx.clock.now();
    for (const job of this.jobs) this.next.set(job.name, now + Math.min(job.intervalMs, 5_000));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const job of this.jobs) if (this.running.has(job.name)) job.stop?.();
    await Promise.allSettled([...this.running.values()]);
  }

  private runJob(job: Job): Promise<void> {
    const p = (async () => {
      try {
        await job.run(this.ctx);
      } catch (err) {
        this.ctx.log.error(`job ${job.name} failed`, { err });
      } finally {
        this.running.delete(job.name);
      }
    })();
    this.running.set(job.name, p);
    return p;
  }
}

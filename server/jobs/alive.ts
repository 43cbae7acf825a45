import type { AppContext } from '../context';
import type { Job } from './scheduler';

/** How often `aliveAt` is written (§0.6): a crash loses at most this much of the restart gap's start. */
export const ALIVE_INTERVAL_MS = 30_000;
/** A wall-clock step at least this far beyond the monotonic clock is a sleep (or a clock change). */
export const WALL_JUMP_MS = 30_000;

export type GapReason = 'restart' | 'sleep' | 'resume';

/** The stored `aliveAt` (unix ms), or null on a fresh data dir. */
export function readAliveAt(ctx: AppContext): number | null {
  const row = ctx.db.first<{ value: string }>("SELECT value FROM server_state WHERE key = 'aliveAt'");
  const n = row ? Number(row.value) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

/**
 * Notices time that passed without the server watching it, and says so once on the bus
 * (`clock:gap`), after which the due timer is re-armed:
 * - `restart`: at start(), the gap [aliveAt, start] (aliveAt is written every 30 s and at a clean stop);
 * - `sleep`: on a scheduler tick or a due-timer wake, the wall clock moved ≥ 30 s more than the
 *   monotonic clock since the last look: [last look, now];
 * - `resume`: Electron's powerMonitor says the host woke (BelfryServer.resumed()): [last look, now].
 */
export class AliveWatch {
  private lastWall = 0;
  private lastMono = 0;
  private started = false;

  constructor(private readonly ctx: AppContext) {}

  /**
   * Server start, after every feature's init and before the server listens: families' listeners
   * receive the restart gap before any request, timer wake or job.
   */
  start(): void {
    const now = this.ctx.clock.now();
    const prev = readAliveAt(this.ctx);
    this.look(now);
    this.started = true;
    if (prev !== null && now > prev) this.gap(prev, now, 'restart');
    this.write();
  }

  /** Writes aliveAt = now (relaxed: losing the last one in a crash only widens the next gap). */
  write(): void {
    const now = String(this.ctx.clock.now());
    this.ctx.db.relaxed(() =>
      this.ctx.db.run(
        "INSERT INTO server_state (key, value) VALUES ('aliveAt', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [now],
      ),
    );
  }

  /** Clean stop: a last aliveAt (a failing store is logged, never blocks the shutdown). */
  stop(): void {
    if (!this.started) return;
    this.started = false;
    try {
      this.write();
    } catch (err) {
      this.ctx.log.error('could not write aliveAt at stop', { err });
    }
  }

  /** Wall-jump detection: called on every scheduler tick and due-timer wake. */
  check(): void {
    if (!this.started) return;
    const wall = this.ctx.clock.now();
    const mono = this.ctx.clock.monotonic();
    const from = this.lastWall;
    const jump = wall - this.lastWall - (mono - this.lastMono);
    this.look(wall, mono);
    if (jump >= WALL_JUMP_MS) this.gap(from, wall, 'sleep');
  }

  /** The host woke (Electron's powerMonitor `resume`). */
  resumed(): void {
    if (!this.started) return;
    const now = this.ctx.clock.now();
    const from = this.lastWall;
    this.look(now);
    // Always said, even when a tick already noticed the sleep (then the gap is short): the host woke.
    this.gap(from, Math.max(from, now), 'resume');
  }

  /** The scheduler job that keeps aliveAt fresh. */
  job(): Job {
    return { name: 'alive', intervalMs: ALIVE_INTERVAL_MS, run: () => this.write() };
  }

  private look(wall: number, mono = this.ctx.clock.monotonic()): void {
    this.lastWall = wall;
    this.lastMono = mono;
  }

  private gap(from: number, to: number, reason: GapReason): void {
    this.ctx.log.info('clock gap', { reason, from, to, seconds: Math.round((to - from) / 1000) });
    try {
      this.ctx.bus.emit('clock:gap', { from, to, reason });
    } catch (err) {
      this.ctx.log.error('a clock:gap listener failed', { err, reason });
    }
    this.ctx.due.poke();
  }
}

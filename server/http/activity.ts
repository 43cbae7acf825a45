import type { RequestHandler } from 'express';
import type { Clock } from '../lib/clock';

/** Background upkeep (search index merging, snapshots) waits until no request came or went for this long. */
export const QUIET_AFTER_MS = 250;

/**
 * When the last HTTP request started or ended, so background upkeep (search index merging) can wait
 * for a quiet moment instead of delaying requests. Long-lived streams (SSE) count only when they open
 * and close, so an open UI does not keep the server "busy" forever.
 */
export class RequestActivity {
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Start-up counts as activity, and so does the moment after it: clients come right after a start. */
  private starting = true;

  constructor(private readonly clock: Clock) {}

  /** The server listens: quiet moments can come from now on. */
  started(): void {
    this.starting = false;
    this.touch();
  }

  middleware(): RequestHandler {
    return (_req, res, next) => {
      this.touch();
      res.once('close', () => this.touch());
      next();
    };
  }

  touch(): void {
    this.lastAt = this.clock.now();
  }

  /** No request has come or gone for QUIET_AFTER_MS: upkeep delays nobody now. */
  quiet(): boolean {
    return !this.starting && this.idleFor() >= QUIET_AFTER_MS;
  }

  /** Milliseconds since the last request started or ended. */
  private idleFor(): number {
    return this.clock.now() - this.lastAt;
  }
}

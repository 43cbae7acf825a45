import type { RequestHandler } from 'express';
import type { Clock } from '../lib/clock';

/**
 * When the last HTTP request started or ended, so background upkeep (search index merging) can wait
 * for a quiet moment instead of delaying requests. Long-lived streams (SSE) count only when they open
 * and close, so an open UI does not keep the server "busy" forever.
 */
export class RequestActivity {
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

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

  /** Milliseconds since the last request started or ended. */
  idleFor(): number {
    return this.clock.now() - this.lastAt;
  }
}

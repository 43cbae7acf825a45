import type { AppContext } from '../context';

// STAND-IN for the time helper's DueTimer (hb-common.md, Interface 1); replaced when main has it.
export interface DueSource {
  name: string;
  nextDueAt(ctx: AppContext): number | null;
  runDue(ctx: AppContext, now: number): void | Promise<void>;
}

export class DueTimer {
  private readonly sources: DueSource[] = [];
  constructor(private readonly ctx: AppContext) {}
  register(source: DueSource): void {
    this.sources.push(source);
  }
  poke(_at?: number): void {}
  async runDueNow(): Promise<void> {
    const now = this.ctx.clock.now();
    for (const s of this.sources) {
      const at = s.nextDueAt(this.ctx);
      if (at !== null && at <= now) await s.runDue(this.ctx, now);
    }
  }
}

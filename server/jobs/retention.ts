import type { AppContext } from '../context';

/**
 * Retention hooks: families register a function that deletes what their limits allow to go (message
 * count and age per channel, old check logs, ...). The retention job runs them all; each returns how
 * many rows it removed, so the job can log and snapshot after large deletes.
 */
export type RetentionTask = (ctx: AppContext) => number;

export class RetentionRegistry {
  private readonly tasks = new Map<string, RetentionTask>();
  register(name: string, task: RetentionTask): void {
    this.tasks.set(name, task);
  }
  run(ctx: AppContext): Record<string, number> {
    const removed: Record<string, number> = {};
    for (const [name, task] of this.tasks) {
      try {
        removed[name] = task(ctx);
      } catch (err) {
        ctx.log.error(`retention task ${name} failed`, { err });
      }
    }
    return removed;
  }
}

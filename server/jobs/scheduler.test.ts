import { afterEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../context';
import { ManualClock } from '../lib/clock';
import { memoryLogger } from '../lib/log';
import { DueTimer } from './due';
import { Scheduler } from './scheduler';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

describe('Scheduler', () => {
  it('the real interval runs only the jobs: due sources are never polled, their own timer wakes them', async () => {
    const clock = new ManualClock();
    const due = new DueTimer();
    const ctx = { clock, log: memoryLogger(), due } as unknown as AppContext;
    let asked = 0;
    let jobRuns = 0;
    due.register({
      name: 'counted',
      nextDueAt: () => {
        asked++;
        return null;
      },
      runDue: () => {},
    });
    const scheduler = new Scheduler(ctx, [{ name: 'job', intervalMs: 1, run: () => void jobRuns++ }], 5);
    stops.push(
      () => scheduler.stop(),
      () => due.stop(),
    );
    due.start(ctx);
    const before = asked;
    scheduler.start();
    clock.advance(1_000);
    await new Promise((r) => setTimeout(r, 60));
    expect(jobRuns).toBeGreaterThan(0);
    expect(asked).toBe(before);
    // The test hook settles the due sources too.
    await scheduler.tick();
    expect(asked).toBeGreaterThan(before);
  });
});

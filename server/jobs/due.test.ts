import { afterEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../context';
import { type Clock, ManualClock, systemClock } from '../lib/clock';
import { memoryLogger } from '../lib/log';
import { DUE_TIMER_CAP_MS, type DueSource, DueTimer } from './due';

/** A source over an in-memory list of due times; runDue applies at most `batch` of them. */
function fakeSource(name: string, dueTimes: number[], batch = 1_000) {
  const runs: number[] = [];
  const source: DueSource & { items: number[]; runs: number[] } = {
    name,
    items: [...dueTimes],
    runs,
    nextDueAt: () => (source.items.length ? Math.min(...source.items) : null),
    runDue: (_ctx, now) => {
      runs.push(now);
      source.items.sort((x, y) => x - y);
      let n = 0;
      while (n < batch && n < source.items.length && source.items[n]! <= now) n++;
      source.items.splice(0, n);
    },
  };
  return source;
}

const timers: DueTimer[] = [];
afterEach(async () => {
  await Promise.all(timers.splice(0).map((t) => t.stop()));
});

function setup(clock: Clock = new ManualClock()) {
  const log = memoryLogger();
  const ctx = { clock, log } as unknown as AppContext;
  const due = new DueTimer();
  timers.push(due);
  return { ctx, log, due, clock };
}

describe('DueTimer', () => {
  it('runs only the sources that are due, by the injected clock, and drains bounded batches', async () => {
    const { ctx, due, clock } = setup();
    const c = clock as ManualClock;
    const t0 = c.now();
    const a = fakeSource('a', [t0 + 1_000, ...Array.from({ length: 25 }, () => t0 + 2_000)], 10);
    const b = fakeSource('b', [t0 + 5_000]);
    due.register(a);
    due.register(b);
    due.start(ctx);
    await due.runDueNow();
    expect([a.runs, b.runs]).toEqual([[], []]);
    c.advance(2_000);
    await due.runDueNow();
    expect(a.items).toEqual([]); // 26 items in batches of 10: three runs, all in one runDueNow
    expect(a.runs).toEqual([t0 + 2_000, t0 + 2_000, t0 + 2_000]);
    expect(b.runs).toEqual([]);
    expect(due.armedAt).toBe(t0 + 5_000);
    c.advance(3_000);
    await due.runDueNow();
    expect(b.runs).toEqual([t0 + 5_000]);
  });

  it('lets the event loop in between the batches of a backlog', async () => {
    const { ctx, due, clock } = setup();
    let left = 3;
    let ioTurn = false;
    let backlog = false; // nothing due at start(), so the real timer is armed at its cap and never races runDueNow
    const seen: boolean[] = [];
    due.register({
      name: 'backlog',
      nextDueAt: () => (backlog && left > 0 ? clock.now() : null),
      runDue: () => {
        seen.push(ioTurn);
        ioTurn = false;
        setImmediate(() => {
          ioTurn = true;
        });
        left--;
      },
    });
    due.start(ctx);
    backlog = true;
    await due.runDueNow();
    expect(seen).toEqual([false, true, true]);
  });

  it('arms for the earliest due time, capped so that wall-clock jumps are noticed; poke re-arms earlier only', async () => {
    const { ctx, due, clock } = setup();
    const now = clock.now();
    const a = fakeSource('a', [now + 3_600_000]);
    due.register(a);
    expect(due.armedAt).toBeNull(); // nothing is armed before start
    due.start(ctx);
    expect(due.armedAt).toBe(now + DUE_TIMER_CAP_MS);
    a.items.push(now + 10_000);
    due.poke(now + 10_000);
    expect(due.armedAt).toBe(now + 10_000);
    due.poke(now + 20_000); // later than armed: nothing to do
    expect(due.armedAt).toBe(now + 10_000);
    a.items.push(now + 5_000);
    due.poke(); // no time given: the sources' new earliest
    expect(due.armedAt).toBe(now + 5_000);
    (clock as ManualClock).sleep(60_000); // the wall clock jumped past the armed time without a wake
    due.poke(now + 70_000);
    // The passed armed time is due work now: fire at once, never re-arm for the later time.
    expect(due.armedAt).toBe(clock.now());
    await due.stop();
    expect(due.armedAt).toBeNull();
    due.poke(now + 1_000);
    expect(due.armedAt).toBeNull();
    (clock as ManualClock).advance(3_600_000);
    await due.runDueNow();
    expect(a.runs).toEqual([]); // stopped: nothing runs
  });

  it('isolates a failing source: logged, the others still run, retried with a back-off instead of spinning', async () => {
    const { ctx, due, clock, log } = setup();
    const c = clock as ManualClock;
    let calls = 0;
    let failing = true;
    let badDone = false;
    const bad: DueSource = {
      name: 'bad',
      nextDueAt: () => (badDone ? null : c.now() - 1), // due until it succeeds once
      runDue: () => {
        calls++;
        if (failing) throw new Error('boom');
        badDone = true;
      },
    };
    const broken: DueSource = {
      name: 'broken',
      nextDueAt: () => {
        throw new Error('no such table');
      },
      runDue: () => {},
    };
    const good = fakeSource('good', [c.now() + 1_000]);
    due.register(bad);
    due.register(broken);
    due.register(good);
    due.start(ctx);
    c.advance(1_000);
    await due.runDueNow();
    expect(good.runs).toHaveLength(1);
    expect(calls).toBe(1); // not repeated within one runDueNow
    expect(log.lines.filter((l) => l.includes('due source bad failed'))).toHaveLength(1);
    expect(log.lines.some((l) => l.includes('due source broken failed in nextDueAt'))).toBe(true);
    await due.runDueNow();
    expect(calls).toBe(1); // backing off (1 s)
    c.advance(1_000);
    await due.runDueNow();
    expect(calls).toBe(2);
    c.advance(1_000);
    await due.runDueNow();
    expect(calls).toBe(2); // second failure: 2 s
    expect(due.armedAt).not.toBeNull(); // the timer is still armed
    failing = false;
    c.advance(1_000);
    await due.runDueNow();
    expect(calls).toBe(3);
    expect(badDone).toBe(true);
    expect(log.lines.some((l) => l.includes('due source bad recovered'))).toBe(true);
  });

  it('a source whose runDue is slow never overlaps itself; a second runDueNow waits for it', async () => {
    const { ctx, due, clock } = setup();
    const c = clock as ManualClock;
    let active = 0;
    let maxActive = 0;
    let hold = true;
    const gates: (() => void)[] = [];
    const items = [c.now() + 1_000, c.now() + 3_000];
    const slow: DueSource = {
      name: 'slow',
      nextDueAt: () => (items.length ? Math.min(...items) : null),
      runDue: async (_ctx, now) => {
        active++;
        maxActive = Math.max(maxActive, active);
        if (hold) await new Promise<void>((r) => gates.push(r));
        for (let i = items.length - 1; i >= 0; i--) if (items[i]! <= now) items.splice(i, 1);
        active--;
      },
    };
    due.register(slow);
    due.start(ctx);
    c.advance(1_000);
    const first = due.runDueNow();
    await Promise.resolve();
    c.advance(2_000); // the second item falls due while the first run is going
    const second = due.runDueNow();
    await new Promise((r) => setImmediate(r));
    expect([active, gates.length]).toEqual([1, 1]); // the second call waits instead of starting another run
    hold = false;
    gates.shift()!();
    await Promise.all([first, second]);
    expect(maxActive).toBe(1);
    expect(items).toEqual([]); // and then runs the source again for the item that fell due meanwhile
  });

  it('with the real timer: a source due 20 ms ahead runs without anyone calling runDueNow', async () => {
    const { ctx, due } = setup(systemClock);
    let ran!: (now: number) => void;
    const done = new Promise<number>((r) => {
      ran = r;
    });
    const items: number[] = [];
    due.register({
      name: 'soon',
      nextDueAt: () => items[0] ?? null,
      runDue: (_c, now) => {
        if (items[0] !== undefined && items[0] <= now) {
          items.shift();
          ran(now);
        }
      },
    });
    due.start(ctx);
    const at = systemClock.now() + 20;
    items.push(at);
    due.poke(at);
    expect(await done).toBeGreaterThanOrEqual(at);
  });

  it('with the real timer: a source that always throws neither spins nor keeps the others from running', async () => {
    const { ctx, due } = setup(systemClock);
    let badCalls = 0;
    due.register({
      name: 'bad',
      nextDueAt: () => 0,
      runDue: () => {
        badCalls++;
        throw new Error('boom');
      },
    });
    let ran!: () => void;
    const done = new Promise<void>((r) => {
      ran = r;
    });
    const at = systemClock.now() + 30;
    let pending = true;
    due.register({
      name: 'good',
      nextDueAt: () => (pending ? at : null),
      runDue: (_c, now) => {
        if (pending && at <= now) {
          pending = false;
          ran();
        }
      },
    });
    due.start(ctx);
    await done;
    expect(badCalls).toBe(1); // the 1 s back-off holds it
  });
});

describe('DueTimer.settle (the test hook behind Scheduler.tick)', () => {
  it('waits for the work a source started without awaiting, and runs what became due meanwhile', async () => {
    const { ctx, due, clock } = setup();
    const c = clock as ManualClock;
    const applied: number[] = [];
    let pending: Promise<void>[] = [];
    const items = [c.now()];
    due.register({
      name: 'pool',
      nextDueAt: () => (items.length ? Math.min(...items) : null),
      runDue: (_ctx, now) => {
        const at = items.shift()!;
        // Started, not awaited (a monitor check): applied later; the first one leaves another item due.
        pending.push(
          new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() => {
            applied.push(at);
            if (applied.length === 1) items.push(now);
          }),
        );
      },
      idle: async () => {
        const p = pending;
        pending = [];
        await Promise.all(p);
      },
    });
    due.start(ctx);
    await due.settle();
    expect(applied).toEqual([c.now(), c.now()]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../server/context';
import type { Feature } from '../../server/features/index';
import { ALIVE_INTERVAL_MS, readAliveAt } from '../../server/jobs/alive';
import type { BusEvents } from '../../server/lib/bus';
import { ManualClock } from '../../server/lib/clock';
import { type FakeHttp, startFakeHttp } from '../helpers/fake-http';
import { startTestServer, type TestServer } from '../helpers/test-server';

const MIN = 60_000;
/** What the test family does on a gap (like heartbeats): items that fell due during it move to `to + PUSH_MS`. */
const PUSH_MS = 45_000;

type Gap = BusEvents['clock:gap'] & { armedAtInListener: number | null };

/**
 * A stand-in family: its due items live in a table (so a restart resumes them), it registers a
 * DueSource at init and pushes items that fell due during a clock gap, as heartbeats do.
 */
function timeFamily() {
  const gaps: Gap[] = [];
  const ran: { id: number; now: number }[] = [];
  const waiters: (() => void)[] = [];
  const feature: Feature = {
    name: 'time-test',
    init: (ctx) => {
      ctx.db.exec('CREATE TABLE IF NOT EXISTS test_due (id INTEGER PRIMARY KEY, due_at INTEGER NOT NULL)');
      ctx.bus.on('clock:gap', (g) => {
        gaps.push({ ...g, armedAtInListener: ctx.due.armedAt });
        ctx.db.run('UPDATE test_due SET due_at = ? WHERE due_at <= ?', [g.to + PUSH_MS, g.to]);
      });
      ctx.due.register({
        name: 'test',
        nextDueAt: (c) =>
          c.db.first<{ at: number | null }>('SELECT MIN(due_at) AS at FROM test_due')?.at ?? null,
        runDue: (c, now) => {
          const rows = c.db.all<{ id: number }>('SELECT id FROM test_due WHERE due_at <= ? ORDER BY id', [
            now,
          ]);
          c.db.run('DELETE FROM test_due WHERE due_at <= ?', [now]);
          for (const r of rows) ran.push({ id: r.id, now });
          if (rows.length) for (const w of waiters.splice(0)) w();
        },
      });
    },
  };
  const add = (ctx: AppContext, id: number, dueAt: number) => {
    ctx.db.run('INSERT INTO test_due (id, due_at) VALUES (?, ?)', [id, dueAt]);
    ctx.due.poke(dueAt);
  };
  const nextRun = () => new Promise<void>((r) => waiters.push(r));
  return { feature, gaps, ran, add, nextRun };
}

describe('time: due timer, aliveAt and clock gaps', () => {
  let dataDir: string;
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const start = async (clock: ManualClock, fam: ReturnType<typeof timeFamily>) => {
    const s = await startTestServer({ dataDir, clock, extraFeatures: [fam.feature] });
    servers.push(s);
    return s;
  };

  it('writes aliveAt every 30 s and at a clean stop; a restart emits [aliveAt, start] before anything runs, and due items resume from the database', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'belfry-time-'));
    const clock = new ManualClock();
    const fam1 = timeFamily();
    const t1 = await start(clock, fam1);
    expect(fam1.gaps).toEqual([]); // a fresh data dir has no gap
    expect(readAliveAt(t1.server.ctx)).toBe(clock.now());
    clock.advance(ALIVE_INTERVAL_MS);
    await t1.server.scheduler.tick();
    expect(readAliveAt(t1.server.ctx)).toBe(clock.now());

    fam1.add(t1.server.ctx, 1, clock.now() + 5 * MIN); // falls due while the server is down
    fam1.add(t1.server.ctx, 2, clock.now() + 60 * MIN); // after the restart
    clock.advance(MIN);
    await t1.server.scheduler.tick();
    expect(fam1.ran).toEqual([]);
    const stoppedAt = clock.now();
    await t1.close();
    servers.length = 0;

    clock.advance(10 * MIN);
    const fam2 = timeFamily();
    const t2 = await start(clock, fam2);
    const restartedAt = clock.now();
    expect(fam2.gaps.map(({ armedAtInListener: _, ...g }) => g)).toEqual([
      { from: stoppedAt, to: restartedAt, reason: 'restart' },
    ]);
    await t2.server.scheduler.tick();
    expect(fam2.ran).toEqual([]); // pushed by the gap listener instead of firing at start
    expect(t2.server.ctx.due.armedAt).toBe(restartedAt + PUSH_MS);
    clock.advance(PUSH_MS);
    await t2.server.scheduler.tick();
    expect(fam2.ran).toEqual([{ id: 1, now: restartedAt + PUSH_MS }]);
    clock.advance(60 * MIN);
    await t2.server.scheduler.tick();
    expect(fam2.ran.map((r) => r.id)).toEqual([1, 2]);
  });

  it('a wall-clock jump of 30 s or more beyond the monotonic clock is a sleep gap, noticed once on the next tick; the due timer is re-armed after the listeners', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'belfry-time-'));
    const clock = new ManualClock();
    const fam = timeFamily();
    const t = await start(clock, fam);
    clock.advance(30 * MIN); // awake time: both clocks move
    await t.server.scheduler.tick();
    clock.sleep(29_000); // below the threshold
    await t.server.scheduler.tick();
    expect(fam.gaps).toEqual([]);

    fam.add(t.server.ctx, 1, clock.now() + 2 * MIN);
    const lastTick = clock.now();
    clock.sleep(20 * MIN);
    await t.server.scheduler.tick();
    expect(fam.gaps).toEqual([
      { from: lastTick, to: lastTick + 20 * MIN, reason: 'sleep', armedAtInListener: lastTick + MIN },
    ]);
    // The listener pushed the item past the wake; the timer now points at the pushed time, not the old cap.
    expect(t.server.ctx.due.armedAt).toBe(lastTick + 20 * MIN + PUSH_MS);
    expect(fam.ran).toEqual([]);
    await t.server.scheduler.tick();
    expect(fam.gaps).toHaveLength(1);
    clock.advance(PUSH_MS);
    await t.server.scheduler.tick();
    expect(fam.ran.map((r) => r.id)).toEqual([1]);
  });

  it('the real due timer notices a sleep on its own wake and runs what is due, without a scheduler tick', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'belfry-time-'));
    const clock = new ManualClock();
    const fam = timeFamily();
    const t = await start(clock, fam);
    const gap = new Promise<BusEvents['clock:gap']>((r) => t.server.ctx.bus.on('clock:gap', r));
    clock.sleep(5 * MIN);
    const wokeAt = clock.now();
    fam.add(t.server.ctx, 7, wokeAt - 1); // due: the timer is armed for now and wakes at once
    expect(await gap).toMatchObject({ to: wokeAt, reason: 'sleep' });
    // Item 7 fell due within the gap: the listener pushed it. Item 8, due now, runs on the timer alone.
    const ran = fam.nextRun();
    fam.add(t.server.ctx, 8, wokeAt);
    await ran;
    expect(fam.ran).toEqual([{ id: 8, now: wokeAt }]);
  });

  it('resumed() (Electron powerMonitor resume) emits a resume gap from the last look and re-arms the timer', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'belfry-time-'));
    const clock = new ManualClock();
    const fam = timeFamily();
    const t = await start(clock, fam);
    await t.server.scheduler.tick();
    const lastTick = clock.now();
    fam.add(t.server.ctx, 1, lastTick + 10_000);
    clock.sleep(3 * MIN);
    t.server.resumed();
    expect(fam.gaps).toEqual([
      { from: lastTick, to: lastTick + 3 * MIN, reason: 'resume', armedAtInListener: lastTick + 10_000 },
    ]);
    expect(t.server.ctx.due.armedAt).toBe(lastTick + 3 * MIN + PUSH_MS);
    await t.server.scheduler.tick(); // the jump was already accounted for: no second (sleep) gap
    expect(fam.gaps).toHaveLength(1);
  });
});

describe('time: watch the watcher (self-ping)', () => {
  let fake: FakeHttp;
  let t: TestServer;
  const replies: number[] = [];
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('GET', '/ping/', () => ({ status: replies.shift() ?? 200 }));
    t = await startTestServer({
      config: { selfPingUrl: `${fake.url}/ping/abc-secret`, selfPingIntervalS: 60 },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('GETs BELFRY_SELF_PING_URL every interval; a failure streak is warned once (origin only), retried, and its end logged', async () => {
    await t.server.scheduler.tick();
    expect(fake.requests).toHaveLength(0);
    t.clock.advance(60_000);
    await t.server.scheduler.tick();
    expect(fake.requests.map((r) => [r.method, r.path])).toEqual([['GET', '/ping/abc-secret']]);
    expect(fake.requests[0]!.headers['user-agent']).toMatch(/^Belfry\//);
    t.clock.advance(30_000);
    await t.server.scheduler.tick();
    expect(fake.requests).toHaveLength(1);

    replies.push(500, 503);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(60_000);
      await t.server.scheduler.tick();
    }
    expect(fake.requests).toHaveLength(4);
    const warns = t.log.lines.filter((l) => l.includes('WARN self-ping failed'));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toContain('HTTP 500');
    expect(warns[0]).toContain(fake.url);
    expect(t.log.lines.join('\n')).not.toContain('abc-secret');
    expect(t.log.lines.some((l) => l.includes('INFO self-ping recovered'))).toBe(true);
  });

  it('a refused connection is a logged failure that never throws out of the scheduler', async () => {
    const dead = await startFakeHttp();
    const url = `${dead.url}/ping/x`;
    await dead.close(); // nothing listens there any more
    const s = await startTestServer({ config: { selfPingUrl: url } });
    try {
      s.clock.advance(60_000);
      await s.server.scheduler.tick();
      expect(s.log.lines.filter((l) => l.includes('WARN self-ping failed'))).toHaveLength(1);
      expect(s.log.lines.some((l) => l.includes('job self-ping failed'))).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('a target that never answers does not hold up the shutdown', async () => {
    const slow = await startFakeHttp();
    slow.on('GET', '/', { delayMs: 60_000 });
    const s = await startTestServer({ config: { selfPingUrl: `${slow.url}/ping/slow` } });
    try {
      s.clock.advance(60_000);
      const tick = s.server.scheduler.tick();
      await slow.waitFor(1);
      await s.close(); // aborts the request in flight (the 10 s request timeout would fail this test)
      await tick;
      expect(s.log.lines.some((l) => l.includes('self-ping failed') && l.includes('server stopping'))).toBe(
        true,
      );
    } finally {
      await s.close();
      await slow.close();
    }
  });
});

import initSqlJs from 'sql.js';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../context';
import { SqlJsDb } from '../../db/database';
import { migrate } from '../../db/migrate';
import { migrations } from '../../db/migrations.generated';
import { ManualClock } from '../../lib/clock';
import {
  CHECKS_PER_SOURCE_MAX,
  DAY_MS,
  forgetSource,
  historySummary,
  nearestRank,
  pageChecks,
  recordCheck,
  recordGap,
  recordStatus,
  registerHistoryKind,
  trimHistory,
  uptimePercent,
} from './service';

const H = 3_600_000;
let SQL: Awaited<ReturnType<typeof initSqlJs>>;
let ctx: AppContext;
let clock: ManualClock;
/** 2026-01-15T12:00:00Z, the ManualClock's default. */
const NOW = Date.UTC(2026, 0, 15, 12);

beforeAll(async () => {
  SQL = await initSqlJs();
});
beforeEach(() => {
  const db = new SqlJsDb(new SQL.Database());
  migrate(db, migrations, 0);
  clock = new ManualClock(NOW);
  ctx = { db, clock } as unknown as AppContext;
  registerHistoryKind(ctx, {
    kind: 'fake',
    upStatuses: ['up', 'late'],
    downStatuses: ['down'],
    maintenanceStatuses: ['maintenance'],
  });
});

const summary = (id = 1) => historySummary(ctx, 'fake', id, clock.now());
const day = (s: ReturnType<typeof summary>, date: string) => s.days.find((d) => d.date === date);

describe('uptime arithmetic', () => {
  it('uptimePercent truncates to 3 decimals, so any down time shows below 100, and is null without up or down time', () => {
    expect(uptimePercent(2, 1)).toBe(66.666);
    // Rounding would show these as 100.
    expect(uptimePercent(DAY_MS - 1, 1)).toBe(99.999);
    expect(uptimePercent(90 * DAY_MS - 1, 1)).toBe(99.999);
    expect(uptimePercent(1, 0)).toBe(100);
    expect(uptimePercent(0, 5)).toBe(0);
    expect(uptimePercent(0, 0)).toBeNull();
  });

  it('nearestRank takes the value at rank ceil(p × n)', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(twenty, 95)).toBe(19);
    expect(nearestRank([7], 95)).toBe(7);
    expect(
      nearestRank(
        Array.from({ length: 21 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(20);
    expect(nearestRank([], 95)).toBeNull();
  });
});

describe('historySummary', () => {
  it('counts the open interval up to now, in every window and in today', () => {
    recordStatus(ctx, 'fake', 1, 'up', NOW - 2 * H);
    recordStatus(ctx, 'fake', 1, 'down', NOW - H);
    const s = summary();
    expect(s.uptime).toEqual({ '24h': 50, '7d': 50, '30d': 50, '90d': 50 });
    expect(day(s, '2026-01-15')).toEqual({
      date: '2026-01-15',
      uptime: 50,
      status: 'down',
      downSec: 3600,
      avgMs: null,
    });
    clock.advance(H);
    expect(summary().uptime['24h']).toBe(33.333);
  });

  it('gives 90 days oldest first ending today, splits intervals at UTC midnight, none before the first status', () => {
    recordStatus(ctx, 'fake', 1, 'up', Date.UTC(2026, 0, 14, 23));
    recordStatus(ctx, 'fake', 1, 'down', Date.UTC(2026, 0, 15, 1));
    recordStatus(ctx, 'fake', 1, 'up', Date.UTC(2026, 0, 15, 2));
    const s = summary();
    expect(s.days).toHaveLength(90);
    expect(s.days[0]!.date).toBe('2025-10-18');
    expect(s.days[89]!.date).toBe('2026-01-15');
    expect(day(s, '2026-01-13')).toEqual({
      date: '2026-01-13',
      uptime: null,
      status: 'none',
      downSec: 0,
      avgMs: null,
    });
    expect(day(s, '2026-01-14')).toMatchObject({ uptime: 100, status: 'up', downSec: 0 });
    // 01-15: up 00-01 and 02-12 (open), down 01-02: 11 of 12 hours.
    expect(day(s, '2026-01-15')).toMatchObject({ uptime: 91.666, status: 'down', downSec: 3600 });
    expect(s.uptime['24h']).toBe(92.307); // 12 h up of 13 h known (from 23:00 yesterday)
  });

  it('clips the 24h window inside its first day from the intervals, not the whole day', () => {
    recordStatus(ctx, 'fake', 1, 'up', NOW - 48 * H);
    recordStatus(ctx, 'fake', 1, 'down', NOW - 30 * H);
    recordStatus(ctx, 'fake', 1, 'up', NOW - 20 * H);
    const s = summary();
    // [now-24h, now]: down 4 h (until now-20h), up 20 h.
    expect(s.uptime['24h']).toBe(83.333);
    // 48 h known: up 18 h + 20 h, down 10 h.
    expect(s.uptime['7d']).toBe(79.166);
    expect(s.uptime['90d']).toBe(79.166);
  });

  it('keeps an open interval started many days ago in every day it covers', () => {
    recordStatus(ctx, 'fake', 1, 'late', NOW - 10 * DAY_MS);
    const s = summary();
    expect(s.days.filter((d) => d.status === 'up')).toHaveLength(11);
    expect(s.days.filter((d) => d.status === 'none')).toHaveLength(79);
    expect(s.uptime).toEqual({ '24h': 100, '7d': 100, '30d': 100, '90d': 100 });
  });

  it('excludes unknown gaps and statuses outside up/down; maintenance shows on its day only', () => {
    recordStatus(ctx, 'fake', 1, 'down', NOW - 4 * H);
    recordGap(ctx, 'fake', 1, NOW - 3 * H, NOW - 2 * H);
    recordStatus(ctx, 'fake', 1, 'up', NOW - H);
    // down 1 h, unknown 1 h (not counted), down again 1 h, up 1 h.
    expect(summary().uptime['24h']).toBe(33.333);
    expect(
      ctx.db.all('SELECT status, start_at, end_at FROM history_intervals ORDER BY start_at', []),
    ).toEqual([
      { status: 'down', start_at: NOW - 4 * H, end_at: NOW - 3 * H },
      { status: 'unknown', start_at: NOW - 3 * H, end_at: NOW - 2 * H },
      { status: 'down', start_at: NOW - 2 * H, end_at: NOW - H },
      { status: 'up', start_at: NOW - H, end_at: null },
    ]);

    recordStatus(ctx, 'fake', 2, 'new', NOW - 5 * H);
    recordStatus(ctx, 'fake', 2, 'paused', NOW - 4 * H);
    recordStatus(ctx, 'fake', 2, 'pending', NOW - 3 * H);
    recordStatus(ctx, 'fake', 2, 'maintenance', NOW - 2 * H);
    const s2 = summary(2);
    expect(s2.uptime).toEqual({ '24h': null, '7d': null, '30d': null, '90d': null });
    expect(day(s2, '2026-01-15')).toMatchObject({ uptime: null, status: 'maintenance', downSec: 0 });
  });

  it('ignores a repeated status and never closes an interval before it started', () => {
    recordStatus(ctx, 'fake', 1, 'up', NOW - 2 * H);
    recordStatus(ctx, 'fake', 1, 'up', NOW - H);
    recordStatus(ctx, 'fake', 1, 'down', NOW - 3 * H);
    expect(ctx.db.all('SELECT status, start_at, end_at FROM history_intervals ORDER BY id', [])).toEqual([
      { status: 'down', start_at: NOW - 2 * H, end_at: null },
    ]);
    expect(summary().uptime['24h']).toBe(0);
  });

  it('reads response times of successful checks in the last 24 h: average and nearest-rank p95', () => {
    for (let i = 1; i <= 20; i++)
      recordCheck(ctx, 'fake', 1, { at: NOW - i * 60_000, ok: true, status: 'up', responseTimeMs: i });
    recordCheck(ctx, 'fake', 1, { at: NOW - 1000, ok: false, status: 'down', responseTimeMs: 5000 });
    recordCheck(ctx, 'fake', 1, { at: NOW - DAY_MS - 1, ok: true, status: 'up', responseTimeMs: 900 });
    const s = summary();
    expect(s.responseTime).toEqual({ avgMs: 11, p95Ms: 19 });
    expect(day(s, '2026-01-15')!.avgMs).toBe(11);
    expect(day(s, '2026-01-14')!.avgMs).toBe(900);
    expect(historySummary(ctx, 'fake', 9, NOW).responseTime).toEqual({ avgMs: null, p95Ms: null });
  });
});

describe('the check log', () => {
  it('pages newest first below a cursor', () => {
    for (let i = 0; i < 5; i++) recordCheck(ctx, 'fake', 1, { at: NOW + i, ok: true, status: 'up' });
    recordCheck(ctx, 'fake', 2, { at: NOW, ok: true, status: 'up' });
    const first = pageChecks(ctx, 'fake', 1, 0, 2);
    expect(first.map((r) => r.at)).toEqual([NOW + 4, NOW + 3]);
    expect(pageChecks(ctx, 'fake', 1, first[1]!.id, 10).map((r) => r.at)).toEqual([NOW + 2, NOW + 1, NOW]);
  });

  it('drops checks older than 7 days on the next insert, and keeps at most 10,000 per source', () => {
    recordCheck(ctx, 'fake', 1, { at: NOW - 8 * DAY_MS, ok: true, status: 'up' });
    recordCheck(ctx, 'fake', 1, { at: NOW, ok: true, status: 'up' });
    expect(pageChecks(ctx, 'fake', 1, 0, 10).map((r) => r.at)).toEqual([NOW]);
    ctx.db.transaction(() => {
      for (let i = 1; i <= CHECKS_PER_SOURCE_MAX + 2; i++)
        recordCheck(ctx, 'fake', 1, { at: NOW + i, ok: true, status: 'up' });
    });
    const n = (id: number) =>
      ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM history_checks WHERE source_id = ?', [id])!.n;
    expect(n(1)).toBe(CHECKS_PER_SOURCE_MAX);
    expect(pageChecks(ctx, 'fake', 1, 0, 1)[0]!.at).toBe(NOW + CHECKS_PER_SOURCE_MAX + 2);
    expect(
      ctx.db.first<{ at: number }>('SELECT min(at) AS at FROM history_checks WHERE source_id = 1', [])!.at,
    ).toBe(NOW + 3);
  });

  it('retention trims old checks, intervals and days; forgetSource removes everything of one source', () => {
    recordStatus(ctx, 'fake', 1, 'up', NOW - 500 * DAY_MS);
    recordStatus(ctx, 'fake', 1, 'down', NOW - 450 * DAY_MS);
    recordStatus(ctx, 'fake', 1, 'up', NOW - H);
    ctx.db.run(
      "INSERT INTO history_checks (kind, source_id, at, ok, status) VALUES ('fake', 1, ?, 1, 'up')",
      [NOW - 8 * DAY_MS],
    );
    recordCheck(ctx, 'fake', 2, { at: NOW, ok: true, status: 'up' });
    expect(trimHistory(ctx)).toBeGreaterThan(50);
    expect(ctx.db.all('SELECT status FROM history_intervals WHERE source_id = 1', [])).toEqual([
      { status: 'down' },
      { status: 'up' },
    ]);
    expect(ctx.db.first('SELECT min(day) AS d FROM history_days', [])).toEqual({
      d: Math.floor(NOW / DAY_MS) - 400,
    });
    forgetSource(ctx, 'fake', 1);
    for (const table of ['history_intervals', 'history_days', 'history_checks'])
      expect(ctx.db.all(`SELECT 1 FROM ${table} WHERE source_id = 1`, [])).toEqual([]);
    expect(pageChecks(ctx, 'fake', 2, 0, 10)).toHaveLength(1);
  });
});

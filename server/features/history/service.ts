import type { AppContext } from '../../context';
import type { Db } from '../../db/database';

/**
 * Status history of sources (docs/api.md, "Source history"), shared by heartbeats now and monitors later:
 * status intervals, daily aggregates (UTC days), the check / ping log, and the uptime arithmetic.
 * Every writer here is synchronous and runs inside the caller's transaction when called from one.
 */
export type HistoryStatus = string;

export interface HistoryKind {
  kind: string;
  upStatuses: string[];
  downStatuses: string[];
  maintenanceStatuses?: string[];
}

export interface CheckEntry {
  at: number;
  ok: boolean;
  status: string;
  responseTimeMs?: number | null;
  error?: string;
  /** Family fields shown on the log entry (heartbeats: pingKind, exitCode, body). */
  extra?: Record<string, unknown>;
}

export type UptimeClass = 'up' | 'down' | 'maintenance' | 'other';

export const DAY_MS = 86_400_000;
/** Checks and pings: kept 7 days, at most 10,000 per source. Intervals and days: 400 days. */
export const CHECK_KEEP_MS = 7 * DAY_MS;
export const CHECKS_PER_SOURCE_MAX = 10_000;
export const HISTORY_KEEP_DAYS = 400;
export const HISTORY_DAYS_SHOWN = 90;
/** The status word of a gap (sleep, restart): excluded from uptime. */
export const UNKNOWN = 'unknown';

interface PerServer {
  kinds: Map<string, HistoryKind>;
  /** Checks per source as counted here, so an insert knows when to trim without a count(*). */
  checkCounts: Map<string, number>;
}
const perServer = new WeakMap<AppContext, PerServer>();

function state(ctx: AppContext): PerServer {
  let s = perServer.get(ctx);
  if (!s) {
    s = { kinds: new Map(), checkCounts: new Map() };
    perServer.set(ctx, s);
  }
  return s;
}

export function registerHistoryKind(ctx: AppContext, k: HistoryKind): void {
  state(ctx).kinds.set(k.kind, k);
}

/** Which uptime class a status word counts in; anything not listed (new, pending, paused, unknown) is excluded. */
export function classify(k: HistoryKind | undefined, status: string): UptimeClass {
  if (!k || status === UNKNOWN) return 'other';
  if (k.upStatuses.includes(status)) return 'up';
  if (k.downStatuses.includes(status)) return 'down';
  if (k.maintenanceStatuses?.includes(status)) return 'maintenance';
  return 'other';
}

export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

interface IntervalRow {
  id: number;
  status: string;
  class: UptimeClass;
  start_at: number;
  end_at: number | null;
}

/** Adds a closed stretch [from, to) of one class to the daily aggregates, split at UTC midnights. */
function addToDays(db: Db, kind: string, id: number, cls: UptimeClass, from: number, to: number): void {
  if (cls === 'other' || to <= from) return;
  const column = cls === 'up' ? 'up_ms' : cls === 'down' ? 'down_ms' : 'maintenance_ms';
  for (let day = dayOf(from); day * DAY_MS < to; day++) {
    const ms = Math.min(to, (day + 1) * DAY_MS) - Math.max(from, day * DAY_MS);
    if (ms <= 0) continue;
    db.run(
      `INSERT INTO history_days (kind, source_id, day, ${column}) VALUES (?, ?, ?, ?)
       ON CONFLICT (kind, source_id, day) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
      [kind, id, day, ms],
    );
  }
}

function openInterval(db: Db, kind: string, id: number): IntervalRow | undefined {
  return db.first<IntervalRow>(
    `SELECT id, status, class, start_at, end_at FROM history_intervals
     WHERE kind = ? AND source_id = ? AND end_at IS NULL ORDER BY start_at DESC LIMIT 1`,
    [kind, id],
  );
}

/**
 * Closes the open interval (`open`, when the caller has read it already) at `at` (never before its
 * start; one closed at its start is removed); returns it as closed, or undefined when there was none.
 */
function closeOpen(
  db: Db,
  kind: string,
  id: number,
  at: number,
  open = openInterval(db, kind, id),
): IntervalRow | undefined {
  if (!open) return undefined;
  const end = Math.max(at, open.start_at);
  // A status replaced at the instant it began leaves nothing behind (no empty intervals pile up).
  if (end === open.start_at) db.run('DELETE FROM history_intervals WHERE id = ?', [open.id]);
  else db.run('UPDATE history_intervals SET end_at = ? WHERE id = ?', [end, open.id]);
  addToDays(db, kind, id, open.class, open.start_at, end);
  return { ...open, end_at: end };
}

function insertInterval(
  db: Db,
  kind: string,
  id: number,
  status: string,
  cls: UptimeClass,
  from: number,
  to: number | null,
): void {
  db.run(
    'INSERT INTO history_intervals (kind, source_id, status, class, start_at, end_at) VALUES (?, ?, ?, ?, ?, ?)',
    [kind, id, status, cls, from, to],
  );
}

/** The source's status changed at `at` (closes the open interval, opens a new one, updates daily aggregates). */
export function recordStatus(ctx: AppContext, kind: string, id: number, status: string, at: number): void {
  ctx.db.transaction(() => {
    const open = openInterval(ctx.db, kind, id);
    if (open && open.status === status) return;
    const closed = closeOpen(ctx.db, kind, id, at, open);
    const from = closed ? closed.end_at! : at;
    insertInterval(ctx.db, kind, id, status, classify(state(ctx).kinds.get(kind), status), from, null);
  });
}

/**
 * An unknown gap [from, to] (sleep, restart): excluded from uptime and shown as unknown. The status
 * the source had before the gap is open again from `to` (the family records any change after it).
 */
export function recordGap(ctx: AppContext, kind: string, id: number, from: number, to: number): void {
  if (to <= from) return;
  ctx.db.transaction(() => {
    const closed = closeOpen(ctx.db, kind, id, from);
    const start = closed ? Math.max(from, closed.end_at!) : from;
    if (to <= start) {
      if (closed) insertInterval(ctx.db, kind, id, closed.status, closed.class, closed.end_at!, null);
      return;
    }
    insertInterval(ctx.db, kind, id, UNKNOWN, 'other', start, to);
    if (closed) insertInterval(ctx.db, kind, id, closed.status, closed.class, to, null);
  });
}

const sourceKey = (kind: string, id: number) => `${kind}\u0000${id}`;

/**
 * One check or ping for the log. Trimmed on the way in, cheaply: the two oldest rows of the source go
 * when they are past 7 days, and the oldest ones beyond 10,000 (the count is kept in memory, read once
 * per source; the retention task trims everything and recounts).
 */
export function recordCheck(ctx: AppContext, kind: string, id: number, e: CheckEntry): void {
  const db = ctx.db;
  const counts = state(ctx).checkCounts;
  const key = sourceKey(kind, id);
  db.transaction(() => {
    let count =
      counts.get(key) ??
      db.first<{ n: number }>('SELECT count(*) AS n FROM history_checks WHERE kind = ? AND source_id = ?', [
        kind,
        id,
      ])!.n;
    const rt = e.responseTimeMs ?? null;
    db.run(
      `INSERT INTO history_checks (kind, source_id, at, ok, status, response_ms, error, extra)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        kind,
        id,
        e.at,
        e.ok ? 1 : 0,
        e.status,
        rt,
        e.error ?? null,
        e.extra && Object.keys(e.extra).length > 0 ? JSON.stringify(e.extra) : null,
      ],
    );
    count++;
    if (e.ok && rt !== null)
      db.run(
        `INSERT INTO history_days (kind, source_id, day, rt_sum, rt_count) VALUES (?, ?, ?, ?, 1)
         ON CONFLICT (kind, source_id, day) DO UPDATE SET rt_sum = rt_sum + excluded.rt_sum, rt_count = rt_count + 1`,
        [kind, id, dayOf(e.at), Math.round(rt)],
      );
    const excess = Math.max(0, count - CHECKS_PER_SOURCE_MAX);
    const oldest = db.all<{ id: number; at: number }>(
      'SELECT id, at FROM history_checks WHERE kind = ? AND source_id = ? ORDER BY id LIMIT ?',
      [kind, id, Math.max(2, excess)],
    );
    const cutoff = ctx.clock.now() - CHECK_KEEP_MS;
    const gone = oldest.filter((r, i) => i < excess || r.at < cutoff).map((r) => r.id);
    if (gone.length > 0) {
      db.run(`DELETE FROM history_checks WHERE id IN (${gone.map(() => '?').join(',')})`, gone);
      count -= gone.length;
    }
    counts.set(key, count);
  });
}

/** On delete: the source's intervals, days and log go. */
export function forgetSource(ctx: AppContext, kind: string, id: number): void {
  ctx.db.transaction(() => {
    for (const table of ['history_intervals', 'history_days', 'history_checks'])
      ctx.db.run(`DELETE FROM ${table} WHERE kind = ? AND source_id = ?`, [kind, id]);
  });
  state(ctx).checkCounts.delete(sourceKey(kind, id));
}

/** The retention task: checks past 7 days or beyond 10,000 per source, intervals and days past 400 days. */
export function trimHistory(ctx: AppContext): number {
  const now = ctx.clock.now();
  const db = ctx.db;
  return db.transaction(() => {
    let removed = db.run('DELETE FROM history_checks WHERE at < ?', [now - CHECK_KEEP_MS]).changes;
    const crowded = db.all<{ kind: string; source_id: number }>(
      'SELECT kind, source_id FROM history_checks GROUP BY kind, source_id HAVING count(*) > ?',
      [CHECKS_PER_SOURCE_MAX],
    );
    for (const s of crowded)
      removed += db.run(
        `DELETE FROM history_checks WHERE kind = ? AND source_id = ? AND id <= (
           SELECT id FROM history_checks WHERE kind = ? AND source_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
        [s.kind, s.source_id, s.kind, s.source_id, CHECKS_PER_SOURCE_MAX],
      ).changes;
    removed += db.run('DELETE FROM history_intervals WHERE end_at IS NOT NULL AND end_at < ?', [
      now - HISTORY_KEEP_DAYS * DAY_MS,
    ]).changes;
    removed += db.run('DELETE FROM history_days WHERE day < ?', [dayOf(now) - HISTORY_KEEP_DAYS]).changes;
    state(ctx).checkCounts.clear();
    return removed;
  });
}

// -------------------------------------------------------------------------------------------------
// Reading

export interface DayEntry {
  date: string;
  uptime: number | null;
  status: 'up' | 'down' | 'maintenance' | 'none';
  downSec: number;
  avgMs: number | null;
}

export interface HistorySummary {
  uptime: { '24h': number | null; '7d': number | null; '30d': number | null; '90d': number | null };
  responseTime: { avgMs: number | null; p95Ms: number | null };
  days: DayEntry[];
}

interface Totals {
  up: number;
  down: number;
  maintenance: number;
}

/** up ÷ (up + down) × 100, truncated (not rounded) to 3 decimals in integer arithmetic; null without either. */
export function uptimePercent(up: number, down: number): number | null {
  const total = up + down;
  if (total <= 0) return null;
  return Math.floor((up * 100_000) / total) / 1000;
}

/** p95 by nearest rank: the value at rank ceil(0.95 × n) of the sorted values. */
export function nearestRank(sorted: readonly number[], pct: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((pct / 100) * sorted.length));
  return sorted[rank - 1]!;
}

function addClass(t: Totals, cls: UptimeClass, ms: number): void {
  if (ms <= 0) return;
  if (cls === 'up') t.up += ms;
  else if (cls === 'down') t.down += ms;
  else if (cls === 'maintenance') t.maintenance += ms;
}

const WINDOWS = [
  ['24h', DAY_MS],
  ['7d', 7 * DAY_MS],
  ['30d', 30 * DAY_MS],
  ['90d', 90 * DAY_MS],
] as const;

/**
 * Uptime per window, the day bar and response times of one source at `now`. Reads at most 90 daily
 * rows plus the intervals of the four windows' first (partial) days and the open interval, which
 * counts up to `now`: the cost does not grow with the age of the source.
 */
export function historySummary(ctx: AppContext, kind: string, id: number, now: number): HistorySummary {
  const db = ctx.db;
  const today = dayOf(now);
  const firstDay = today - (HISTORY_DAYS_SHOWN - 1);
  const dayRows = db.all<{
    day: number;
    up_ms: number;
    down_ms: number;
    maintenance_ms: number;
    rt_sum: number;
    rt_count: number;
  }>(
    `SELECT day, up_ms, down_ms, maintenance_ms, rt_sum, rt_count FROM history_days
     WHERE kind = ? AND source_id = ? AND day BETWEEN ? AND ?`,
    [kind, id, firstDay - 1, today],
  );
  const byDay = new Map(dayRows.map((r) => [r.day, r]));
  const open = openInterval(db, kind, id);
  const openFrom = open ? Math.min(open.start_at, now) : now;
  /** The open interval's share of [from, to). */
  const openIn = (t: Totals, from: number, to: number) => {
    if (open) addClass(t, open.class, Math.min(to, now) - Math.max(from, openFrom));
  };
  const dayTotals = (day: number): Totals => {
    const r = byDay.get(day);
    const t: Totals = { up: r?.up_ms ?? 0, down: r?.down_ms ?? 0, maintenance: r?.maintenance_ms ?? 0 };
    openIn(t, day * DAY_MS, (day + 1) * DAY_MS);
    return t;
  };

  const uptime = {} as HistorySummary['uptime'];
  for (const [name, span] of WINDOWS) {
    const start = now - span;
    const startDay = dayOf(start);
    const t: Totals = { up: 0, down: 0, maintenance: 0 };
    // The first day only partly: from its closed intervals, clipped to [start, end of that day).
    const partialEnd = Math.min(now, (startDay + 1) * DAY_MS);
    for (const iv of db.all<IntervalRow>(
      `SELECT id, status, class, start_at, end_at FROM history_intervals
       WHERE kind = ? AND source_id = ? AND end_at IS NOT NULL AND end_at > ? AND start_at < ?`,
      [kind, id, start, partialEnd],
    ))
      addClass(t, iv.class, Math.min(iv.end_at!, partialEnd) - Math.max(iv.start_at, start));
    // Whole days after it from the aggregates (they hold closed intervals only; the widest window
    // starts on day firstDay - 1, so every day is among the rows read above) ...
    for (let day = startDay + 1; day <= today; day++) {
      const r = byDay.get(day);
      if (r) {
        t.up += r.up_ms;
        t.down += r.down_ms;
      }
    }
    // ... and the open interval up to now.
    openIn(t, start, now);
    uptime[name] = uptimePercent(t.up, t.down);
  }

  const days: DayEntry[] = [];
  for (let day = firstDay; day <= today; day++) {
    const t = dayTotals(day);
    const r = byDay.get(day);
    days.push({
      date: new Date(day * DAY_MS).toISOString().slice(0, 10),
      uptime: uptimePercent(t.up, t.down),
      status: t.down > 0 ? 'down' : t.up > 0 ? 'up' : t.maintenance > 0 ? 'maintenance' : 'none',
      downSec: Math.ceil(t.down / 1000),
      avgMs: r && r.rt_count > 0 ? Math.round(r.rt_sum / r.rt_count) : null,
    });
  }

  const times = db
    .all<{ ms: number }>(
      `SELECT response_ms AS ms FROM history_checks
       WHERE kind = ? AND source_id = ? AND at > ? AND at <= ? AND ok = 1 AND response_ms IS NOT NULL`,
      [kind, id, now - DAY_MS, now],
    )
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const avg = times.length === 0 ? null : Math.round(times.reduce((a, b) => a + b, 0) / times.length);
  return { uptime, responseTime: { avgMs: avg, p95Ms: nearestRank(times, 95) }, days };
}

export interface CheckRow {
  id: number;
  at: number;
  ok: number;
  status: string;
  response_ms: number | null;
  error: string | null;
  extra: string | null;
}

/** The log newest first: ids below `before` (0 = from the newest), at most `limit` rows. */
export function pageChecks(
  ctx: AppContext,
  kind: string,
  id: number,
  before: number,
  limit: number,
): CheckRow[] {
  return ctx.db.all<CheckRow>(
    `SELECT id, at, ok, status, response_ms, error, extra FROM history_checks
     WHERE kind = ? AND source_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
    [kind, id, before > 0 ? before : Number.MAX_SAFE_INTEGER, limit],
  );
}

// -------------------------------------------------------------------------------------------------
// Many sources at once (status pages)

/** Whether the history module keeps uptime for sources of this kind (heartbeats and monitors do). */
export function hasHistoryKind(ctx: AppContext, kind: string): boolean {
  return state(ctx).kinds.has(kind);
}

export interface SourceUptime {
  uptime90d: number | null;
  days: { date: string; uptime: number | null; status: DayEntry['status'] }[];
}

export interface HistoryInterval {
  kind: string;
  source_id: number;
  status: string;
  class: UptimeClass;
  start_at: number;
  end_at: number | null;
}

export const historyKey = (kind: string, id: number) => `${kind}:${id}`;

/**
 * The 90-day uptime and day bars of many sources at `now` (the arithmetic of historySummary), with one
 * query per table whatever the number of sources: the daily rows of the last 91 days, and every interval
 * that ends inside the last 91 days or is open (returned too: status pages derive incidents from them).
 */
export function uptimeOfMany(
  ctx: AppContext,
  sources: readonly { kind: string; id: number }[],
  now: number,
): { uptime: Map<string, SourceUptime>; intervals: HistoryInterval[] } {
  const uptime = new Map<string, SourceUptime>();
  if (sources.length === 0) return { uptime, intervals: [] };
  const today = dayOf(now);
  const firstDay = today - (HISTORY_DAYS_SHOWN - 1);
  const kinds = [...new Set(sources.map((s) => s.kind))];
  const ids = [...new Set(sources.map((s) => s.id))];
  const where = `kind IN (${kinds.map(() => '?').join(',')}) AND source_id IN (${ids.map(() => '?').join(',')})`;
  const dayRows = ctx.db.all<{
    kind: string;
    source_id: number;
    day: number;
    up_ms: number;
    down_ms: number;
    maintenance_ms: number;
  }>(
    `SELECT kind, source_id, day, up_ms, down_ms, maintenance_ms FROM history_days
     WHERE ${where} AND day BETWEEN ? AND ?`,
    [...kinds, ...ids, firstDay - 1, today],
  );
  const intervals = ctx.db.all<HistoryInterval>(
    `SELECT kind, source_id, status, class, start_at, end_at FROM history_intervals
     WHERE ${where} AND (end_at IS NULL OR end_at > ?) ORDER BY start_at, id`,
    [...kinds, ...ids, (firstDay - 1) * DAY_MS],
  );
  // Daily totals by source, in an array indexed from the day before the first bar (what the 90-day
  // window's partial first day needs is read from the intervals).
  const days = new Map<string, (Totals | undefined)[]>();
  for (const r of dayRows) {
    const key = historyKey(r.kind, r.source_id);
    let list = days.get(key);
    if (!list) {
      list = new Array(HISTORY_DAYS_SHOWN + 1);
      days.set(key, list);
    }
    list[r.day - firstDay + 1] = { up: r.up_ms, down: r.down_ms, maintenance: r.maintenance_ms };
  }
  const open = new Map<string, HistoryInterval>();
  const closedBy = new Map<string, HistoryInterval[]>();
  for (const iv of intervals) {
    const key = historyKey(iv.kind, iv.source_id);
    if (iv.end_at === null) open.set(key, iv);
    else {
      const list = closedBy.get(key) ?? [];
      list.push(iv);
      closedBy.set(key, list);
    }
  }
  const dates: string[] = [];
  for (let day = firstDay; day <= today; day++) dates.push(new Date(day * DAY_MS).toISOString().slice(0, 10));
  const start = now - HISTORY_DAYS_SHOWN * DAY_MS;
  const startDay = dayOf(start);
  const partialEnd = Math.min(now, (startDay + 1) * DAY_MS);
  const none: (Totals | undefined)[] = [];
  for (const s of sources) {
    const key = historyKey(s.kind, s.id);
    const byDay = days.get(key) ?? none;
    const o = open.get(key);
    const openFrom = o ? Math.min(o.start_at, now) : now;
    const t: Totals = { up: 0, down: 0, maintenance: 0 };
    for (const iv of closedBy.get(key) ?? [])
      if (iv.end_at! > start && iv.start_at < partialEnd)
        addClass(t, iv.class, Math.min(iv.end_at!, partialEnd) - Math.max(iv.start_at, start));
    const bars: SourceUptime['days'] = new Array(HISTORY_DAYS_SHOWN);
    for (let k = 0; k < HISTORY_DAYS_SHOWN; k++) {
      const r = byDay[k + 1];
      const d: Totals = { up: r?.up ?? 0, down: r?.down ?? 0, maintenance: r?.maintenance ?? 0 };
      // Whole days after the window's first one count in the window's uptime from the aggregates.
      if (firstDay + k > startDay) {
        t.up += d.up;
        t.down += d.down;
      }
      if (o) {
        const day = firstDay + k;
        addClass(d, o.class, Math.min((day + 1) * DAY_MS, now) - Math.max(day * DAY_MS, openFrom));
      }
      bars[k] = {
        date: dates[k]!,
        uptime: uptimePercent(d.up, d.down),
        status: d.down > 0 ? 'down' : d.up > 0 ? 'up' : d.maintenance > 0 ? 'maintenance' : 'none',
      };
    }
    if (o) addClass(t, o.class, now - Math.max(start, openFrom));
    uptime.set(key, { uptime90d: uptimePercent(t.up, t.down), days: bars });
  }
  return { uptime, intervals };
}

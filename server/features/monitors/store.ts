import type { Db } from '../../db/database';

export type MonitorStatus = 'pending' | 'up' | 'down' | 'maintenance' | 'unknown' | 'paused';
export type LastAlerted = 'none' | 'down' | 'up';

/** A monitor's row: what the user set, and the engine's state (`MonitorState`). */
export interface MonitorRow extends MonitorState {
  id: number;
  user_id: number;
  channel_id: number;
  kind: string;
  name: string;
  /** The kind's settings, sealed JSON (fields.ts opens it). */
  settings: string;
  interval_sec: number;
  timeout_sec: number;
  retries: number;
  resend_every_sec: number;
  priority: number;
  created_at: number;
}

/** The common settings a user writes (create and update); the kind's own are in `settings`. */
export interface MonitorCommon {
  channelId: number;
  name: string;
  intervalSec: number;
  timeoutSec: number;
  retries: number;
  resendEverySec: number;
  priority: number;
}

/** What the engine writes after a check, a reminder, a pause or a gap. */
export interface MonitorState {
  status: MonitorStatus;
  status_since: number;
  consecutive_failures: number;
  last_error: string | null;
  last_response_ms: number | null;
  last_check_at: number | null;
  last_alerted: LastAlerted;
  last_alert_at: number | null;
  down_since: number | null;
  next_check_at: number | null;
  due_at: number | null;
  state: string | null;
}

export function findMonitor(db: Db, id: number): MonitorRow | undefined {
  return db.first<MonitorRow>('SELECT * FROM monitors WHERE id = ?', [id]);
}

export function listMonitorsOfUser(db: Db, userId: number, kind: string): MonitorRow[] {
  return db.all<MonitorRow>('SELECT * FROM monitors WHERE user_id = ? AND kind = ? ORDER BY id', [
    userId,
    kind,
  ]);
}

export function listMonitorsOfChannels(db: Db, kind: string, channelIds: readonly number[]): MonitorRow[] {
  if (channelIds.length === 0) return [];
  return db.all<MonitorRow>(
    `SELECT * FROM monitors WHERE kind = ? AND channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    [kind, ...channelIds],
  );
}

/** Monitors of every kind (§0.7 caps all kinds together). */
export function countMonitorsOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM monitors WHERE user_id = ?', [userId])!.n;
}

export function nextDueAt(db: Db): number | null {
  return db.first<{ at: number | null }>('SELECT MIN(due_at) AS at FROM monitors WHERE due_at IS NOT NULL')!
    .at;
}

export function dueMonitors(db: Db, now: number, limit: number): MonitorRow[] {
  return db.all<MonitorRow>(
    'SELECT * FROM monitors WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?',
    [now, limit],
  );
}

/** Monitors in `maintenance`, or on these channels (what a maintenance window's start or end walks). */
export function monitorsForMaintenance(db: Db, channelIds: readonly number[]): MonitorRow[] {
  const onChannels =
    channelIds.length === 0 ? '' : ` OR channel_id IN (${channelIds.map(() => '?').join(',')})`;
  return db.all<MonitorRow>(`SELECT * FROM monitors WHERE status = 'maintenance'${onChannels} ORDER BY id`, [
    ...channelIds,
  ]);
}

export function activeMonitors(db: Db): MonitorRow[] {
  return db.all<MonitorRow>("SELECT * FROM monitors WHERE status <> 'paused' ORDER BY id");
}

/** A recipient's monitors on a channel someone else owns (§0.3: losing `send` pauses them). */
export function recipientMonitors(db: Db, channelId: number, ownerId: number): MonitorRow[] {
  return db.all<MonitorRow>(
    "SELECT * FROM monitors WHERE channel_id = ? AND user_id <> ? AND status <> 'paused'",
    [channelId, ownerId],
  );
}

export function insertMonitor(
  db: Db,
  m: {
    userId: number;
    kind: string;
    common: MonitorCommon;
    settings: string;
    state: string | null;
    status: MonitorStatus;
    nextCheckAt: number | null;
    now: number;
  },
): number {
  const c = m.common;
  return db.run(
    `INSERT INTO monitors (user_id, channel_id, kind, name, settings, state, interval_sec, timeout_sec, retries,
       resend_every_sec, priority, status, status_since, next_check_at, due_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      m.userId,
      c.channelId,
      m.kind,
      c.name,
      m.settings,
      m.state,
      c.intervalSec,
      c.timeoutSec,
      c.retries,
      c.resendEverySec,
      c.priority,
      m.status,
      m.now,
      m.nextCheckAt,
      m.nextCheckAt,
      m.now,
    ],
  ).lastInsertRowid;
}

export function updateCommon(db: Db, id: number, c: MonitorCommon, settings: string): void {
  db.run(
    `UPDATE monitors SET channel_id = ?, name = ?, interval_sec = ?, timeout_sec = ?, retries = ?,
       resend_every_sec = ?, priority = ?, settings = ? WHERE id = ?`,
    [c.channelId, c.name, c.intervalSec, c.timeoutSec, c.retries, c.resendEverySec, c.priority, settings, id],
  );
}

export function writeState(db: Db, id: number, s: MonitorState): void {
  db.run(
    `UPDATE monitors SET status = ?, status_since = ?, consecutive_failures = ?, last_error = ?,
       last_response_ms = ?, last_check_at = ?, last_alerted = ?, last_alert_at = ?, down_since = ?,
       next_check_at = ?, due_at = ?, state = ? WHERE id = ?`,
    [
      s.status,
      s.status_since,
      s.consecutive_failures,
      s.last_error,
      s.last_response_ms,
      s.last_check_at,
      s.last_alerted,
      s.last_alert_at,
      s.down_since,
      s.next_check_at,
      s.due_at,
      s.state,
      id,
    ],
  );
}

export function deleteMonitor(db: Db, id: number): void {
  db.run('DELETE FROM monitors WHERE id = ?', [id]);
}

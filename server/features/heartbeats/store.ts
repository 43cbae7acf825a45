import type { Db } from '../../db/database';

export type HeartbeatStatus = 'new' | 'up' | 'late' | 'down' | 'paused' | 'maintenance';

export interface HeartbeatRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  interval_sec: number | null;
  schedule: string | null;
  timezone: string;
  grace_sec: number;
  alert_message: string;
  manual_resume: number;
  priority: number;
  status: HeartbeatStatus;
  status_since: number;
  token_digest: string;
  token_hint: string;
  last_ping_at: number | null;
  last_success_at: number | null;
  expected_at: number | null;
  deadline_at: number | null;
  due_at: number | null;
  last_fail_reason: string | null;
  started_at: number | null;
  last_duration_ms: number | null;
  created_at: number;
  /** While `maintenance` (§1.4): the machine's status, and the status (and its start) before the window. */
  maint_status: HeartbeatStatus | null;
  maint_from: HeartbeatStatus | null;
  maint_since: number | null;
}

/** The settings a user writes (create and update). */
export interface HeartbeatSettings {
  channelId: number;
  name: string;
  intervalSec: number | null;
  schedule: string | null;
  timezone: string;
  graceSec: number;
  alertMessage: string;
  manualResume: boolean;
  priority: number;
}

/** The state the machine writes (service.ts). */
export interface HeartbeatState {
  status: HeartbeatStatus;
  status_since: number;
  last_ping_at: number | null;
  last_success_at: number | null;
  expected_at: number | null;
  deadline_at: number | null;
  due_at: number | null;
  last_fail_reason: string | null;
  started_at: number | null;
  last_duration_ms: number | null;
}

export function findHeartbeat(db: Db, id: number): HeartbeatRow | undefined {
  return db.first<HeartbeatRow>('SELECT * FROM heartbeats WHERE id = ?', [id]);
}

export function findHeartbeatByDigest(db: Db, digest: string): HeartbeatRow | undefined {
  return db.first<HeartbeatRow>('SELECT * FROM heartbeats WHERE token_digest = ?', [digest]);
}

export function listHeartbeatsOfUser(db: Db, userId: number): HeartbeatRow[] {
  return db.all<HeartbeatRow>('SELECT * FROM heartbeats WHERE user_id = ? ORDER BY id', [userId]);
}

export function listHeartbeatsOfChannels(db: Db, channelIds: readonly number[]): HeartbeatRow[] {
  if (channelIds.length === 0) return [];
  return db.all<HeartbeatRow>(
    `SELECT * FROM heartbeats WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    channelIds as number[],
  );
}

export function countHeartbeatsOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM heartbeats WHERE user_id = ?', [userId])!.n;
}

/** Per channel and status, over the (channel_id, status) index: the channel summary (§1.6). */
export function countByChannelAndStatus(
  db: Db,
  channelIds: readonly number[],
): { channel_id: number; status: HeartbeatStatus; n: number }[] {
  if (channelIds.length === 0) return [];
  return db.all(
    `SELECT channel_id, status, COUNT(*) AS n FROM heartbeats
       WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) GROUP BY channel_id, status`,
    channelIds as number[],
  );
}

export function nextDueAt(db: Db): number | null {
  return db.first<{ at: number | null }>('SELECT MIN(due_at) AS at FROM heartbeats WHERE due_at IS NOT NULL')!
    .at;
}

export function dueHeartbeats(db: Db, now: number, limit: number): HeartbeatRow[] {
  return db.all<HeartbeatRow>(
    'SELECT * FROM heartbeats WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at LIMIT ?',
    [now, limit],
  );
}

/** Heartbeats whose deadline or expected time falls in `[from, to]` (clock:gap), on the due index. */
export function heartbeatsDueBy(db: Db, to: number): HeartbeatRow[] {
  return db.all<HeartbeatRow>('SELECT * FROM heartbeats WHERE due_at IS NOT NULL AND due_at <= ?', [to]);
}

export function activeHeartbeats(db: Db): { id: number }[] {
  return db.all<{ id: number }>("SELECT id FROM heartbeats WHERE status <> 'paused'");
}

export function insertHeartbeat(
  db: Db,
  userId: number,
  s: HeartbeatSettings,
  paused: boolean,
  digest: string,
  hint: string,
  now: number,
): number {
  return db.run(
    `INSERT INTO heartbeats (user_id, channel_id, name, interval_sec, schedule, timezone, grace_sec,
       alert_message, manual_resume, priority, status, status_since, token_digest, token_hint, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      userId,
      s.channelId,
      s.name,
      s.intervalSec,
      s.schedule,
      s.timezone,
      s.graceSec,
      s.alertMessage,
      s.manualResume ? 1 : 0,
      s.priority,
      paused ? 'paused' : 'new',
      now,
      digest,
      hint,
      now,
    ],
  ).lastInsertRowid;
}

export function updateSettings(db: Db, id: number, s: HeartbeatSettings): void {
  db.run(
    `UPDATE heartbeats SET channel_id = ?, name = ?, interval_sec = ?, schedule = ?, timezone = ?,
       grace_sec = ?, alert_message = ?, manual_resume = ?, priority = ? WHERE id = ?`,
    [
      s.channelId,
      s.name,
      s.intervalSec,
      s.schedule,
      s.timezone,
      s.graceSec,
      s.alertMessage,
      s.manualResume ? 1 : 0,
      s.priority,
      id,
    ],
  );
}

export function writeState(db: Db, id: number, s: HeartbeatState): void {
  db.run(
    `UPDATE heartbeats SET status = ?, status_since = ?, last_ping_at = ?, last_success_at = ?,
       expected_at = ?, deadline_at = ?, due_at = ?, last_fail_reason = ?, started_at = ?,
       last_duration_ms = ? WHERE id = ?`,
    [
      s.status,
      s.status_since,
      s.last_ping_at,
      s.last_success_at,
      s.expected_at,
      s.deadline_at,
      s.due_at,
      s.last_fail_reason,
      s.started_at,
      s.last_duration_ms,
      id,
    ],
  );
}

/** The status under a maintenance window (null when it ends). */
export function writeMaintenance(
  db: Db,
  id: number,
  m: { status: HeartbeatStatus; from: HeartbeatStatus; since: number } | null,
): void {
  db.run('UPDATE heartbeats SET maint_status = ?, maint_from = ?, maint_since = ? WHERE id = ?', [
    m?.status ?? null,
    m?.from ?? null,
    m?.since ?? null,
    id,
  ]);
}

/** Heartbeats in `maintenance` (heartbeats_in_maintenance). */
export function heartbeatsInMaintenance(db: Db): HeartbeatRow[] {
  return db.all<HeartbeatRow>("SELECT * FROM heartbeats WHERE status = 'maintenance' ORDER BY id");
}

export function rotateHeartbeatToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE heartbeats SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function deleteHeartbeat(db: Db, id: number): void {
  db.run('DELETE FROM heartbeats WHERE id = ?', [id]);
}

/** Heartbeats of users other than the channel's owner on that channel (share recipients). */
export function recipientHeartbeats(db: Db, channelId: number, ownerId: number): HeartbeatRow[] {
  return db.all<HeartbeatRow>(
    "SELECT * FROM heartbeats WHERE channel_id = ? AND user_id <> ? AND status <> 'paused'",
    [channelId, ownerId],
  );
}

import type { Db } from '../../db/database';

export interface WindowRow {
  id: number;
  user_id: number;
  name: string;
  channel_ids: string;
  include_subtree: number;
  monitors: string;
  schedule: string;
  enabled: number;
  created_at: number;
}

export interface WindowFields {
  name: string;
  channelIds: number[];
  includeSubtree: boolean;
  monitors: { kind: string; id: number }[];
  /** JSON of the schedule (instants as unix ms). */
  schedule: string;
  enabled: boolean;
}

export function findWindow(db: Db, id: number): WindowRow | undefined {
  return db.first<WindowRow>('SELECT * FROM maintenance_windows WHERE id = ?', [id]);
}

export function listWindowsOfUser(db: Db, userId: number): WindowRow[] {
  return db.all<WindowRow>('SELECT * FROM maintenance_windows WHERE user_id = ? ORDER BY id', [userId]);
}

/** Every enabled window of every user (what coverage is computed from; a small table). */
export function enabledWindows(db: Db): WindowRow[] {
  return db.all<WindowRow>('SELECT * FROM maintenance_windows WHERE enabled = 1 ORDER BY id');
}

export function countWindowsOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT count(*) AS n FROM maintenance_windows WHERE user_id = ?', [userId])!
    .n;
}

function values(f: WindowFields): (string | number)[] {
  return [
    f.name,
    JSON.stringify(f.channelIds),
    f.includeSubtree ? 1 : 0,
    JSON.stringify(f.monitors),
    f.schedule,
    f.enabled ? 1 : 0,
  ];
}

export function insertWindow(db: Db, userId: number, f: WindowFields, now: number): number {
  return db.run(
    `INSERT INTO maintenance_windows (user_id, name, channel_ids, include_subtree, monitors, schedule, enabled, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [userId, ...values(f), now],
  ).lastInsertRowid;
}

export function replaceWindow(db: Db, id: number, f: WindowFields): void {
  db.run(
    `UPDATE maintenance_windows SET name = ?, channel_ids = ?, include_subtree = ?, monitors = ?, schedule = ?,
       enabled = ? WHERE id = ?`,
    [...values(f), id],
  );
}

export function deleteWindow(db: Db, id: number): void {
  db.run('DELETE FROM maintenance_windows WHERE id = ?', [id]);
}

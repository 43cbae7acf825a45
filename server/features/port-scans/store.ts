import type { Db } from '../../db/database';

export type ScanStatus = 'queued' | 'running' | 'done' | 'cancelled' | 'failed';

export interface OpenEntry {
  port: number;
  service?: string;
  banner?: string;
}

export interface PortScanRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  host: string;
  ports: string;
  port_count: number;
  concurrency: number;
  timeout_ms: number;
  notes: string;
  status: ScanStatus;
  status_since: number;
  scanned: number;
  open: string;
  error: string | null;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
}

export interface ScanSettings {
  userId: number;
  channelId: number;
  name: string;
  host: string;
  ports: string;
  portCount: number;
  concurrency: number;
  timeoutMs: number;
  notes: string;
}

export function findScan(db: Db, id: number): PortScanRow | undefined {
  return db.first<PortScanRow>('SELECT * FROM port_scans WHERE id = ?', [id]);
}

/** Newest first. */
export function listScansOfUser(db: Db, userId: number): PortScanRow[] {
  return db.all<PortScanRow>('SELECT * FROM port_scans WHERE user_id = ? ORDER BY id DESC', [userId]);
}

export function listScansOfChannels(db: Db, channelIds: readonly number[]): PortScanRow[] {
  if (channelIds.length === 0) return [];
  return db.all<PortScanRow>(
    `SELECT * FROM port_scans WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    channelIds as number[],
  );
}

export function countQueued(db: Db, userId: number): number {
  return db.first<{ n: number }>(
    "SELECT COUNT(*) AS n FROM port_scans WHERE user_id = ? AND status = 'queued'",
    [userId],
  )!.n;
}

/** The user's oldest queued scan (the next to run). */
export function nextQueued(db: Db, userId: number): PortScanRow | undefined {
  return db.first<PortScanRow>(
    "SELECT * FROM port_scans WHERE user_id = ? AND status = 'queued' ORDER BY queued_at, id LIMIT 1",
    [userId],
  );
}

/** Scans queued or running, over every user (start-up). */
export function activeScans(db: Db): PortScanRow[] {
  return db.all<PortScanRow>("SELECT * FROM port_scans WHERE status IN ('queued', 'running') ORDER BY id");
}

/** Queued or running scans of users other than the channel's owner on that channel (share recipients). */
export function recipientActiveScans(db: Db, channelId: number, ownerId: number): PortScanRow[] {
  return db.all<PortScanRow>(
    "SELECT * FROM port_scans WHERE channel_id = ? AND user_id <> ? AND status IN ('queued', 'running')",
    [channelId, ownerId],
  );
}

export function insertScan(db: Db, s: ScanSettings, now: number): number {
  return db.run(
    `INSERT INTO port_scans (user_id, channel_id, name, host, ports, port_count, concurrency, timeout_ms,
       notes, status, status_since, queued_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)`,
    [
      s.userId,
      s.channelId,
      s.name,
      s.host,
      s.ports,
      s.portCount,
      s.concurrency,
      s.timeoutMs,
      s.notes,
      now,
      now,
      now,
    ],
  ).lastInsertRowid;
}

export function markRunning(db: Db, id: number, now: number): void {
  db.run(
    "UPDATE port_scans SET status = 'running', status_since = ?, started_at = ?, scanned = 0, open = '[]', error = NULL, finished_at = NULL WHERE id = ?",
    [now, now, id],
  );
}

/** Progress of a running scan (no effect once it left `running`). */
export function writeProgress(db: Db, id: number, scanned: number, open: OpenEntry[]): void {
  db.run("UPDATE port_scans SET scanned = ?, open = ? WHERE id = ? AND status = 'running'", [
    scanned,
    JSON.stringify(open),
    id,
  ]);
}

/** The end of a scan: done, cancelled or failed, with what it found. */
export function markFinished(
  db: Db,
  id: number,
  f: { status: 'done' | 'cancelled' | 'failed'; scanned: number; open: OpenEntry[]; error: string | null },
  now: number,
): void {
  db.run(
    'UPDATE port_scans SET status = ?, status_since = ?, scanned = ?, open = ?, error = ?, finished_at = ? WHERE id = ?',
    [f.status, now, f.scanned, JSON.stringify(f.open), f.error, now, id],
  );
}

/** Back to the queue with nothing found (restart). */
export function resetScan(db: Db, id: number, now: number): void {
  db.run(
    "UPDATE port_scans SET status = 'queued', status_since = ?, queued_at = ?, scanned = 0, open = '[]', error = NULL, started_at = NULL, finished_at = NULL WHERE id = ?",
    [now, now, id],
  );
}

export function updateScanText(db: Db, id: number, name: string, notes: string): void {
  db.run('UPDATE port_scans SET name = ?, notes = ? WHERE id = ?', [name, notes, id]);
}

export function deleteScan(db: Db, id: number): void {
  db.run('DELETE FROM port_scans WHERE id = ?', [id]);
}

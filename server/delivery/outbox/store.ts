import type { Db } from '../../db/database';

/** The outbox (migration 0013, wire rules §6.1). Small synchronous functions; callers own transactions. */
export type DeliveryKind = 'redelivery' | 'digest' | 'test' | 'callback';
export type DeliveryStatus = 'queued' | 'sending' | 'sent' | 'failed' | 'cancelled';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'queued',
  'sending',
  'sent',
  'failed',
  'cancelled',
];

export interface DeliveryRow {
  id: number;
  user_id: number;
  appid: number;
  message_id: number | null;
  adapter: string;
  kind: DeliveryKind;
  status: DeliveryStatus;
  attempts: number;
  created_at: number;
  next_attempt_at: number | null;
  held_until: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  sent_at: number | null;
  cancel_reason: string | null;
  payload: string | null;
}

const COLUMNS =
  'id, user_id, appid, message_id, adapter, kind, status, attempts, created_at, next_attempt_at, held_until, last_attempt_at, last_error, sent_at, cancel_reason, payload';

export interface DeliveryInsert {
  userId: number;
  appid: number;
  messageId: number | null;
  adapter: string;
  kind: DeliveryKind;
  status: DeliveryStatus;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  payload: string | null;
}

export function insertDelivery(db: Db, d: DeliveryInsert): number {
  return db.run(
    `INSERT INTO deliveries (user_id, appid, message_id, adapter, kind, status, attempts, created_at,
       next_attempt_at, last_attempt_at, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      d.userId,
      d.appid,
      d.messageId,
      d.adapter,
      d.kind,
      d.status,
      d.attempts,
      d.createdAt,
      d.nextAttemptAt,
      d.lastAttemptAt,
      d.payload,
    ],
  ).lastInsertRowid;
}

/** The hot enqueue of POST /message (one statement, prepared once by the statement cache). */
export function insertRedelivery(
  db: Db,
  userId: number,
  appid: number,
  messageId: number,
  adapter: string,
  createdAt: number,
  nextAttemptAt: number,
): void {
  db.run(
    `INSERT INTO deliveries (user_id, appid, message_id, adapter, kind, status, created_at, next_attempt_at)
       VALUES (?, ?, ?, ?, 'redelivery', 'queued', ?, ?)`,
    [userId, appid, messageId, adapter, createdAt, nextAttemptAt],
  );
}

/** MIN over the partial index deliveries_due. */
export function nextQueuedAt(db: Db): number | null {
  return (
    db.first<{ t: number | null }>("SELECT min(next_attempt_at) AS t FROM deliveries WHERE status = 'queued'")
      ?.t ?? null
  );
}

export function dueDeliveries(db: Db, now: number, limit: number): DeliveryRow[] {
  return db.all<DeliveryRow>(
    `SELECT ${COLUMNS} FROM deliveries WHERE status = 'queued' AND next_attempt_at <= ?
      ORDER BY next_attempt_at LIMIT ?`,
    [now, limit],
  );
}

export function findDelivery(db: Db, id: number): DeliveryRow | undefined {
  return db.first<DeliveryRow>(`SELECT ${COLUMNS} FROM deliveries WHERE id = ?`, [id]);
}

/** Held rows of one user's quiet window (the digest groups by owner and window end). */
export function heldOfWindow(db: Db, userId: number, heldUntil: number): DeliveryRow[] {
  return db.all<DeliveryRow>(
    `SELECT ${COLUMNS} FROM deliveries WHERE user_id = ? AND held_until = ? AND status = 'queued'
      AND held_until IS NOT NULL ORDER BY message_id, id`,
    [userId, heldUntil],
  );
}

export function cancelDelivery(db: Db, id: number, reason: string): void {
  db.run(
    `UPDATE deliveries SET status = 'cancelled', cancel_reason = ?, next_attempt_at = NULL
      WHERE id = ? AND status IN ('queued', 'sending')`,
    [reason, id],
  );
}

export function holdDelivery(db: Db, id: number, until: number, payload: string | null): void {
  db.run(
    "UPDATE deliveries SET held_until = ?, next_attempt_at = ?, payload = ? WHERE id = ? AND status = 'queued'",
    [until, until, payload, id],
  );
}

export function claimDelivery(db: Db, id: number, now: number): void {
  db.run(
    `UPDATE deliveries SET status = 'sending', attempts = attempts + 1, last_attempt_at = ?
      WHERE id = ? AND status = 'queued'`,
    [now, id],
  );
}

export function markSent(db: Db, id: number, now: number): number {
  return db.run(
    `UPDATE deliveries SET status = 'sent', sent_at = ?, last_error = NULL, next_attempt_at = NULL
      WHERE id = ? AND status = 'sending'`,
    [now, id],
  ).changes;
}

export function markFailed(db: Db, id: number, error: string): number {
  return db.run(
    "UPDATE deliveries SET status = 'failed', last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'sending'",
    [error, id],
  ).changes;
}

export function markRetry(db: Db, id: number, error: string, nextAttemptAt: number): number {
  return db.run(
    `UPDATE deliveries SET status = 'queued', last_error = ?, next_attempt_at = ?
      WHERE id = ? AND status = 'sending'`,
    [error, nextAttemptAt, id],
  ).changes;
}

/** A queued row that cannot be sent at all: failed. */
export function failQueued(db: Db, id: number, error: string): void {
  db.run(
    "UPDATE deliveries SET status = 'failed', last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'queued'",
    [error, id],
  );
}

/** At start-up: a send interrupted by a stop or a crash is tried again (at once). */
export function requeueSending(db: Db, now: number): number {
  return db.run(
    `UPDATE deliveries SET status = 'queued', next_attempt_at = coalesce(next_attempt_at, ?)
      WHERE status = 'sending' AND kind <> 'test'`,
    [now],
  ).changes;
}

/** Interrupted test sends are not retried (delivery/test never retries): failed. */
export function failInterruptedTests(db: Db): void {
  db.run(
    "UPDATE deliveries SET status = 'failed', last_error = 'interrupted by a restart' WHERE status = 'sending' AND kind = 'test'",
  );
}

/**
 * Quiet hours changed: held rows are due now (re-judged against the new settings); turned off, they are
 * no longer held at all (sent one by one, no digest).
 */
export function releaseHeld(db: Db, userId: number, now: number, unhold: boolean): number {
  return db.run(
    `UPDATE deliveries SET next_attempt_at = ?${unhold ? ', held_until = NULL' : ''}
      WHERE user_id = ? AND status = 'queued' AND held_until IS NOT NULL`,
    [now, userId],
  ).changes;
}

/** Queued rows of a channel whose adapter is no longer enabled: cancelled (`config`). */
export function cancelForConfig(db: Db, appid: number, enabled: readonly string[]): number {
  const keep = enabled.map(() => '?').join(', ');
  return db.run(
    `UPDATE deliveries SET status = 'cancelled', cancel_reason = 'config', next_attempt_at = NULL
      WHERE appid = ? AND status = 'queued' AND kind IN ('redelivery', 'digest')
      ${enabled.length > 0 ? `AND adapter NOT IN (${keep})` : ''}`,
    [appid, ...enabled],
  ).changes;
}

/** The log of a channel, newest first, ids below `before` (0 = no cursor). */
export function pageDeliveries(
  db: Db,
  appid: number,
  before: number,
  take: number,
  status: DeliveryStatus | undefined,
): DeliveryRow[] {
  const upper = before > 0 ? before : Number.MAX_SAFE_INTEGER;
  return status === undefined
    ? db.all<DeliveryRow>(
        `SELECT ${COLUMNS} FROM deliveries WHERE appid = ? AND id < ? ORDER BY id DESC LIMIT ?`,
        [appid, upper, take],
      )
    : db.all<DeliveryRow>(
        `SELECT ${COLUMNS} FROM deliveries WHERE appid = ? AND id < ? AND status = ? ORDER BY id DESC LIMIT ?`,
        [appid, upper, status, take],
      );
}

/** Whether the owner has read the message (a single mark or the channel watermark). */
export function isReadBy(db: Db, userId: number, appid: number, messageId: number): boolean {
  return (
    db.first<{ r: number }>(
      `SELECT (EXISTS (SELECT 1 FROM message_reads WHERE message_id = ? AND user_id = ?)
          OR EXISTS (SELECT 1 FROM channel_reads WHERE user_id = ? AND channel_id = ? AND read_up_to >= ?)) AS r`,
      [messageId, userId, userId, appid, messageId],
    )?.r === 1
  );
}

/**
 * The newest id whose entry was created before `cutoff`, or 0. Ids grow with creation time, so a binary
 * search over ids (point lookups on the primary key) finds it without an index on created_at.
 */
export function lastIdCreatedBefore(db: Db, cutoff: number): number {
  const bounds = db.first<{ lo: number | null; hi: number | null }>(
    'SELECT min(id) AS lo, max(id) AS hi FROM deliveries',
  );
  let lo = bounds?.lo ?? null;
  let hi = bounds?.hi ?? null;
  if (lo === null || hi === null) return 0;
  let found = 0;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const row = db.first<{ id: number; created_at: number }>(
      'SELECT id, created_at FROM deliveries WHERE id >= ? ORDER BY id LIMIT 1',
      [mid],
    );
    if (!row) {
      hi = mid - 1;
      continue;
    }
    if (row.created_at < cutoff) {
      found = row.id;
      lo = row.id + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Finished entries (sent, failed, cancelled) with ids up to `maxId`, at most `limit` of them. */
export function deleteFinishedUpTo(db: Db, maxId: number, limit: number): number {
  return db.run(
    `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE id <= ?
       AND status IN ('sent', 'failed', 'cancelled') ORDER BY id LIMIT ?)`,
    [maxId, limit],
  ).changes;
}

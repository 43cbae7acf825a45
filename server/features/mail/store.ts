import type { Db } from '../../db/database';

export type OutboxStatus = 'kept' | 'pending' | 'failed';

export interface OutboxRow {
  id: number;
  to_addr: string;
  subject: string;
  text: string;
  html: string | null;
  headers: string | null;
  created_at: number;
  status: OutboxStatus;
  attempts: number;
  /** Set only while pending. */
  next_attempt_at: number | null;
  last_error: string | null;
}

export function insertOutbox(
  db: Db,
  m: {
    to: string;
    subject: string;
    text: string;
    html?: string;
    headers?: Record<string, string>;
    now: number;
    status: OutboxStatus;
    nextAttemptAt: number | null;
  },
): number {
  return db.run(
    'INSERT INTO mail_outbox (to_addr, subject, text, html, headers, created_at, status, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [
      m.to,
      m.subject,
      m.text,
      m.html ?? null,
      m.headers ? JSON.stringify(m.headers) : null,
      m.now,
      m.status,
      m.nextAttemptAt,
    ],
  ).lastInsertRowid;
}

export function listOutbox(db: Db, limit: number, before: number): OutboxRow[] {
  return db.all<OutboxRow>('SELECT * FROM mail_outbox WHERE id < ? ORDER BY id DESC LIMIT ?', [
    before,
    limit,
  ]);
}

export function deleteOutboxBefore(db: Db, before: number): number {
  return db.run('DELETE FROM mail_outbox WHERE created_at < ?', [before]).changes;
}

/** Earliest next attempt of a pending mail (the partial index mail_outbox_due). */
export function nextMailDue(db: Db): number | null {
  return (
    db.first<{ at: number | null }>(
      'SELECT MIN(next_attempt_at) AS at FROM mail_outbox WHERE next_attempt_at IS NOT NULL',
    )?.at ?? null
  );
}

export function dueMail(db: Db, now: number, limit: number): OutboxRow[] {
  return db.all<OutboxRow>(
    'SELECT * FROM mail_outbox WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?',
    [now, limit],
  );
}

/** Holds a pending mail while an attempt is under way (a crash mid-attempt retries it after `until`). */
export function leaseMail(db: Db, id: number, until: number): void {
  db.run("UPDATE mail_outbox SET next_attempt_at = ? WHERE id = ? AND status = 'pending'", [until, id]);
}

export function findMail(db: Db, id: number): OutboxRow | undefined {
  return db.first<OutboxRow>('SELECT * FROM mail_outbox WHERE id = ?', [id]);
}

export function deleteMail(db: Db, id: number): void {
  db.run('DELETE FROM mail_outbox WHERE id = ?', [id]);
}

/** A failed attempt: the next one at `nextAt`, or null to give up (status failed). */
export function mailAttemptFailed(db: Db, id: number, error: string, nextAt: number | null): void {
  db.run(
    'UPDATE mail_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, status = ? WHERE id = ?',
    [error, nextAt, nextAt === null ? 'failed' : 'pending', id],
  );
}

import type { Db } from '../../db/database';

export interface OutboxRow {
  id: number;
  to_addr: string;
  subject: string;
  text: string;
  html: string | null;
  created_at: number;
}

export function insertOutbox(
  db: Db,
  m: { to: string; subject: string; text: string; html?: string; now: number },
): number {
  return db.run('INSERT INTO mail_outbox (to_addr, subject, text, html, created_at) VALUES (?, ?, ?, ?, ?)', [
    m.to,
    m.subject,
    m.text,
    m.html ?? null,
    m.now,
  ]).lastInsertRowid;
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

import type { Db } from '../../db/database';

export interface WebhookRow {
  id: number;
  channel_id: number;
  name: string;
  mode: 'static' | 'dynamic';
  title: string;
  text: string;
  priority: number | null;
  token_digest: string;
  token_hint: string;
  last_used: number | null;
  created_at: number;
  /** Joined: the channel's owner. */
  user_id: number;
}

// A subquery rather than a JOIN: see channel-keys/auth.ts.
const SELECT =
  'SELECT w.*, (SELECT user_id FROM channels WHERE id = w.channel_id) AS user_id FROM webhooks w';

export function listWebhooks(db: Db, channelId: number): WebhookRow[] {
  return db.all<WebhookRow>(`${SELECT} WHERE w.channel_id = ? ORDER BY w.id`, [channelId]);
}

export function findWebhook(db: Db, id: number): WebhookRow | undefined {
  return db.first<WebhookRow>(`${SELECT} WHERE w.id = ?`, [id]);
}

export function findWebhookByDigest(db: Db, digest: string): WebhookRow | undefined {
  return db.first<WebhookRow>(`${SELECT} WHERE w.token_digest = ?`, [digest]);
}

export interface WebhookFields {
  name: string;
  mode: 'static' | 'dynamic';
  title: string;
  text: string;
  priority: number | null;
}

export function insertWebhook(
  db: Db,
  channelId: number,
  f: WebhookFields,
  digest: string,
  hint: string,
  now: number,
): number {
  return db.run(
    `INSERT INTO webhooks (channel_id, name, mode, title, text, priority, token_digest, token_hint, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [channelId, f.name, f.mode, f.title, f.text, f.priority, digest, hint, now],
  ).lastInsertRowid;
}

export function updateWebhook(db: Db, id: number, f: WebhookFields): void {
  db.run('UPDATE webhooks SET name = ?, mode = ?, title = ?, text = ?, priority = ? WHERE id = ?', [
    f.name,
    f.mode,
    f.title,
    f.text,
    f.priority,
    id,
  ]);
}

export function rotateWebhook(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE webhooks SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function touchWebhook(db: Db, id: number, now: number): void {
  db.run('UPDATE webhooks SET last_used = ? WHERE id = ?', [now, id]);
}

export function deleteWebhook(db: Db, id: number): void {
  db.run('DELETE FROM webhooks WHERE id = ?', [id]);
}

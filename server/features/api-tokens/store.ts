import type { Db } from '../../db/database';

export interface ApiTokenRow {
  id: number;
  user_id: number;
  name: string;
  access: 'read' | 'write';
  app_ids: string;
  app_tags: string;
  expires_at: number | null;
  token_digest: string;
  token_hint: string;
  last_used: number | null;
  created_at: number;
}

export function listApiTokens(db: Db, userId: number): ApiTokenRow[] {
  return db.all<ApiTokenRow>('SELECT * FROM api_tokens WHERE user_id = ? ORDER BY id', [userId]);
}

export function findApiToken(db: Db, userId: number, id: number): ApiTokenRow | undefined {
  return db.first<ApiTokenRow>('SELECT * FROM api_tokens WHERE id = ? AND user_id = ?', [id, userId]);
}

export function insertApiToken(
  db: Db,
  t: {
    userId: number;
    name: string;
    access: string;
    appIds: string;
    appTags: string;
    expiresAt: number | null;
    digest: string;
    hint: string;
    now: number;
  },
): number {
  return db.run(
    `INSERT INTO api_tokens (user_id, name, access, app_ids, app_tags, expires_at, token_digest, token_hint, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [t.userId, t.name, t.access, t.appIds, t.appTags, t.expiresAt, t.digest, t.hint, t.now],
  ).lastInsertRowid;
}

export function updateApiToken(
  db: Db,
  id: number,
  t: { name: string; access: string; appIds: string; appTags: string; expiresAt: number | null },
): void {
  db.run(
    'UPDATE api_tokens SET name = ?, access = ?, app_ids = ?, app_tags = ?, expires_at = ? WHERE id = ?',
    [t.name, t.access, t.appIds, t.appTags, t.expiresAt, id],
  );
}

export function setApiTokenValue(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE api_tokens SET token_digest = ?, token_hint = ?, last_used = NULL WHERE id = ?', [
    digest,
    hint,
    id,
  ]);
}

export function deleteApiToken(db: Db, id: number): void {
  db.run('DELETE FROM api_tokens WHERE id = ?', [id]);
}

export function deleteAllApiTokens(db: Db, userId: number): number {
  return db.run('DELETE FROM api_tokens WHERE user_id = ?', [userId]).changes;
}

export function ownsChannel(db: Db, userId: number, channelId: number): boolean {
  return (
    db.first('SELECT 1 AS x FROM channels WHERE id = ? AND user_id = ?', [channelId, userId]) !== undefined
  );
}

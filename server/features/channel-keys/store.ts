import type { Db } from '../../db/database';

export interface KeyRow {
  id: number;
  channel_id: number;
  name: string;
  note: string;
  can_read: number;
  can_write: number;
  is_primary: number;
  token_digest: string;
  token_hint: string;
  expires_at: number;
  revoked_at: number | null;
  last_used: number | null;
  created_at: number;
  /** Owner of the channel (joined). */
  user_id: number;
}

const SELECT = 'SELECT k.*, c.user_id FROM channel_keys k JOIN channels c ON c.id = k.channel_id';

export function listKeys(db: Db, channelId: number): KeyRow[] {
  return db.all<KeyRow>(`${SELECT} WHERE k.channel_id = ? ORDER BY k.id`, [channelId]);
}

export function findKey(db: Db, id: number): KeyRow | undefined {
  return db.first<KeyRow>(`${SELECT} WHERE k.id = ?`, [id]);
}

export function findKeyByDigest(db: Db, digest: string): KeyRow | undefined {
  return db.first<KeyRow>(`${SELECT} WHERE k.token_digest = ?`, [digest]);
}

export interface KeyInsert {
  channelId: number;
  name: string;
  note: string;
  canRead: boolean;
  canWrite: boolean;
  primary: boolean;
  digest: string;
  hint: string;
  expiresAt: number;
  now: number;
}

export function insertKey(db: Db, k: KeyInsert): number {
  return db.run(
    `INSERT INTO channel_keys (channel_id, name, note, can_read, can_write, is_primary, token_digest, token_hint,
       expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      k.channelId,
      k.name,
      k.note,
      k.canRead ? 1 : 0,
      k.canWrite ? 1 : 0,
      k.primary ? 1 : 0,
      k.digest,
      k.hint,
      k.expiresAt,
      k.now,
    ],
  ).lastInsertRowid;
}

export interface KeyPatch {
  name?: string;
  note?: string;
  canRead?: boolean;
  canWrite?: boolean;
  expiresAt?: number;
}

export function updateKey(db: Db, id: number, patch: KeyPatch): void {
  const columns: [string, string | number | undefined][] = [
    ['name', patch.name],
    ['note', patch.note],
    ['can_read', patch.canRead === undefined ? undefined : patch.canRead ? 1 : 0],
    ['can_write', patch.canWrite === undefined ? undefined : patch.canWrite ? 1 : 0],
    ['expires_at', patch.expiresAt],
  ];
  const set = columns.filter(([, v]) => v !== undefined);
  if (set.length === 0) return;
  db.run(`UPDATE channel_keys SET ${set.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`, [
    ...set.map(([, v]) => v as string | number),
    id,
  ]);
}

export function revokeKey(db: Db, id: number, now: number): void {
  db.run('UPDATE channel_keys SET revoked_at = ? WHERE id = ?', [now, id]);
}

export function deleteKey(db: Db, id: number): void {
  db.run('DELETE FROM channel_keys WHERE id = ?', [id]);
}

export function rotateKey(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE channel_keys SET token_digest = ?, token_hint = ?, last_used = NULL WHERE id = ?', [
    digest,
    hint,
    id,
  ]);
}

export function keyIdsOfChannels(db: Db, channelIds: readonly number[]): number[] {
  const out: number[] = [];
  for (const id of channelIds)
    for (const r of db.all<{ id: number }>('SELECT id FROM channel_keys WHERE channel_id = ?', [id]))
      out.push(r.id);
  return out;
}

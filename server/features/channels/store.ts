import type { Db } from '../../db/database';

export interface ChannelRow {
  id: number;
  user_id: number;
  name: string;
  description: string;
  internal: number;
  image: string | null;
  default_priority: number;
  last_used: number | null;
  sort_key: string;
  parent_id: number | null;
  tags: string;
  delivery_config: string;
  created_at: number;
  /** Masked hint of the primary key (joined). */
  key_hint: string | null;
}

const SELECT = `SELECT c.*, k.token_hint AS key_hint FROM channels c
  LEFT JOIN channel_keys k ON k.channel_id = c.id AND k.is_primary = 1`;

export function findChannel(db: Db, id: number): ChannelRow | undefined {
  return db.first<ChannelRow>(`${SELECT} WHERE c.id = ?`, [id]);
}

export function listOwnChannels(db: Db, userId: number): ChannelRow[] {
  return db.all<ChannelRow>(`${SELECT} WHERE c.user_id = ? ORDER BY c.sort_key, c.id`, [userId]);
}

export function findSystemChannel(db: Db, userId: number): ChannelRow | undefined {
  return db.first<ChannelRow>(`${SELECT} WHERE c.user_id = ? AND c.internal = 1`, [userId]);
}

/** The few columns the sending path needs: one indexed lookup per message. */
export interface SendTarget {
  id: number;
  user_id: number;
  name: string;
  internal: number;
  default_priority: number;
  last_used: number | null;
  /** The (sealed) deliveryConfig column: the outbox's enqueue reads it without another query. */
  delivery_config: string;
}

export function findSendTarget(db: Db, id: number): SendTarget | undefined {
  return db.first<SendTarget>(
    'SELECT id, user_id, name, internal, default_priority, last_used, delivery_config FROM channels WHERE id = ?',
    [id],
  );
}

export function touchChannel(db: Db, id: number, now: number): void {
  db.run('UPDATE channels SET last_used = ? WHERE id = ?', [now, id]);
}

export interface ChannelInsert {
  userId: number;
  name: string;
  description: string;
  internal: boolean;
  defaultPriority: number;
  sortKey: string;
  parentId: number | null;
  tags: string[];
  deliveryConfig: Record<string, unknown>;
  now: number;
}

export function insertChannel(db: Db, c: ChannelInsert): number {
  return db.run(
    `INSERT INTO channels (user_id, name, description, internal, default_priority, sort_key, parent_id, tags,
       delivery_config, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      c.userId,
      c.name,
      c.description,
      c.internal ? 1 : 0,
      c.defaultPriority,
      c.sortKey,
      c.parentId,
      JSON.stringify(c.tags),
      JSON.stringify(c.deliveryConfig),
      c.now,
    ],
  ).lastInsertRowid;
}

export interface ChannelPatch {
  name?: string;
  description?: string;
  defaultPriority?: number;
  sortKey?: string;
  parentId?: number | null;
  tags?: string[];
  deliveryConfig?: Record<string, unknown>;
}

const PATCH_COLUMNS: Record<keyof ChannelPatch, string> = {
  name: 'name',
  description: 'description',
  defaultPriority: 'default_priority',
  sortKey: 'sort_key',
  parentId: 'parent_id',
  tags: 'tags',
  deliveryConfig: 'delivery_config',
};

export function updateChannel(db: Db, id: number, patch: ChannelPatch): void {
  const sets: string[] = [];
  const params: (string | number | null)[] = [];
  for (const [key, column] of Object.entries(PATCH_COLUMNS) as [keyof ChannelPatch, string][]) {
    const v = patch[key];
    if (v === undefined) continue;
    sets.push(`${column} = ?`);
    params.push(typeof v === 'object' && v !== null ? JSON.stringify(v) : v);
  }
  if (sets.length === 0) return;
  db.run(`UPDATE channels SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
}

export function setChannelImage(db: Db, id: number, image: string | null): void {
  db.run('UPDATE channels SET image = ? WHERE id = ?', [image, id]);
}

export function deleteChannelRow(db: Db, id: number): void {
  db.run('DELETE FROM channels WHERE id = ?', [id]);
}

/** Direct children of a set of channels (channels_by_parent). */
export function childIds(db: Db, parentId: number): number[] {
  return db.all<{ id: number }>('SELECT id FROM channels WHERE parent_id = ?', [parentId]).map((r) => r.id);
}

export function parentOf(db: Db, id: number): number | null {
  return (
    db.first<{ parent_id: number | null }>('SELECT parent_id FROM channels WHERE id = ?', [id])?.parent_id ??
    null
  );
}

/** Channels of a user carrying any of the tags (API-token scope by tag). */
export function ownChannelIdsWithTags(db: Db, userId: number, tags: readonly string[]): number[] {
  if (tags.length === 0) return [];
  return db
    .all<{ id: number; tags: string }>('SELECT id, tags FROM channels WHERE user_id = ?', [userId])
    .filter((r) => (JSON.parse(r.tags) as string[]).some((t) => tags.includes(t)))
    .map((r) => r.id);
}

export function channelStats(db: Db, ids: readonly number[]): { count: number; last: number | null } {
  let count = 0;
  let last: number | null = null;
  for (const id of ids) {
    const r = db.first<{ n: number; last: number | null }>(
      'SELECT count(*) AS n, (SELECT date FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1) AS last FROM messages WHERE channel_id = ?',
      [id, id],
    )!;
    count += r.n;
    if (r.last !== null && (last === null || r.last > last)) last = r.last;
  }
  return { count, last };
}

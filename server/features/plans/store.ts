import type { Db } from '../../db/database';

/** The configuration objects a plan caps by count (PlanLimits fields of the same names). */
export type CapKind = 'channels' | 'webhooks' | 'channelKeys' | 'shares' | 'apiTokens';
export const CAP_KINDS: readonly CapKind[] = ['channels', 'webhooks', 'channelKeys', 'shares', 'apiTokens'];

const OWN_CHANNELS = 'SELECT id FROM channels WHERE user_id = ?';

/** One count per kind, each on an index (channels_by_user, *_by_channel, shares_by_granter, api_tokens_by_user). */
const COUNT_SQL: Record<CapKind, string> = {
  channels: 'SELECT count(*) AS n FROM channels WHERE user_id = ? AND internal = 0',
  webhooks: `SELECT count(*) AS n FROM webhooks WHERE channel_id IN (${OWN_CHANNELS})`,
  channelKeys: `SELECT count(*) AS n FROM channel_keys WHERE is_primary = 0 AND channel_id IN (${OWN_CHANNELS})`,
  shares: 'SELECT count(*) AS n FROM shares WHERE granted_by = ?',
  apiTokens: 'SELECT count(*) AS n FROM api_tokens WHERE user_id = ?',
};

export function countOf(db: Db, userId: number, kind: CapKind): number {
  return db.first<{ n: number }>(COUNT_SQL[kind], [userId])?.n ?? 0;
}

const bytes = (...columns: string[]) => columns.map((c) => `length(CAST(${c} AS BLOB))`).join(' + ');

/** UTF-8 bytes of every text the user stored in configuration objects (what the plan's configBytes caps). */
const CONFIG_BYTES_SQL = `SELECT
  (SELECT coalesce(sum(${bytes('name', 'description', 'sort_key', 'tags', 'delivery_config')}), 0)
     FROM channels WHERE user_id = ?)
  + (SELECT coalesce(sum(${bytes('name', 'title', 'text')}), 0) FROM webhooks WHERE channel_id IN (${OWN_CHANNELS}))
  + (SELECT coalesce(sum(${bytes('name', 'note')}), 0) FROM channel_keys WHERE channel_id IN (${OWN_CHANNELS}))
  + (SELECT coalesce(sum(${bytes('email')}), 0) FROM shares WHERE granted_by = ?)
  + (SELECT coalesce(sum(${bytes('name', 'app_ids', 'app_tags')}), 0) FROM api_tokens WHERE user_id = ?) AS n`;

export function configBytes(db: Db, userId: number): number {
  return db.first<{ n: number }>(CONFIG_BYTES_SQL, [userId, userId, userId, userId, userId])?.n ?? 0;
}

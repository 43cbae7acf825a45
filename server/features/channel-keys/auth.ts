import type { AppContext, TokenResolver } from '../../context';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';

interface KeyAuthRow {
  id: number;
  channel_id: number;
  user_id: number;
  verified: number;
  label: string;
  can_read: number;
  can_write: number;
  expires_at: number;
  revoked_at: number | null;
  last_used: number | null;
}

/**
 * A tokens: a channel key that is neither revoked nor expired (expiresAt 0 = never). One indexed query
 * (key, its channel and the owner), since every `POST /message` starts here.
 */
export function channelKeyResolver(ctx: AppContext): TokenResolver {
  return (_token, digest) => {
    const row = ctx.db.first<KeyAuthRow>(
      // Scalar subqueries, not JOINs: in this sql.js build each JOIN costs ~15 µs per execution while
      // a subquery by primary key costs ~1 µs (test/bench/queries.bench.ts measures both).
      `SELECT k.id, k.channel_id, k.can_read, k.can_write, k.expires_at, k.revoked_at, k.last_used,
              (SELECT user_id FROM channels WHERE id = k.channel_id) AS user_id,
              COALESCE(NULLIF(k.name, ''), (SELECT name FROM channels WHERE id = k.channel_id)) AS label,
              (SELECT verified FROM users WHERE id = (SELECT user_id FROM channels WHERE id = k.channel_id)) AS verified
         FROM channel_keys k WHERE k.token_digest = ?`,
      [digest],
    );
    const now = ctx.clock.now();
    if (!row || row.revoked_at !== null || (row.expires_at > 0 && row.expires_at <= now)) return null;
    if (row.verified !== 1) throw errors.notVerified();
    if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
      ctx.db.relaxed(() => ctx.db.run('UPDATE channel_keys SET last_used = ? WHERE id = ?', [now, row.id]));
    return {
      kind: 'app',
      userId: row.user_id,
      admin: false,
      tokenId: row.id,
      channelId: row.channel_id,
      access: row.can_write ? 'write' : 'read',
      canRead: row.can_read === 1,
      canWrite: row.can_write === 1,
      label: row.label,
    };
  };
}

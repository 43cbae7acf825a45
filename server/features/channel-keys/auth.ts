import type { AppContext, TokenResolver } from '../../context';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { findUserById } from '../users/store';

interface KeyAuthRow {
  id: number;
  channel_id: number;
  user_id: number;
  can_read: number;
  can_write: number;
  expires_at: number;
  revoked_at: number | null;
  last_used: number | null;
}

/** A tokens: a channel key that is neither revoked nor expired (expiresAt 0 = never). */
export function channelKeyResolver(ctx: AppContext): TokenResolver {
  return (_token, digest) => {
    const row = ctx.db.first<KeyAuthRow>(
      `SELECT k.id, k.channel_id, c.user_id, k.can_read, k.can_write, k.expires_at, k.revoked_at, k.last_used
         FROM channel_keys k JOIN channels c ON c.id = k.channel_id WHERE k.token_digest = ?`,
      [digest],
    );
    const now = ctx.clock.now();
    if (!row || row.revoked_at !== null || (row.expires_at > 0 && row.expires_at <= now)) return null;
    const user = findUserById(ctx.db, row.user_id);
    if (!user) return null;
    if (user.verified !== 1) throw errors.notVerified();
    if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
      ctx.db.run('UPDATE channel_keys SET last_used = ? WHERE id = ?', [now, row.id]);
    return {
      kind: 'app',
      userId: user.id,
      admin: false,
      tokenId: row.id,
      channelId: row.channel_id,
      access: row.can_write ? 'write' : 'read',
      canRead: row.can_read === 1,
      canWrite: row.can_write === 1,
    };
  };
}

import type { AppContext, TokenResolver } from '../../context';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { findUserById } from '../users/store';

interface ShareAuthRow {
  id: number;
  channel_id: number;
  recipient_id: number;
  permission: 'view' | 'send';
  last_used: number | null;
}

/**
 * S tokens: the recipient's own key of an accepted share. Reads its channel; sends only with `send`
 * (spec "Authentication", point 10).
 */
export function shareTokenResolver(ctx: AppContext): TokenResolver {
  return (_token, digest) => {
    const row = ctx.db.first<ShareAuthRow>(
      "SELECT id, channel_id, recipient_id, permission, last_used FROM shares WHERE token_digest = ? AND status = 'accepted'",
      [digest],
    );
    if (!row) return null;
    const user = findUserById(ctx.db, row.recipient_id);
    if (!user) return null;
    if (user.verified !== 1) throw errors.notVerified();
    const now = ctx.clock.now();
    if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
      ctx.db.run('UPDATE shares SET last_used = ? WHERE id = ?', [now, row.id]);
    const send = row.permission === 'send';
    return {
      kind: 'share',
      userId: user.id,
      admin: false,
      tokenId: row.id,
      channelId: row.channel_id,
      access: send ? 'write' : 'read',
      canRead: true,
      canWrite: send,
    };
  };
}

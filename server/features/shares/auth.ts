import type { AppContext, TokenResolver } from '../../context';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';

interface ShareAuthRow {
  id: number;
  channel_id: number;
  recipient_id: number;
  email: string;
  verified: number;
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
      `SELECT s.id, s.channel_id, s.recipient_id, s.permission, s.last_used,
              (SELECT email FROM users WHERE id = s.recipient_id) AS email,
              (SELECT verified FROM users WHERE id = s.recipient_id) AS verified
         FROM shares s WHERE s.token_digest = ? AND s.status = 'accepted'`,
      [digest],
    );
    if (!row) return null;
    if (row.verified !== 1) throw errors.notVerified();
    const now = ctx.clock.now();
    if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
      ctx.db.relaxed(() => ctx.db.run('UPDATE shares SET last_used = ? WHERE id = ?', [now, row.id]));
    const send = row.permission === 'send';
    return {
      kind: 'share',
      userId: row.recipient_id,
      admin: false,
      tokenId: row.id,
      channelId: row.channel_id,
      access: send ? 'write' : 'read',
      canRead: true,
      canWrite: send,
      label: row.email,
    };
  };
}

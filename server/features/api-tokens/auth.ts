import type { AppContext, TokenResolver } from '../../context';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { findUserById } from '../users/store';

interface ApiTokenAuthRow {
  id: number;
  user_id: number;
  access: 'read' | 'write';
  app_ids: string;
  app_tags: string;
  expires_at: number | null;
  last_used: number | null;
}

/** M tokens: an unexpired API token; carries its access and channel scope. */
export function apiTokenResolver(ctx: AppContext): TokenResolver {
  return (_token, digest) => {
    const row = ctx.db.first<ApiTokenAuthRow>(
      'SELECT id, user_id, access, app_ids, app_tags, expires_at, last_used FROM api_tokens WHERE token_digest = ?',
      [digest],
    );
    const now = ctx.clock.now();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return null;
    const user = findUserById(ctx.db, row.user_id);
    if (!user) return null;
    if (user.verified !== 1) throw errors.notVerified();
    if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
      ctx.db.relaxed(() => ctx.db.run('UPDATE api_tokens SET last_used = ? WHERE id = ?', [now, row.id]));
    return {
      kind: 'api',
      userId: user.id,
      admin: user.admin === 1,
      tokenId: row.id,
      access: row.access,
      scope: { appIds: JSON.parse(row.app_ids) as number[], appTags: JSON.parse(row.app_tags) as string[] },
      canRead: true,
      canWrite: row.access === 'write',
    };
  };
}

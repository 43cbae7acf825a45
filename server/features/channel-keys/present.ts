import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { KeyRow } from './store';

/** Channel key record (spec "Channel key record"; docs/api.md "Channel keys"). */
export function presentKey(row: KeyRow, fullToken?: string) {
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    note: row.note,
    canRead: row.can_read === 1,
    canWrite: row.can_write === 1,
    primary: row.is_primary === 1,
    expiresAt: row.expires_at,
    revoked: row.revoked_at !== null,
    lastUsed: rfc3339OrNull(row.last_used),
    createdAt: rfc3339(row.created_at),
    token: fullToken ?? row.token_hint,
  };
}

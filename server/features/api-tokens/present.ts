import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { ApiTokenRow } from './store';

/** API token of the spec; `token` is the masked hint unless the full value is being issued. */
export function presentApiToken(row: ApiTokenRow, fullToken?: string) {
  return {
    id: row.id,
    name: row.name,
    access: row.access,
    appIds: JSON.parse(row.app_ids) as number[],
    appTags: JSON.parse(row.app_tags) as string[],
    expiresAt: rfc3339OrNull(row.expires_at),
    token: fullToken ?? row.token_hint,
    lastUsed: rfc3339OrNull(row.last_used),
    createdAt: rfc3339(row.created_at),
  };
}

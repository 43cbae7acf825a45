import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { type ScriptRow, unresolvedCount } from './store';

/** The web script record (§9); `token`, `url` and `snippet` carry the full token only when it was just issued. */
export function presentScript(ctx: AppContext, row: ScriptRow, fullToken?: string) {
  const token = fullToken ?? row.token_hint;
  const url = `${ctx.publicUrl()}/script/${token}`;
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    paused: row.status === 'paused',
    status: row.status,
    statusSince: rfc3339(row.status_since),
    lastCheckAt: rfc3339OrNull(row.last_check_at),
    createdAt: rfc3339(row.created_at),
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    priority: row.priority,
    token,
    url,
    snippet: `<script src="${url}" async></script>`,
    unresolvedCount: unresolvedCount(ctx.db, row.id),
  };
}

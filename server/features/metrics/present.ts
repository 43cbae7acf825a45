import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { SourceRow } from './store';

/** The metric source record (§8); `token`/`url` carry the full token only when it was just issued. */
export function presentSource(ctx: AppContext, row: SourceRow, fullToken?: string) {
  const token = fullToken ?? row.token_hint;
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    paused: row.status === 'paused',
    status: row.status,
    statusSince: rfc3339(row.status_since),
    lastCheckAt: rfc3339OrNull(row.last_check_at),
    createdAt: rfc3339(row.created_at),
    token,
    url: `${ctx.publicUrl()}/metric/${token}`,
  };
}

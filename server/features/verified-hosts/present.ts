import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { proofUrl, TXT_PREFIX } from './proof';
import type { VerifiedHostRow } from './store';

/** The steps of the record's method (§3.1, English). */
export function instructionsOf(row: VerifiedHostRow): string {
  if (row.method === 'http')
    return `Serve the text ${row.token} at ${proofUrl(row.host, row.http_port ?? 80)}, then call POST /verified-host/check.`;
  return `Add a TXT record to ${row.host}: ${TXT_PREFIX}${row.token}, then call POST /verified-host/check.`;
}

/** The record of §3.1; `token` is always shown (it is a public proof). */
export function presentVerifiedHost(row: VerifiedHostRow) {
  return {
    id: row.id,
    host: row.host,
    method: row.method,
    token: row.token,
    verified: row.verified_at !== null,
    verifiedAt: rfc3339OrNull(row.verified_at),
    checkedAt: rfc3339OrNull(row.checked_at),
    lastError: row.last_error,
    httpPort: row.method === 'http' ? (row.http_port ?? 80) : null,
    instructions: instructionsOf(row),
    createdAt: rfc3339(row.created_at),
  };
}

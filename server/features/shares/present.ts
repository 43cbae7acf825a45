import { rfc3339 } from '../../lib/clock';
import type { ShareRow } from './store';

/** The contract's share record. */
export function presentShare(row: ShareRow) {
  return {
    id: row.id,
    appid: row.channel_id,
    email: row.email,
    permission: row.permission,
    canShare: row.can_share === 1,
    status: row.status,
    createdAt: rfc3339(row.created_at),
  };
}

/** `GET /share/incoming` also names the channel and who owns it. */
export function presentIncoming(row: ShareRow) {
  return { ...presentShare(row), channelName: row.channel_name, ownerEmail: row.owner_email };
}

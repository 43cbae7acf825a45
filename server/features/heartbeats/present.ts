import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { HeartbeatRow } from './store';

/** The heartbeat record (§1.1); `token`/`pingUrl` carry the full token only when it was just issued. */
export function presentHeartbeat(ctx: AppContext, row: HeartbeatRow, fullToken?: string) {
  const token = fullToken ?? row.token_hint;
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    paused: row.status === 'paused',
    status: row.status,
    lastCheckAt: rfc3339OrNull(row.last_ping_at),
    createdAt: rfc3339(row.created_at),
    intervalSec: row.interval_sec,
    schedule: row.schedule,
    timezone: row.timezone,
    graceSec: row.grace_sec,
    alertMessage: row.alert_message,
    manualResume: row.manual_resume === 1,
    priority: row.priority,
    token,
    pingUrl: `${ctx.publicUrl()}/heartbeat/ping/${token}`,
    expectedAt: rfc3339OrNull(row.expected_at),
    deadlineAt: rfc3339OrNull(row.deadline_at),
    lastFailReason: row.last_fail_reason,
    startedAt: rfc3339OrNull(row.started_at),
    lastDurationMs: row.last_duration_ms,
    statusSince: rfc3339(row.status_since),
  };
}

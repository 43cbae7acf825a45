import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { openSettings, stateOfRow } from './fields';
import type { AnyMonitorKind } from './kind';
import type { MonitorRow } from './store';

/** The monitor record: the source fields (§0.3), the common fields (§2.2), then the kind's own. */
export function presentMonitor(ctx: AppContext, kind: AnyMonitorKind, row: MonitorRow) {
  return {
    id: row.id,
    kind: row.kind,
    appid: row.channel_id,
    name: row.name,
    paused: row.status === 'paused',
    status: row.status,
    lastCheckAt: rfc3339OrNull(row.last_check_at),
    createdAt: rfc3339(row.created_at),
    intervalSec: row.interval_sec,
    timeoutSec: row.timeout_sec,
    retries: row.retries,
    resendEverySec: row.resend_every_sec,
    priority: row.priority,
    statusSince: rfc3339(row.status_since),
    consecutiveFailures: row.consecutive_failures,
    lastError: row.last_error,
    lastResponseMs: row.last_response_ms,
    ...kind.present(openSettings(ctx, row), stateOfRow(row)),
  };
}

import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { liveProgress, progressOf } from './runner';
import type { OpenEntry, PortScanRow } from './store';

/** The scan record (§0.3 source fields, §3.2); a running scan shows its live progress. */
export function presentScan(ctx: AppContext, row: PortScanRow) {
  const live = row.status === 'running' ? liveProgress(ctx, row.id) : undefined;
  const scanned = live?.scanned ?? row.scanned;
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    paused: false,
    status: row.status,
    lastCheckAt: rfc3339OrNull(row.finished_at),
    createdAt: rfc3339(row.created_at),
    host: row.host,
    ports: row.ports,
    concurrency: row.concurrency,
    timeoutMs: row.timeout_ms,
    notes: row.notes,
    progress: row.status === 'done' ? 1 : progressOf(scanned, row.port_count),
    portCount: row.port_count,
    scanned,
    open: live?.open ?? (JSON.parse(row.open) as OpenEntry[]),
    error: row.error,
    startedAt: rfc3339OrNull(row.started_at),
    finishedAt: rfc3339OrNull(row.finished_at),
  };
}

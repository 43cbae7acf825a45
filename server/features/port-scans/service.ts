import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { PORT_SCANS_QUEUED_PER_USER } from '../../lib/limits';
import { channelInScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { monitorKind } from '../monitors/kind';
import { createMonitor } from '../monitors/service';
import type { MonitorRow } from '../monitors/store';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import { statusChanged } from '../sources/messages';
import { isHostVerified } from '../verified-hosts/service';
import { abortScan, endScan, kick, liveProgress } from './runner';
import {
  countQueued,
  deleteScan,
  findScan,
  insertScan,
  listScansOfUser,
  type OpenEntry,
  type PortScanRow,
  recipientActiveScans,
  resetScan,
  updateScanText,
} from './store';

/** Ports a `port-monitor` made from a scan checks with TLS (§3.2). */
const TLS_PORTS = new Set([443, 465, 636, 993, 995, 8443]);

export interface CreateScanInput {
  appid: number;
  host: string;
  ports: { spec: string; count: number };
  concurrency: number;
  timeoutMs: number;
  notes: string;
  name?: string | undefined;
}

/** The caller's own scan inside an API token's scope; anything else is 404 `port scan not found`. */
function ownScan(ctx: AppContext, p: Principal, id: number): PortScanRow {
  const row = findScan(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('port scan');
  return row;
}

function assertVerified(ctx: AppContext, p: Principal, host: string): void {
  if (!isHostVerified(ctx, p.userId, host)) throw errors.hostNotVerified(host);
}

function assertQueueRoom(ctx: AppContext, userId: number): void {
  if (countQueued(ctx.db, userId) >= PORT_SCANS_QUEUED_PER_USER)
    throw errors.userCap(PORT_SCANS_QUEUED_PER_USER, 'queued port scans');
}

export function listScans(ctx: AppContext, p: Principal, appid?: number): PortScanRow[] {
  return sourcesInView(ctx, p, listScansOfUser(ctx.db, p.userId), appid);
}

export function getScan(ctx: AppContext, p: Principal, id: number): PortScanRow {
  return ownScan(ctx, p, id);
}

/** Queued, and started at once when none of the caller's scans runs. */
export function createScan(ctx: AppContext, p: Principal, input: CreateScanInput): PortScanRow {
  const channel = writableChannel(ctx, p, input.appid);
  assertVerified(ctx, p, input.host);
  const name = (input.name ?? `${input.host} ${input.ports.spec}`).slice(0, 200);
  const id = ctx.db.transaction(() => {
    assertQueueRoom(ctx, p.userId);
    return insertScan(
      ctx.db,
      {
        userId: p.userId,
        channelId: channel.id,
        name,
        host: input.host,
        ports: input.ports.spec,
        portCount: input.ports.count,
        concurrency: input.concurrency,
        timeoutMs: input.timeoutMs,
        notes: input.notes,
      },
      ctx.clock.now(),
    );
  });
  statusChanged(ctx, channel.id);
  kick(ctx, p.userId);
  return findScan(ctx.db, id)!;
}

export function updateScan(
  ctx: AppContext,
  p: Principal,
  id: number,
  input: { name?: string | undefined; notes?: string | undefined },
): PortScanRow {
  const row = ownScan(ctx, p, id);
  ctx.db.transaction(() => updateScanText(ctx.db, id, input.name ?? row.name, input.notes ?? row.notes));
  if (input.name !== undefined && input.name !== row.name) statusChanged(ctx, row.channel_id);
  return findScan(ctx.db, id)!;
}

/** `cancelled`, keeping the open ports found so far; 409 unless queued or running. */
export function cancelScan(ctx: AppContext, p: Principal, id: number): PortScanRow {
  const row = ownScan(ctx, p, id);
  if (row.status !== 'queued' && row.status !== 'running') throw errors.conflict('scan is not running');
  cancelRow(ctx, row);
  return findScan(ctx.db, id)!;
}

/** `cancelled` (no message), keeping what it found. */
function cancelRow(ctx: AppContext, row: PortScanRow): void {
  const found = abortScan(ctx, row.id, 'cancel') ?? {
    scanned: row.scanned,
    open: JSON.parse(row.open) as OpenEntry[],
  };
  endScan(ctx, row.id, 'cancelled', found, null);
}

/**
 * A recipient who lost `send` on the channel (revoke, leave, downgrade): their scans there that wait or
 * run are cancelled, as their other sources there are paused (§0.3); a scan has no pause.
 */
export function cancelLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  for (const row of recipientActiveScans(ctx.db, appid, channel.user_id)) {
    const v = receivedChannel(ctx, row.user_id, appid);
    if (!v || !maySend(v)) cancelRow(ctx, row);
  }
}

/** Back to `queued` with nothing found; 409 while queued or running. The host must still be verified. */
export function restartScan(ctx: AppContext, p: Principal, id: number): PortScanRow {
  const row = ownScan(ctx, p, id);
  if (row.status === 'queued' || row.status === 'running') throw errors.conflict('scan is already running');
  assertVerified(ctx, p, row.host);
  ctx.db.transaction(() => {
    assertQueueRoom(ctx, p.userId);
    resetScan(ctx.db, id, ctx.clock.now());
  });
  statusChanged(ctx, row.channel_id);
  kick(ctx, p.userId);
  return findScan(ctx.db, id)!;
}

/** Cancels first (no message), then deletes. */
export function removeScan(ctx: AppContext, p: Principal, id: number): void {
  const row = ownScan(ctx, p, id);
  abortScan(ctx, id, 'gone');
  ctx.db.transaction(() => deleteScan(ctx.db, id));
  statusChanged(ctx, row.channel_id);
}

/** The open ports of a scan: the live list while it runs here, else the stored one. */
export function openOf(ctx: AppContext, row: PortScanRow): OpenEntry[] {
  return liveProgress(ctx, row.id)?.open ?? (JSON.parse(row.open) as OpenEntry[]);
}

/** A `port-monitor` on the scan's channel for a port this scan found open (§3.2). */
export function scanToMonitor(
  ctx: AppContext,
  p: Principal,
  id: number,
  input: { port: number; name?: string | undefined; intervalSec?: number | undefined },
): { kind: ReturnType<typeof monitorKind>; row: MonitorRow } {
  const row = ownScan(ctx, p, id);
  if (!openOf(ctx, row).some((o) => o.port === input.port))
    throw errors.badRequest('port: not open in this scan');
  const kind = monitorKind(ctx, 'port-monitor');
  if (!kind) throw errors.notImplemented('POST', '/port-monitor');
  const monitor = createMonitor(
    ctx,
    p,
    kind,
    {
      appid: row.channel_id,
      name: input.name ?? `${row.host}:${input.port}`,
      ...(input.intervalSec === undefined ? {} : { intervalSec: input.intervalSec }),
    },
    { host: row.host, port: input.port, tls: TLS_PORTS.has(input.port) },
  );
  return { kind, row: monitor };
}

import type { AppContext } from '../../context';
import { untilAborted } from '../monitors/net/errors';
import { resolveHost } from '../monitors/net/resolve';
import { sendSourceMessage, statusChanged } from '../sources/messages';
import { portsOf, serviceNames } from './ports';
import { serviceFromBanner, tcpScan } from './scanner';
import {
  activeScans,
  findScan,
  markFinished,
  markRunning,
  nextQueued,
  type OpenEntry,
  type PortScanRow,
  type ScanStatus,
  writeProgress,
} from './store';

/**
 * The queue of port scans (§3.2): one running scan per user, the others `queued` in order. Started at
 * once when a scan is created (or the previous one ends), so the answer of `POST /port-scan` already says
 * `running`. Progress lives in memory while a scan runs (read by the routes), is written to the database
 * every PROGRESS_WRITE_MS (relaxed: a crash loses a few seconds of progress of a scan that then fails
 * anyway), and goes to `/ws?events=1` as `port-scan:progress` at most every PROGRESS_FRAME_MS.
 */

export const KIND = 'port-scan';
export const INTERRUPTED = 'interrupted by server stop';
const PROGRESS_FRAME_MS = 250;
const PROGRESS_WRITE_MS = 2_000;
/** Open ports named in the `done` message; beyond them, `… and N more`. */
const LISTED_IN_MESSAGE = 50;

type EndReason = 'cancel' | 'stop' | 'gone';

interface Live {
  scanId: number;
  userId: number;
  appid: number;
  portCount: number;
  controller: AbortController;
  reason: EndReason | null;
  scanned: number;
  open: OpenEntry[];
  lastFrameAt: number;
  lastWriteAt: number;
  frameTimer: NodeJS.Timeout | null;
  done: Promise<void>;
}

interface Runner {
  byUser: Map<number, Live>;
  byScan: Map<number, Live>;
  stopped: boolean;
  /** Set at init: scans left `running` or `queued` by the previous process are looked at once started. */
  bootPending: boolean;
}

const runners = new WeakMap<AppContext, Runner>();

function runner(ctx: AppContext): Runner {
  let r = runners.get(ctx);
  if (!r) {
    r = { byUser: new Map(), byScan: new Map(), stopped: false, bootPending: true };
    runners.set(ctx, r);
  }
  return r;
}

/** What a running scan has found so far, or undefined when it is not running in this process. */
export function liveProgress(
  ctx: AppContext,
  scanId: number,
): { scanned: number; open: OpenEntry[] } | undefined {
  const live = runners.get(ctx)?.byScan.get(scanId);
  return live ? { scanned: live.scanned, open: sortedOpen(live.open) } : undefined;
}

function sortedOpen(open: OpenEntry[]): OpenEntry[] {
  return [...open].sort((a, b) => a.port - b.port);
}

/** progress 0-1, three decimals, never 1 before the end. */
export function progressOf(scanned: number, portCount: number): number {
  if (portCount <= 0) return 1;
  return Math.floor((scanned / portCount) * 1000) / 1000;
}

function progressFrame(ctx: AppContext, live: Live, status: ScanStatus): void {
  live.lastFrameAt = performance.now();
  ctx.bus.emit('source:event', {
    appid: live.appid,
    kind: 'port-scan:progress',
    data: {
      id: live.scanId,
      appid: live.appid,
      status,
      progress: status === 'done' ? 1 : progressOf(live.scanned, live.portCount),
      scanned: live.scanned,
      portCount: live.portCount,
      open: live.open.length,
    },
  });
}

function statusFrame(
  ctx: AppContext,
  row: PortScanRow,
  from: ScanStatus,
  to: ScanStatus,
  messageId: number | null = null,
): void {
  ctx.bus.emit('source:event', {
    appid: row.channel_id,
    kind: 'port-scan:status_changed',
    data: { id: row.id, name: row.name, from, to, messageId },
  });
  statusChanged(ctx, row.channel_id);
}

/** After each port: a throttled frame, and now and then the progress written down. */
function onProgress(ctx: AppContext, live: Live): void {
  const now = performance.now();
  if (now - live.lastWriteAt >= PROGRESS_WRITE_MS) {
    live.lastWriteAt = now;
    ctx.db.relaxed(() => writeProgress(ctx.db, live.scanId, live.scanned, sortedOpen(live.open)));
    // Deleted with its channel or its user meanwhile: stop scanning for nobody.
    if (!findScan(ctx.db, live.scanId)) {
      live.reason ??= 'gone';
      live.controller.abort();
      return;
    }
  }
  if (now - live.lastFrameAt >= PROGRESS_FRAME_MS) progressFrame(ctx, live, 'running');
  else if (live.frameTimer === null) {
    live.frameTimer = setTimeout(
      () => {
        live.frameTimer = null;
        if (live.reason === null && runners.get(ctx)?.byScan.get(live.scanId) === live)
          progressFrame(ctx, live, 'running');
      },
      PROGRESS_FRAME_MS - (now - live.lastFrameAt),
    );
    live.frameTimer.unref();
  }
}

/** `{n} open: 22 (ssh), 443 (https)` / `no open ports` (§3.2). */
export function doneText(open: OpenEntry[]): string {
  if (open.length === 0) return 'no open ports';
  const shown = open
    .slice(0, LISTED_IN_MESSAGE)
    .map((o) => (o.service ? `${o.port} (${o.service})` : `${o.port}`))
    .join(', ');
  const more = open.length > LISTED_IN_MESSAGE ? ` … and ${open.length - LISTED_IN_MESSAGE} more` : '';
  return `${open.length} open: ${shown}${more}`;
}

/**
 * The end of a running scan: the record, the done or failed message (none when cancelled, §3.2), the
 * frames. Nothing when the scan is no longer `running` (cancelled or deleted meanwhile).
 */
export function endScan(
  ctx: AppContext,
  scanId: number,
  status: 'done' | 'cancelled' | 'failed',
  found: { scanned: number; open: OpenEntry[] },
  error: string | null,
): void {
  const row = findScan(ctx.db, scanId);
  if (!row || (row.status !== 'running' && row.status !== 'queued')) return;
  const open = sortedOpen(found.open);
  const now = ctx.clock.now();
  const src = { kind: KIND, id: row.id, name: row.name, channelId: row.channel_id };
  const messageId = ctx.db.transaction(() => {
    markFinished(ctx.db, row.id, { status, scanned: found.scanned, open, error }, now);
    if (status === 'done')
      return sendSourceMessage(ctx, src, 'done', {
        title: `Port scan of ${row.host} finished`,
        message: doneText(open),
        priority: 3,
        date: now,
      });
    if (status === 'failed')
      return sendSourceMessage(ctx, src, 'failed', {
        title: `Port scan of ${row.host} failed`,
        message: error ?? 'failed',
        priority: 5,
        date: now,
      });
    return null;
  });
  const live = runners.get(ctx)?.byScan.get(scanId);
  if (live) {
    if (live.frameTimer) clearTimeout(live.frameTimer);
    live.frameTimer = null;
    live.scanned = found.scanned;
    progressFrame(ctx, live, status);
  }
  statusFrame(ctx, row, row.status, status, messageId);
}

function ownerIsAdmin(ctx: AppContext, userId: number): boolean {
  return ctx.db.first<{ admin: number }>('SELECT admin FROM users WHERE id = ?', [userId])?.admin === 1;
}

async function run(ctx: AppContext, live: Live, row: PortScanRow): Promise<void> {
  const signal = live.controller.signal;
  const allowPrivate = !ctx.config.blockPrivateTargets || ownerIsAdmin(ctx, row.user_id);
  // A lookup cannot be cancelled, only left behind: a stop or cancel does not wait for it.
  const resolved = await untilAborted(resolveHost(ctx, row.host, { allowPrivate }), signal);
  if (resolved !== null && !signal.aborted && 'error' in resolved) {
    endScan(ctx, row.id, 'failed', live, resolved.error);
    return;
  }
  let failure: string | null = null;
  if (resolved !== null && !signal.aborted && !('error' in resolved)) {
    const ports = portsOf(row.ports);
    const names = serviceNames();
    live.portCount = ports.length;
    try {
      await tcpScan({
        address: resolved.address,
        ports,
        concurrency: row.concurrency,
        timeoutMs: row.timeout_ms,
        signal,
        onOpen: ({ port, banner }) => {
          const service = (banner === undefined ? undefined : serviceFromBanner(banner)) ?? names.get(port);
          live.open.push({
            port,
            ...(service === undefined ? {} : { service }),
            ...(banner === undefined ? {} : { banner }),
          });
        },
        onScanned: () => {
          live.scanned++;
          onProgress(ctx, live);
        },
      });
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
  }
  if (failure !== null) endScan(ctx, row.id, 'failed', live, failure);
  else if (live.reason === 'stop') endScan(ctx, row.id, 'failed', live, INTERRUPTED);
  else if (live.reason === null) endScan(ctx, row.id, 'done', live, null);
  // cancel: the cancel route wrote the record; gone: there is no record.
}

/** Starts the user's next queued scan when none of theirs runs. Synchronous up to `running`. */
export function kick(ctx: AppContext, userId: number): void {
  const r = runner(ctx);
  if (r.stopped || r.byUser.has(userId)) return;
  const row = nextQueued(ctx.db, userId);
  if (!row) return;
  ctx.db.transaction(() => markRunning(ctx.db, row.id, ctx.clock.now()));
  const live: Live = {
    scanId: row.id,
    userId,
    appid: row.channel_id,
    portCount: row.port_count,
    controller: new AbortController(),
    reason: null,
    scanned: 0,
    open: [],
    lastFrameAt: 0,
    lastWriteAt: performance.now(),
    frameTimer: null,
    done: Promise.resolve(),
  };
  r.byUser.set(userId, live);
  r.byScan.set(row.id, live);
  statusFrame(ctx, row, 'queued', 'running');
  live.done = run(ctx, live, row)
    .catch((err: unknown) => {
      ctx.log.error('port scan failed', { err, scanId: row.id });
      try {
        endScan(ctx, row.id, 'failed', live, err instanceof Error ? err.message : String(err));
      } catch (e) {
        ctx.log.error('port scan: recording the failure failed', { err: e, scanId: row.id });
      }
    })
    .finally(() => {
      if (live.frameTimer) clearTimeout(live.frameTimer);
      r.byUser.delete(userId);
      r.byScan.delete(row.id);
      if (!r.stopped) kick(ctx, userId);
    });
}

/**
 * Stops a running scan of this process (cancel, delete): it takes no further port; the caller writes the
 * record. Returns what it had found.
 */
export function abortScan(ctx: AppContext, scanId: number, reason: 'cancel' | 'gone') {
  const live = runners.get(ctx)?.byScan.get(scanId);
  if (!live) return undefined;
  live.reason ??= reason;
  live.controller.abort();
  if (live.frameTimer) clearTimeout(live.frameTimer);
  live.frameTimer = null;
  return { scanned: live.scanned, open: [...live.open] };
}

/** DueSource `port-scan`: due once, right after start, for what the previous process left behind. */
export function bootNextDue(ctx: AppContext): number | null {
  return runner(ctx).bootPending ? 0 : null;
}

/**
 * A scan `running` in the database but not in this process was interrupted when the previous process
 * stopped (or crashed): `failed`, `interrupted by server stop`, with its message. Queued scans start.
 */
export function recoverScans(ctx: AppContext): void {
  const r = runner(ctx);
  if (!r.bootPending) return;
  r.bootPending = false;
  const users = new Set<number>();
  for (const row of activeScans(ctx.db)) {
    if (row.status === 'running' && !r.byScan.has(row.id))
      endScan(ctx, row.id, 'failed', { scanned: row.scanned, open: JSON.parse(row.open) }, INTERRUPTED);
    users.add(row.user_id);
  }
  for (const u of users) kick(ctx, u);
}

/** Server stop: every running scan ends `failed` (`interrupted by server stop`), queued ones wait. */
export async function stopScans(ctx: AppContext): Promise<void> {
  const r = runner(ctx);
  r.stopped = true;
  const running = [...r.byScan.values()];
  for (const live of running) {
    live.reason ??= 'stop';
    live.controller.abort();
  }
  await Promise.allSettled(running.map((l) => l.done));
}

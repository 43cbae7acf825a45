import type { AppContext } from '../../context';
import { registerUserCounter } from '../current-user/service';
import { registerHistoryKind } from '../history/service';
import type { Feature } from '../index';
import { registerMaintained } from '../maintenance/coverage';
import {
  type ChannelHealthProvider,
  hbStatusOf,
  registerChannelHealth,
  registerSourceKind,
  type SourceSummary,
} from '../sources/registry';
import { heartbeatRoutes } from './routes';
import {
  heartbeatNextDue,
  KIND,
  onClockGap,
  pauseLostRecipients,
  runDueHeartbeats,
  syncMaintenance,
} from './service';
import {
  countByChannelAndStatus,
  countHeartbeatsOfUser,
  findHeartbeat,
  type HeartbeatRow,
  listHeartbeatsOfChannels,
} from './store';

function summary(row: HeartbeatRow): SourceSummary {
  return {
    kind: KIND,
    id: row.id,
    name: row.name,
    appid: row.channel_id,
    status: row.status,
    paused: row.status === 'paused',
    lastCheckAt: row.last_ping_at,
    statusSince: row.status_since,
    userId: row.user_id,
  };
}

/** hb* of the channel object (§1.6), over each channel's own non-paused heartbeats. */
export const heartbeatHealth: ChannelHealthProvider = {
  summarize(ctx, channelIds) {
    const out = new Map<number, Record<string, unknown>>();
    const counts = new Map<number, Record<string, number>>();
    for (const r of countByChannelAndStatus(ctx.db, channelIds)) {
      const c = counts.get(r.channel_id) ?? {};
      c[r.status] = r.n;
      counts.set(r.channel_id, c);
    }
    for (const id of channelIds) out.set(id, healthOf(counts.get(id) ?? {}));
    return out;
  },
};

export function healthOf(c: Record<string, number>) {
  const hbAlerting = c.down ?? 0;
  const hbAlertingInfo = c.late ?? 0;
  const hbPending = c.new ?? 0;
  // `maintenance` heartbeats count only in hbTotal (§1.6).
  const hbTotal = hbAlerting + hbAlertingInfo + hbPending + (c.up ?? 0) + (c.maintenance ?? 0);
  const counts = { hbTotal, hbAlerting, hbAlertingInfo, hbPending };
  return { ...counts, hbStatus: hbStatusOf(counts) };
}

function init(ctx: AppContext): void {
  ctx.due.register({ name: KIND, nextDueAt: heartbeatNextDue, runDue: runDueHeartbeats });
  registerHistoryKind(ctx, {
    kind: KIND,
    upStatuses: ['up', 'late'],
    downStatuses: ['down'],
    maintenanceStatuses: ['maintenance'],
  });
  registerSourceKind(ctx, {
    kind: KIND,
    listForChannels: (c, ids) => listHeartbeatsOfChannels(c.db, ids).map(summary),
    find: (c, id) => {
      const row = findHeartbeat(c.db, id);
      return row ? summary(row) : undefined;
    },
  });
  registerChannelHealth(ctx, heartbeatHealth);
  registerMaintained(ctx, { name: KIND, sync: syncMaintenance });
  registerUserCounter(ctx, 'heartbeatCounter', (userId) => countHeartbeatsOfUser(ctx.db, userId));
  ctx.bus.on('clock:gap', ({ from, to }) => onClockGap(ctx, from, to));
  ctx.bus.on('share:changed', ({ appid }) => pauseLostRecipients(ctx, appid));
}

/** Heartbeats (issue 11): dead-man switches, their ping endpoint and deadlines. */
export const heartbeatsFeature: Feature = { name: 'heartbeats', init, routes: heartbeatRoutes };

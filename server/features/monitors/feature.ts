import type { AppContext } from '../../context';
import { registerUserCounter } from '../current-user/service';
import { registerHistoryKind } from '../history/service';
import type { Feature, FeatureHooks } from '../index';
import { registerMaintained } from '../maintenance/coverage';
import { registerSourceKind, type SourceSummary, sourceKind } from '../sources/registry';
import {
  monitorNextDue,
  monitorsIdle,
  onClockGap,
  onPowerChanged,
  runDueMonitors,
  stopMonitors,
  syncMaintenance,
} from './engine';
import { monitorKinds, registerMonitorKind } from './kind';
import { pruneShots } from './kinds/browser/shots';
import { BUILT_IN_KINDS } from './kinds/index';
import { monitorRoutes } from './routes';
import { pauseLostRecipients } from './service';
import { countMonitorsOfUser, findMonitor, listMonitorsOfChannels, type MonitorRow } from './store';

function summary(row: MonitorRow): SourceSummary {
  return {
    kind: row.kind,
    id: row.id,
    name: row.name,
    appid: row.channel_id,
    status: row.status,
    paused: row.status === 'paused',
    lastCheckAt: row.last_check_at,
    statusSince: row.status_since,
    userId: row.user_id,
  };
}

/** Registers a kind with the history module and the event-sources registry (a kind of any origin). */
function registerKindSources(ctx: AppContext, kind: string): void {
  if (sourceKind(ctx, kind)) return;
  registerHistoryKind(ctx, {
    kind,
    upStatuses: ['up'],
    downStatuses: ['down'],
    maintenanceStatuses: ['maintenance'],
  });
  registerSourceKind(ctx, {
    kind,
    listForChannels: (c, ids) => listMonitorsOfChannels(c.db, kind, ids).map(summary),
    find: (c, id) => {
      const row = findMonitor(c.db, id);
      return row && row.kind === kind ? summary(row) : undefined;
    },
  });
}

function init(ctx: AppContext, hooks: FeatureHooks): void {
  for (const k of BUILT_IN_KINDS) registerMonitorKind(ctx, k);
  ctx.due.register({
    name: 'monitor',
    nextDueAt: monitorNextDue,
    runDue: runDueMonitors,
    idle: monitorsIdle,
  });
  registerMaintained(ctx, { name: 'monitor', sync: syncMaintenance });
  hooks.retention.register('browser-shots', pruneShots);
  registerUserCounter(ctx, 'monitorCounter', (userId) => countMonitorsOfUser(ctx.db, userId));
  ctx.bus.on('clock:gap', ({ from, to }) => onClockGap(ctx, from, to));
  ctx.bus.on('share:changed', ({ appid }) => pauseLostRecipients(ctx, appid));
  ctx.bus.on('power:changed', ({ onBattery }) => onPowerChanged(ctx, onBattery));
}

/**
 * Monitors (issue 12): one engine for every kind in the kind registry (kind.ts). Kinds registered by
 * any feature's init (the built-in ones here) get their routes, history and event-source entries when
 * the routes are assembled, after every init.
 */
export const monitorsFeature: Feature = {
  name: 'monitors',
  init,
  routes: (ctx) => {
    for (const k of monitorKinds(ctx)) registerKindSources(ctx, k.kind);
    return monitorRoutes(ctx);
  },
  stop: stopMonitors,
};

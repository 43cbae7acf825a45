import type { AppContext } from '../../context';
import type { Feature } from '../index';
import { registerSourceKind, type SourceSummary } from '../sources/registry';
import { portScanRoutes } from './routes';
import { bootNextDue, KIND, recoverScans, stopScans } from './runner';
import { cancelLostRecipients } from './service';
import { findScan, listScansOfChannels, type PortScanRow } from './store';

function summary(row: PortScanRow): SourceSummary {
  return {
    kind: KIND,
    id: row.id,
    name: row.name,
    appid: row.channel_id,
    status: row.status,
    paused: false,
    lastCheckAt: row.finished_at,
    statusSince: row.status_since,
    userId: row.user_id,
  };
}

function init(ctx: AppContext): void {
  registerSourceKind(ctx, {
    kind: KIND,
    listForChannels: (c, ids) => listScansOfChannels(c.db, ids).map(summary),
    find: (c, id) => {
      const row = findScan(c.db, id);
      return row ? summary(row) : undefined;
    },
  });
  // Once, right after start: scans the previous process left running fail, queued ones start.
  ctx.due.register({ name: KIND, nextDueAt: bootNextDue, runDue: recoverScans });
  ctx.bus.on('share:changed', ({ appid }) => cancelLostRecipients(ctx, appid));
}

/** Port scans (issue 13, §3.2): TCP connect scans of verified hosts, one running per user. */
export const portScansFeature: Feature = {
  name: 'port-scans',
  init,
  routes: portScanRoutes,
  stop: stopScans,
};

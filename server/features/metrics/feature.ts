import type { AppContext } from '../../context';
import { registerHistoryKind } from '../history/service';
import type { Feature, FeatureHooks } from '../index';
import { registerSourceKind, type SourceSummary } from '../sources/registry';
import { alertNextDue, runDueAlerts } from './alerts';
import { metricRoutes } from './routes';
import { KIND, pauseLostRecipients } from './service';
import { findSource, pruneMetrics, type SourceRow, sourcesOfChannels } from './store';

function summary(row: SourceRow): SourceSummary {
  return {
    kind: KIND,
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

function init(ctx: AppContext, hooks: FeatureHooks): void {
  ctx.due.register({ name: 'metric-alert', nextDueAt: alertNextDue, runDue: runDueAlerts });
  registerHistoryKind(ctx, { kind: KIND, upStatuses: ['ok'], downStatuses: ['firing'] });
  registerSourceKind(ctx, {
    kind: KIND,
    listForChannels: (c, ids) => sourcesOfChannels(c.db, ids).map(summary),
    find: (c, id) => {
      const row = findSource(c.db, id);
      return row ? summary(row) : undefined;
    },
  });
  // Raw points 24 h, 1 m rollups 7 days, 1 h 90 days, 1 d 2 years (store.ts KEEP_MS).
  hooks.retention.register('metrics', (c) => c.db.transaction(() => pruneMetrics(c.db, c.clock.now())));
  ctx.bus.on('share:changed', ({ appid }) => pauseLostRecipients(ctx, appid));
}

/** Metrics with alerts (issue 17): metric sources, their public ingest, series, rollups and alerts. */
export const metricsFeature: Feature = { name: 'metrics', init, routes: metricRoutes };

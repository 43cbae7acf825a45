import type { AppContext } from '../../context';
import { registerHistoryKind } from '../history/service';
import type { Feature, FeatureHooks } from '../index';
import { registerSourceKind, type SourceSummary } from '../sources/registry';
import { webScriptRoutes } from './routes';
import { KIND, pauseLostRecipients } from './service';
import { findScript, pruneIssueHours, pruneStats, type ScriptRow, scriptsOfChannels } from './store';

function summary(row: ScriptRow): SourceSummary {
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
  registerHistoryKind(ctx, { kind: KIND, upStatuses: ['ok'], downStatuses: ['issues'] });
  registerSourceKind(ctx, {
    kind: KIND,
    listForChannels: (c, ids) => scriptsOfChannels(c.db, ids).map(summary),
    find: (c, id) => {
      const row = findScript(c.db, id);
      return row ? summary(row) : undefined;
    },
  });
  // Counters: 1 m buckets 7 days, 1 h 90 days, 1 d 2 years (store.ts STATS_KEEP_MS); issue hours 2 days.
  hooks.retention.register('web-scripts', (c) =>
    c.db.transaction(() => pruneStats(c.db, c.clock.now()) + pruneIssueHours(c.db, c.clock.now())),
  );
  ctx.bus.on('share:changed', ({ appid }) => pauseLostRecipients(ctx, appid));
}

/** Web scripts (issue 18): browser error tracking with a public snippet, issues, source maps and analysis. */
export const webScriptsFeature: Feature = { name: 'web-scripts', init, routes: webScriptRoutes };

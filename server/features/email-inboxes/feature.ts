import type { AppContext } from '../../context';
import type { Feature, FeatureHooks } from '../index';
import { registerSourceKind, type SourceSummary } from '../sources/registry';
import { inboxRoutes } from './routes';
import { KIND, pauseLostRecipients, pruneInboxEvents } from './service';
import { findInbox, type InboxRow, inboxesOfChannels } from './store';

function summary(row: InboxRow): SourceSummary {
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
  registerSourceKind(ctx, {
    kind: KIND,
    listForChannels: (c, ids) => inboxesOfChannels(c.db, ids).map(summary),
    find: (c, id) => {
      const row = findInbox(c.db, id);
      return row ? summary(row) : undefined;
    },
  });
  hooks.retention.register('email-inbox-events', pruneInboxEvents);
  ctx.bus.on('share:changed', ({ appid }) => pauseLostRecipients(ctx, appid));
}

/**
 * Email inboxes (issue 18, wire rules §10): inbox records, their rules and events. The SMTP listener
 * (listener.ts) is started and stopped by the server itself (server/index.ts) when BELFRY_SMTP_LISTEN is set.
 */
export const emailInboxesFeature: Feature = { name: 'email-inboxes', init, routes: inboxRoutes };

import type { Feature } from '../index';
import { statusPageRoutes } from './routes';
import { onSourceEvent, pruneUnconfirmed } from './subscriptions';

/**
 * Public status pages (issue 14; docs/api.md, "Status pages"): the owner's records, the public summary
 * and HTML page, mail subscriptions, and incident mails from the sources' live frames.
 */
export const statusPagesFeature: Feature = {
  name: 'status-pages',
  init: (ctx, hooks) => {
    hooks.retention.register('status-subscribers', pruneUnconfirmed);
    ctx.bus.on('source:event', (frame) => {
      try {
        onSourceEvent(ctx, frame);
      } catch (err) {
        ctx.log.error('status page incident mail failed', { err });
      }
    });
  },
  routes: statusPageRoutes,
};

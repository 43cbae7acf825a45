import type { Feature } from '../index';
import { historyRoutes } from './routes';
import { trimHistory } from './service';

/**
 * Status history of sources (docs/api.md, "Source history"): the shared module that heartbeats (and later
 * monitors) write through service.ts, the `/monitor-history` routes, and the retention of the log.
 */
export const historyFeature: Feature = {
  name: 'history',
  init: (_ctx, hooks) => hooks.retention.register('history', trimHistory),
  routes: historyRoutes,
};

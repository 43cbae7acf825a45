import { integrationRoutes } from '../../integrations/routes';
import { channelKeyRoutes } from '../channel-keys/routes';
import type { Feature } from '../index';
import { messageRetention } from '../messages/retention';
import { messageRoutes } from '../messages/routes';
import { flushSearchIndex, SearchIndexer, searchIndexMergeJob } from '../messages/search-index';
import { shareTokenResolver } from '../shares/auth';
import { shareRoutes } from '../shares/routes';
import { webhookRoutes } from '../webhooks/routes';
import { channelRoutes } from './routes';
import { sealStoredDeliverySecrets } from './service';

/**
 * The core notification path (issue 4): channels, channel keys, messages, alert receivers, public
 * webhooks and sharing. Live delivery (server/realtime) listens to the bus events these publish.
 */
export const channelFeatures: readonly Feature[] = [
  { name: 'channels', init: (ctx) => void sealStoredDeliverySecrets(ctx), routes: channelRoutes },
  { name: 'channel-keys', routes: channelKeyRoutes },
  {
    name: 'messages',
    init: (ctx, hooks) => {
      hooks.retention.register('messages', messageRetention());
      new SearchIndexer().attach(ctx);
    },
    routes: (ctx) => [messageRoutes(ctx), integrationRoutes(ctx)],
    jobs: () => [searchIndexMergeJob()],
    // What is still waiting goes into the index before the final snapshot (a restart would catch up).
    stop: (ctx) => void flushSearchIndex(ctx),
  },
  { name: 'webhooks', routes: webhookRoutes },
  {
    name: 'shares',
    init: (ctx) => {
      ctx.auth.tokens.set('S', shareTokenResolver(ctx));
    },
    routes: shareRoutes,
  },
];

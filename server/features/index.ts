import type { Server } from 'node:http';
import type { AppContext } from '../context';
import { deliveryFeature } from '../delivery/outbox/feature';
import type { RouteTable } from '../http/routes';
import type { RetentionRegistry } from '../jobs/retention';
import type { Job } from '../jobs/scheduler';
import { chromiumFeature } from '../lib/chromium';
import { realtimeFeature } from '../realtime/index';
import { apiTokenResolver } from './api-tokens/auth';
import { assistantFeature } from './assistant/feature';
import { accountsFeature } from './auth/feature';
import { channelKeyResolver } from './channel-keys/auth';
import { channelFeatures } from './channels/feature';
import { deviceRoutes } from './devices/routes';
import { deviceTokenResolver } from './devices/service';
import { emailInboxesFeature } from './email-inboxes/feature';
import { heartbeatsFeature } from './heartbeats/feature';
import { historyFeature } from './history/feature';
import { maintenanceFeature } from './maintenance/feature';
import { metricsFeature } from './metrics/feature';
import { monitorsFeature } from './monitors/feature';
import { pairingRoutes } from './pairing/routes';
import { portScansFeature } from './port-scans/feature';
import { powerFeature } from './power/feature';
import { questionsFeature } from './questions/feature';
import { routerFeature } from './router/feature';
import { statusPagesFeature } from './status-pages/feature';
import { systemRoutes } from './system/routes';
import { tunnelFeature } from './tunnel/feature';
import { basicResolver } from './users/service';
import { verifiedHostsFeature } from './verified-hosts/feature';
import { webScriptsFeature } from './web-scripts/feature';

/** What a family contributes. Everything is optional; the order of FEATURES is the mount order. */
export interface Feature {
  name: string;
  /** Register token resolvers, bus listeners and retention tasks. Runs before routes are mounted. */
  init?(ctx: AppContext, hooks: FeatureHooks): void;
  routes?(ctx: AppContext): RouteTable | RouteTable[];
  jobs?(ctx: AppContext): Job[];
  /** Attach to the HTTP server (WebSocket upgrades). */
  attach?(ctx: AppContext, server: Server): void;
  /** Close sockets and streams; runs after jobs stop and before the store is flushed. */
  stop?(ctx: AppContext): void | Promise<void>;
}

export interface FeatureHooks {
  retention: RetentionRegistry;
}

export const FEATURES: readonly Feature[] = [
  { name: 'system', routes: systemRoutes },
  {
    name: 'auth-core',
    init: (ctx) => {
      ctx.auth.tokens.set('C', deviceTokenResolver(ctx));
      ctx.auth.tokens.set('M', apiTokenResolver(ctx));
      ctx.auth.tokens.set('A', channelKeyResolver(ctx));
      ctx.auth.basic = basicResolver(ctx);
    },
  },
  { name: 'devices', routes: deviceRoutes },
  ...channelFeatures,
  accountsFeature,
  historyFeature,
  heartbeatsFeature,
  monitorsFeature,
  statusPagesFeature,
  maintenanceFeature,
  deliveryFeature,
  questionsFeature,
  verifiedHostsFeature,
  portScansFeature,
  metricsFeature,
  routerFeature,
  webScriptsFeature,
  emailInboxesFeature,
  assistantFeature,
  realtimeFeature(),
  { name: 'pairing', routes: pairingRoutes },
  powerFeature,
  tunnelFeature,
  // The Chromium that content monitors (render: browser) and browser workflows share: launched on first
  // use, closed after a minute idle and at stop.
  chromiumFeature,
];

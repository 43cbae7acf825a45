import type { Feature } from '../../features/index';
import { closeEmailTransport } from '../adapters/email';
import { closeDeliveryAgents } from '../http';
import { deliveryRoutes } from './routes';
import {
  deliveriesIdle,
  deliveryNextDue,
  pruneDeliveryLog,
  recoverOutbox,
  runDueDeliveries,
  stopOutbox,
} from './service';

/** The delivery outbox (issue 15): DueSource 'delivery', start-up recovery, the log and /m/read. */
export const deliveryFeature: Feature = {
  name: 'delivery',
  init: (ctx, hooks) => {
    recoverOutbox(ctx);
    hooks.retention.register('deliveries', pruneDeliveryLog);
    ctx.due.register({
      name: 'delivery',
      nextDueAt: deliveryNextDue,
      runDue: runDueDeliveries,
      idle: deliveriesIdle,
    });
  },
  routes: deliveryRoutes,
  stop: async (ctx) => {
    await stopOutbox(ctx);
    closeDeliveryAgents(ctx);
    closeEmailTransport(ctx);
  },
};

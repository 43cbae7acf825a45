import type { Feature } from '../index';
import { tunnelRoutes } from './routes';
import { tunnelService } from './service';

/**
 * The tunnel (issue 19; docs/public-access.md): its record and routes, the restart and check schedule
 * (a due source), a restart after the host slept, and its stop with the server.
 */
export const tunnelFeature: Feature = {
  name: 'tunnel',
  init: (ctx) => {
    const s = tunnelService(ctx);
    ctx.due.register(s.dueSource());
    ctx.bus.on('clock:gap', () => s.woke());
    s.resume();
  },
  routes: tunnelRoutes,
  stop: (ctx) => tunnelService(ctx).stop(),
};

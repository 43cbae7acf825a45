import type { AppContext } from '../../context';
import type { Feature } from '../index';
import { maintenanceNextDue, runDueMaintenance } from './coverage';
import { maintenanceRoutes } from './routes';

function init(ctx: AppContext): void {
  // Wakes at each start and end of an enabled window (and once at server start), never by polling.
  ctx.due.register({ name: 'maintenance', nextDueAt: maintenanceNextDue, runDue: runDueMaintenance });
}

/** Maintenance windows (issue 14): schedules, coverage of channels and sources, silent messages. */
export const maintenanceFeature: Feature = { name: 'maintenance', init, routes: maintenanceRoutes };

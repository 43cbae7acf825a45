import type { AppContext } from '../context';
import { sendMessages } from '../features/messages/service';
import { APP, principalOf } from '../http/auth';
import { RouteTable } from '../http/routes';
import { ALERT_RECEIVERS } from './registry';

/** `POST /integrations/{receiver}`: channel keys as for POST /message; answers {created, ids}. */
export function integrationRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'integrations');
  for (const receiver of ALERT_RECEIVERS) {
    t.post(`/integrations/${receiver.name}`, { ...APP, access: 'write' }, (req) => {
      const p = principalOf(req);
      const messages = receiver.toMessages(req.body ?? {});
      const sent = sendMessages(ctx, p.channelId!, '', messages);
      return { created: sent.length, ids: sent.map((m) => m.id) };
    });
  }
  return t;
}

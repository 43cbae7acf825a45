import type { AppContext } from '../../context';
import type { Feature, FeatureHooks } from '../index';
import { registerSourceKind, type SourceSummary } from '../sources/registry';
import { routerRoutes } from './routes';
import { dropLostChannel, pruneRouterEvents, ROUTER_KIND, ROUTER_SENDER, RULE_KIND } from './service';
import {
  findRouter,
  findRule,
  lastEventAt,
  type RouterRow,
  type RuleRow,
  routersWithDefaultIn,
  rulesOfChannels,
} from './store';

/** A rule in a channel's event sources (§1.6): `active` while enabled, else `paused`. */
function ruleSummary(ctx: AppContext, r: RuleRow): SourceSummary {
  return {
    kind: RULE_KIND,
    id: r.id,
    name: r.name,
    appid: r.channel_id,
    status: r.enabled === 1 ? 'active' : 'paused',
    paused: r.enabled !== 1,
    lastCheckAt: lastEventAt(ctx.db, r.user_id, r.id),
    statusSince: null,
    userId: r.user_id,
  };
}

/** The router itself, in the event sources of its default channel (messages when no rule matched). */
function routerSummary(ctx: AppContext, r: RouterRow): SourceSummary | undefined {
  if (r.default_channel_id === null) return undefined;
  return {
    kind: ROUTER_KIND,
    id: r.id,
    name: ROUTER_SENDER,
    appid: r.default_channel_id,
    status: r.enabled === 1 ? 'active' : 'paused',
    paused: r.enabled !== 1,
    lastCheckAt: lastEventAt(ctx.db, r.user_id, null, r.default_channel_id),
    statusSince: null,
    userId: r.user_id,
  };
}

function init(ctx: AppContext, hooks: FeatureHooks): void {
  registerSourceKind(ctx, {
    kind: RULE_KIND,
    listForChannels: (c, ids) => rulesOfChannels(c.db, ids).map((r) => ruleSummary(c, r)),
    find: (c, id) => {
      const r = findRule(c.db, id);
      return r ? ruleSummary(c, r) : undefined;
    },
  });
  registerSourceKind(ctx, {
    kind: ROUTER_KIND,
    listForChannels: (c, ids) =>
      routersWithDefaultIn(c.db, ids).flatMap((r) => {
        const s = routerSummary(c, r);
        return s ? [s] : [];
      }),
    find: (c, id) => {
      const r = findRouter(c.db, id);
      return r ? routerSummary(c, r) : undefined;
    },
  });
  hooks.retention.register('router-events', pruneRouterEvents);
  ctx.bus.on('share:changed', ({ appid }) => dropLostChannel(ctx, appid));
}

/** The webhook router (issue 17, wire rules §11): a per-user singleton, its rules, events and messages. */
export const routerFeature: Feature = { name: 'router', init, routes: routerRoutes };

import type { AppContext } from '../context';
import type { Feature } from '../features/index';
import { principalOf, TOK_BASIC } from '../http/auth';
import { errors } from '../http/errors';
import { RouteTable } from '../http/routes';
import { type HubOptions, LiveHub } from './hub';
import { openStream, SSE_AUTH } from './sse';
import { attachWebSockets } from './ws';

const hubs = new WeakMap<AppContext, LiveHub>();

/** The live hub of a running server (tests drive its ping and keepalive rounds; benchmarks read counters). */
export function liveHubOf(ctx: AppContext): LiveHub {
  const hub = hubs.get(ctx);
  if (!hub) throw new Error('the realtime feature is not part of this server');
  return hub;
}

/**
 * Live delivery (spec "Live streams", "Events"; contract "Compatibility"): `/ws` and a WebSocket upgrade
 * on `/stream` carry messages, an ordinary `GET /stream` is the SSE stream of change signals.
 */
export function realtimeFeature(options: Partial<HubOptions> = {}): Feature {
  return {
    name: 'realtime',
    init(ctx) {
      const hub = new LiveHub(ctx, options);
      hubs.set(ctx, hub);
      hub.subscribe();
    },
    routes(ctx) {
      const hub = liveHubOf(ctx);
      const t = new RouteTable(ctx, 'realtime');
      t.get('/stream', SSE_AUTH, (req, res) => openStream(ctx, hub, req, res));
      // Without an Upgrade header /ws is not a resource; the upgrade itself is handled in ws.ts.
      t.get('/ws', null, () => {
        throw errors.badRequest('GET /ws is a WebSocket endpoint: send a WebSocket upgrade request');
      });
      // Spec "Devices": ids of the caller's devices with an open WebSocket (contract: an array of ids).
      t.get('/client/online', TOK_BASIC, (req) => hub.onlineDevices(principalOf(req).userId));
      return t;
    },
    attach(ctx, server) {
      const hub = liveHubOf(ctx);
      attachWebSockets(ctx, server, hub);
      hub.startTimers();
    },
    stop: (ctx) => liveHubOf(ctx).stop(),
  };
}

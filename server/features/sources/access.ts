import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import {
  channelInScope,
  inScope,
  isRestricted,
  receivedChannel,
  type VisibleChannel,
} from '../channels/access';

/**
 * Which channels a source (heartbeat, monitor, later metric source, web script, inbox) may write to, and
 * which sources a principal sees (docs/api.md, "Heartbeats" and "Monitors"): shared by every family.
 */

/** Own, or shared with `send` (§0.3). */
export function maySend(v: VisibleChannel): boolean {
  return v.owned || v.share?.permission === 'send';
}

/** A channel the caller may attach a source to: own, or shared with `send` and accepted; never the system channel. */
export function writableChannel(ctx: AppContext, p: Principal, appid: number) {
  const v = receivedChannel(ctx, p.userId, appid);
  if (!v || !inScope(p, v.row) || !maySend(v)) throw errors.badRequest('appid: no such channel');
  if (v.row.internal === 1) throw errors.systemChannel();
  return v.row;
}

/** The caller's sources filtered by `?appid=` and, for a scoped API token, by its channels. */
export function sourcesInView<R extends { channel_id: number }>(
  ctx: AppContext,
  p: Principal,
  rows: R[],
  appid?: number,
): R[] {
  let out = appid === undefined ? rows : rows.filter((r) => r.channel_id === appid);
  if (isRestricted(p)) {
    const visible = new Map<number, boolean>();
    out = out.filter((r) => {
      let ok = visible.get(r.channel_id);
      if (ok === undefined) {
        ok = channelInScope(ctx, p, r.channel_id);
        visible.set(r.channel_id, ok);
      }
      return ok;
    });
  }
  return out;
}

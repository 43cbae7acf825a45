import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { rfc3339OrNull } from '../../lib/clock';
import { type ChannelHealth, channelHealth } from '../sources/registry';
import { channelInScope, isRestricted, type VisibleChannel } from './access';
import { maskDeliveryConfig, openDeliveryConfig } from './delivery-config';
import type { ChannelRow } from './store';

export const IMAGE_ROUTE = '/image/application';

export function imageUrl(ctx: AppContext, row: ChannelRow): string {
  return row.image ? `${ctx.publicUrl()}${IMAGE_ROUTE}/${row.image}` : '';
}

/**
 * Who sees a channel's re-delivery settings (masked): the owner through a device, Basic or a write API
 * token. Read-only API tokens, channel keys and share recipients get no `deliveryConfig` at all.
 */
function seesDeliveryConfig(v: VisibleChannel, viewer: Principal | undefined): boolean {
  if (!viewer || v.share || !v.owned) return false;
  if (viewer.kind === 'device' || viewer.kind === 'basic') return true;
  return viewer.kind === 'api' && viewer.access === 'write';
}

/**
 * `parentId` is shown when the caller can see the parent: always to the owner (a scoped API token only
 * when the parent is in its scope too), to a share recipient only when the parent is shared with them.
 */
function parentShown(
  ctx: AppContext,
  v: VisibleChannel,
  viewer: Principal | undefined,
  visibleIds: ReadonlySet<number> | undefined,
): boolean {
  const parentId = v.row.parent_id;
  if (parentId === null) return false;
  if (!v.owned) return visibleIds?.has(parentId) ?? false;
  if (!viewer || !isRestricted(viewer)) return true;
  if (visibleIds) return visibleIds.has(parentId);
  return channelInScope(ctx, viewer, parentId);
}

/**
 * The spec's Channel. `token`: the full primary key only when just issued, else its masked hint; on a
 * shared channel the recipient's S token hint (send) or "" (view). `parentId` is absent on a root, and
 * when the caller cannot see the parent (parentShown). The health fields (hbTotal .. hbStatus, and
 * whatever other families contribute) come from the channel health providers of the event-sources
 * registry: a list passes `health` from one `channelHealth()` call for all its channels.
 */
export function presentChannel(
  ctx: AppContext,
  v: VisibleChannel,
  opts: {
    fullToken?: string;
    visibleIds?: ReadonlySet<number>;
    viewer?: Principal;
    health?: ReadonlyMap<number, ChannelHealth>;
  } = {},
) {
  const { row, share } = v;
  const token = share ? (share.permission === 'send' ? share.tokenHint : '') : (row.key_hint ?? '');
  return {
    id: row.id,
    token: opts.fullToken ?? token,
    name: row.name,
    description: row.description,
    internal: row.internal === 1,
    image: imageUrl(ctx, row),
    defaultPriority: row.default_priority,
    lastUsed: rfc3339OrNull(row.last_used),
    sortKey: row.sort_key,
    ...(parentShown(ctx, v, opts.viewer, opts.visibleIds) ? { parentId: row.parent_id } : {}),
    tags: JSON.parse(row.tags) as string[],
    ...(seesDeliveryConfig(v, opts.viewer)
      ? { deliveryConfig: maskDeliveryConfig(openDeliveryConfig(ctx.secret, row.delivery_config)) }
      : {}),
    ...(share ? { shared: true, sharePermission: share.permission, canShare: share.canShare } : {}),
    ...(opts.health ?? channelHealth(ctx, [row.id])).get(row.id),
  };
}

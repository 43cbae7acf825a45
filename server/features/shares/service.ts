import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { issueToken, tokenDigest } from '../../lib/tokens';
import {
  channelInScope,
  isRestricted,
  listVisible,
  requireVisible,
  type VisibleChannel,
} from '../channels/access';
import { findChannel } from '../channels/store';
import { queueMail } from '../mail/service';
import { postSystemMessage } from '../messages/service';
import { assertWithinPlan } from '../plans/caps';
import { findUserByEmail, findUserById } from '../users/store';
import {
  acceptedShareOf,
  acceptShare,
  activeShareFor,
  declineShare,
  deleteShare,
  findShare,
  findShareByInvite,
  incomingShares,
  insertShare,
  recipientsOf,
  rotateShareToken,
  type ShareRow,
  sharesOfChannel,
  updateShare,
} from './store';

type Permission = 'view' | 'send';
const RANK: Record<Permission, number> = { view: 0, send: 1 };

function emailOf(ctx: AppContext, userId: number): string {
  return findUserById(ctx.db, userId)?.email ?? '';
}

/** Both sides hear about every change: owner, granter and the recipient (when known). */
function announce(
  ctx: AppContext,
  row: Pick<ShareRow, 'channel_id' | 'owner_id' | 'granted_by' | 'recipient_id'>,
  extra?: number,
) {
  const ids = new Set([row.owner_id, row.granted_by]);
  if (row.recipient_id !== null) ids.add(row.recipient_id);
  if (extra !== undefined) ids.add(extra);
  ctx.bus.emit('share:changed', { appid: row.channel_id, userIds: [...ids] });
}

/** The owner, or an accepted recipient with canShare (who grants at most their own permission). */
function requireGranter(ctx: AppContext, p: Principal, channelId: number): VisibleChannel {
  const v = requireVisible(ctx, p, channelId);
  if (v.row.internal === 1) throw errors.systemChannel();
  if (!v.owned && !v.share?.canShare) throw errors.ownerOnly('share it');
  return v;
}

function checkGrant(v: VisibleChannel, permission: Permission): void {
  if (v.share && RANK[permission] > RANK[v.share.permission])
    throw errors.forbidden('you can grant at most your own permission');
}

export function createShare(
  ctx: AppContext,
  p: Principal,
  channelId: number,
  input: { email: string; permission: Permission; canShare?: boolean },
): ShareRow {
  const v = requireGranter(ctx, p, channelId);
  checkGrant(v, input.permission);
  const email = input.email.trim().toLowerCase();
  const owner = findUserById(ctx.db, v.row.user_id)!;
  if (email === owner.email.toLowerCase() || email === emailOf(ctx, p.userId).toLowerCase())
    throw errors.badRequest('email: cannot share a channel with yourself or its owner');
  if (activeShareFor(ctx.db, channelId, email)) throw errors.conflict('already shared with this address');
  assertWithinPlan(ctx, p.userId, 'shares');
  const invite = randomBytes(24).toString('base64url');
  const id = ctx.db.transaction(() =>
    insertShare(ctx.db, {
      channelId,
      grantedBy: p.userId,
      email,
      permission: input.permission,
      canShare: input.canShare ?? false,
      inviteDigest: tokenDigest(invite),
      now: ctx.clock.now(),
    }),
  );
  const row = findShare(ctx.db, id)!;
  const link = `${ctx.publicUrl()}/#/share/join?token=${invite}`;
  const from = emailOf(ctx, p.userId);
  const existing = findUserByEmail(ctx.db, email);
  if (existing) {
    postSystemMessage(
      ctx,
      existing.id,
      'A channel was shared with you',
      `${from} shared the channel "${v.row.name}" with you (${input.permission}). Accept it under Shares, or open ${link}`,
    );
  }
  // Mail never decides the answer or its timing; the share exists either way (incoming shares).
  queueMail(ctx, {
    to: email,
    subject: `${from} shared the channel "${v.row.name}" with you`,
    text: `${from} invited you to the Belfry channel "${v.row.name}" with ${input.permission} permission.\n\nAccept the invitation: ${link}\n\nIf you did not expect this, ignore this email.`,
  });
  announce(ctx, row, existing?.id);
  return row;
}

export function listShares(ctx: AppContext, p: Principal, channelId: number): ShareRow[] {
  const v = requireGranter(ctx, p, channelId);
  return sharesOfChannel(ctx.db, channelId, v.owned ? undefined : p.userId);
}

/** A share the caller granted, or of a channel the caller owns; anything else is 404. */
function managedShare(ctx: AppContext, p: Principal, id: number): ShareRow {
  const row = findShare(ctx.db, id);
  if (!row || (row.granted_by !== p.userId && row.owner_id !== p.userId)) throw errors.notFound('share');
  requireVisible(ctx, p, row.channel_id); // an API token's scope applies
  return row;
}

export function changeShare(
  ctx: AppContext,
  p: Principal,
  id: number,
  patch: { permission?: Permission; canShare?: boolean },
): ShareRow {
  const row = managedShare(ctx, p, id);
  if (patch.permission !== undefined && row.owner_id !== p.userId)
    checkGrant(requireVisible(ctx, p, row.channel_id), patch.permission);
  ctx.db.transaction(() => updateShare(ctx.db, id, patch));
  if (row.status === 'accepted') ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: id });
  announce(ctx, row);
  return findShare(ctx.db, id)!;
}

/**
 * Every share that rests on `userId`'s access to a channel: the shares they granted, the shares their
 * recipients granted in turn, and so on. When that access ends (revoked, left, declined) they all end.
 */
function dependentShares(ctx: AppContext, channelId: number, userId: number): ShareRow[] {
  const out: ShareRow[] = [];
  const seen = new Set([userId]);
  const granters = [userId];
  while (granters.length > 0) {
    for (const row of sharesOfChannel(ctx.db, channelId, granters.shift()!)) {
      out.push(row);
      // Only an accepted share gave its recipient access (and so the right to reshare).
      if (row.status === 'accepted' && row.recipient_id !== null && !seen.has(row.recipient_id)) {
        seen.add(row.recipient_id);
        granters.push(row.recipient_id);
      }
    }
  }
  return out;
}

/**
 * Ends a share and, when it was accepted, every share resting on its recipient's access.
 * `keep` leaves the share itself in place (a decline or leave updates it instead). Runs inside the
 * caller's transaction; the returned function tells sockets and both sides after commit.
 */
function endShare(ctx: AppContext, row: ShareRow, keep = false): () => void {
  const gone =
    row.status === 'accepted' && row.recipient_id !== null
      ? dependentShares(ctx, row.channel_id, row.recipient_id)
      : [];
  if (!keep) deleteShare(ctx.db, row.id);
  for (const d of gone) deleteShare(ctx.db, d.id);
  return () => {
    for (const r of keep ? gone : [row, ...gone]) {
      ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: r.id });
      announce(ctx, r);
    }
  };
}

export function revokeShare(ctx: AppContext, p: Principal, id: number): void {
  const row = managedShare(ctx, p, id);
  ctx.db.transaction(() => endShare(ctx, row))();
}

/** A restricted API token acts only on shares of channels inside its scope (others are 404). */
function requireShareInScope(ctx: AppContext, p: Principal, row: ShareRow): ShareRow {
  if (!channelInScope(ctx, p, row.channel_id)) throw errors.notFound('share');
  return row;
}

export function incoming(ctx: AppContext, p: Principal): ShareRow[] {
  return incomingShares(ctx.db, p.userId, emailOf(ctx, p.userId)).filter((r) =>
    channelInScope(ctx, p, r.channel_id),
  );
}

export function recipients(ctx: AppContext, p: Principal): string[] {
  const inScopeIds = isRestricted(p) ? listVisible(ctx, p).map((v) => v.row.id) : undefined;
  return recipientsOf(ctx.db, p.userId, inScopeIds);
}

/** A share addressed to the caller (bound to them, or unbound and sent to their address), or 404. */
function addressedShare(ctx: AppContext, p: Principal, id: number): ShareRow {
  const row = findShare(ctx.db, id);
  const me = emailOf(ctx, p.userId).toLowerCase();
  if (!row) throw errors.notFound('share');
  const mine = row.recipient_id === null ? row.email.toLowerCase() === me : row.recipient_id === p.userId;
  if (!mine) throw errors.notFound('share');
  return requireShareInScope(ctx, p, row);
}

export interface Accepted {
  channel: VisibleChannel;
  token: string;
}

function accept(ctx: AppContext, p: Principal, row: ShareRow): Accepted {
  if (row.owner_id === p.userId) throw errors.badRequest('you own this channel');
  const other = acceptedShareOf(ctx.db, p.userId, row.channel_id);
  if (other && other.id !== row.id) throw errors.conflict('you already have access to this channel');
  const { token, digest, hint } = issueToken('S');
  ctx.db.transaction(() => acceptShare(ctx.db, row.id, p.userId, digest, hint));
  if (row.status === 'accepted') ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: row.id });
  announce(ctx, { ...row, recipient_id: p.userId });
  const channelRow = findChannel(ctx.db, row.channel_id)!;
  const fresh = findShare(ctx.db, row.id)!;
  return {
    channel: {
      row: channelRow,
      owned: false,
      share: {
        id: fresh.id,
        permission: fresh.permission,
        canShare: fresh.can_share === 1,
        tokenHint: fresh.token_hint,
      },
    },
    token,
  };
}

export function acceptById(ctx: AppContext, p: Principal, id: number): Accepted {
  return accept(ctx, p, addressedShare(ctx, p, id));
}

export function declineById(ctx: AppContext, p: Principal, id: number): ShareRow {
  withdraw(ctx, p, addressedShare(ctx, p, id));
  return findShare(ctx.db, id)!;
}

/**
 * The recipient declines a share (pending) or leaves it (accepted): the share stays, declined and bound
 * to them, and every share resting on their access ends with it.
 */
function withdraw(ctx: AppContext, p: Principal, row: ShareRow): void {
  const after = ctx.db.transaction(() => {
    declineShare(ctx.db, row.id, p.userId);
    return endShare(ctx, row, true);
  });
  if (row.status === 'accepted') ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: row.id });
  announce(ctx, { ...row, recipient_id: p.userId });
  after();
}

/** The invitation link is the invitation: whoever holds it joins (docs/api.md "Sharing"). */
export function joinByToken(ctx: AppContext, p: Principal, invite: string): Accepted {
  const row = findShareByInvite(ctx.db, tokenDigest(invite));
  if (row?.status !== 'pending') throw errors.notFound('invitation');
  if (!channelInScope(ctx, p, row.channel_id)) throw errors.notFound('invitation');
  return accept(ctx, p, row);
}

function myAcceptedShare(ctx: AppContext, p: Principal, appid: number): ShareRow {
  const row = acceptedShareOf(ctx.db, p.userId, appid);
  if (!row) throw errors.notFound('share');
  return requireShareInScope(ctx, p, row);
}

export function leave(ctx: AppContext, p: Principal, appid: number): void {
  withdraw(ctx, p, myAcceptedShare(ctx, p, appid));
}

export function rotate(ctx: AppContext, p: Principal, appid: number): { appid: number; token: string } {
  const row = myAcceptedShare(ctx, p, appid);
  const { token, digest, hint } = issueToken('S');
  ctx.db.transaction(() => rotateShareToken(ctx.db, row.id, digest, hint));
  ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: row.id });
  announce(ctx, row);
  return { appid, token };
}

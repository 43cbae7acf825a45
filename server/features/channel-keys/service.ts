import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { issueToken } from '../../lib/tokens';
import { requireOwned } from '../channels/access';
import { writeWithinPlan } from '../plans/caps';
import {
  deleteKey,
  findKey,
  insertKey,
  type KeyPatch,
  type KeyRow,
  listKeys,
  revokeKey,
  rotateKey,
  updateKey,
} from './store';

/** The key every channel is created with (Channel.token); shown once. Runs inside the caller's transaction. */
export function createPrimaryKey(ctx: AppContext, channelId: number): string {
  const { token, digest, hint } = issueToken('A');
  insertKey(ctx.db, {
    channelId,
    name: '',
    note: '',
    canRead: false,
    canWrite: true,
    primary: true,
    digest,
    hint,
    expiresAt: 0,
    now: ctx.clock.now(),
  });
  return token;
}

export interface KeyInput {
  name?: string;
  note?: string;
  canRead?: boolean;
  canWrite?: boolean;
  expiresAt?: number;
}

function checkExpiry(ctx: AppContext, expiresAt: number | undefined): void {
  if (expiresAt !== undefined && expiresAt !== 0 && expiresAt <= ctx.clock.now())
    throw errors.badRequest('expiresAt: must be 0 (no expiry) or in the future');
}

export function listChannelKeys(ctx: AppContext, p: Principal, channelId: number): KeyRow[] {
  requireOwned(ctx, p, channelId, { what: 'manage its keys' });
  return listKeys(ctx.db, channelId);
}

export function issueKey(
  ctx: AppContext,
  p: Principal,
  channelId: number,
  input: KeyInput,
): { row: KeyRow; token: string } {
  requireOwned(ctx, p, channelId, { write: true, what: 'manage its keys' });
  const canRead = input.canRead ?? false;
  const canWrite = input.canWrite ?? true;
  if (!canRead && !canWrite) throw errors.badRequest('a key needs canRead or canWrite');
  checkExpiry(ctx, input.expiresAt);
  const { token, digest, hint } = issueToken('A');
  const id = writeWithinPlan(ctx, p.userId, 'channelKeys', () =>
    insertKey(ctx.db, {
      channelId,
      name: input.name ?? '',
      note: input.note ?? '',
      canRead,
      canWrite,
      primary: false,
      digest,
      hint,
      expiresAt: input.expiresAt ?? 0,
      now: ctx.clock.now(),
    }),
  );
  return { row: findKey(ctx.db, id)!, token };
}

/** A key of one of the caller's own channels (in scope), or 404. */
function ownKey(ctx: AppContext, p: Principal, id: number): KeyRow {
  const row = findKey(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('key');
  requireOwned(ctx, p, row.channel_id, { write: true, what: 'manage its keys' });
  return row;
}

export function changeKey(ctx: AppContext, p: Principal, id: number, patch: KeyPatch): KeyRow {
  const row = ownKey(ctx, p, id);
  const canRead = patch.canRead ?? row.can_read === 1;
  const canWrite = patch.canWrite ?? row.can_write === 1;
  if (!canRead && !canWrite) throw errors.badRequest('a key needs canRead or canWrite');
  checkExpiry(ctx, patch.expiresAt);
  writeWithinPlan(ctx, row.user_id, null, () => updateKey(ctx.db, id, patch));
  // Narrowed permissions must reach open sockets too.
  if (patch.canRead === false) ctx.bus.emit('token:invalidated', { kind: 'app', tokenId: id });
  return findKey(ctx.db, id)!;
}

/** First call revokes, a repeated call deletes; the primary key is 409. */
export function removeKey(ctx: AppContext, p: Principal, id: number): KeyRow | null {
  const row = ownKey(ctx, p, id);
  if (row.is_primary === 1)
    throw errors.conflict("the channel's primary key cannot be revoked; rotate it instead");
  let result: KeyRow | null = null;
  ctx.db.transaction(() => {
    if (row.revoked_at === null) revokeKey(ctx.db, id, ctx.clock.now());
    else deleteKey(ctx.db, id);
  });
  if (row.revoked_at === null) result = findKey(ctx.db, id)!;
  ctx.bus.emit('token:invalidated', { kind: 'app', tokenId: id });
  return result;
}

export function rotateChannelKey(ctx: AppContext, p: Principal, id: number): { row: KeyRow; token: string } {
  const row = ownKey(ctx, p, id);
  if (row.revoked_at !== null) throw errors.conflict('key is revoked');
  const { token, digest, hint } = issueToken('A');
  ctx.db.transaction(() => rotateKey(ctx.db, id, digest, hint));
  ctx.bus.emit('token:invalidated', { kind: 'app', tokenId: id });
  return { row: findKey(ctx.db, id)!, token };
}

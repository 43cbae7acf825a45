import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { issueToken } from '../../lib/tokens';
import { assertWithinPlan } from '../plans/caps';
import {
  type ApiTokenRow,
  deleteAllApiTokens,
  deleteApiToken as deleteRow,
  findApiToken,
  insertApiToken,
  ownsChannel,
  setApiTokenValue,
  updateApiToken as updateRow,
} from './store';

export interface ApiTokenInput {
  name: string;
  access: 'read' | 'write';
  appIds: number[];
  appTags: string[];
  /** Unix ms; null = no expiry. */
  expiresAt: number | null;
}

function check(ctx: AppContext, userId: number, t: Partial<ApiTokenInput>): void {
  if (t.expiresAt !== undefined && t.expiresAt !== null && t.expiresAt <= ctx.clock.now())
    throw errors.badRequest('expiresAt: must be in the future');
  for (const id of t.appIds ?? [])
    if (!ownsChannel(ctx.db, userId, id)) throw errors.badRequest(`appIds: channel ${id} not found`);
}

export function getApiToken(ctx: AppContext, userId: number, id: number): ApiTokenRow {
  const row = findApiToken(ctx.db, userId, id);
  if (!row) throw errors.notFound('API token');
  return row;
}

export function createApiToken(
  ctx: AppContext,
  userId: number,
  input: ApiTokenInput,
): { row: ApiTokenRow; token: string } {
  check(ctx, userId, input);
  assertWithinPlan(ctx, userId, 'apiTokens');
  const { token, digest, hint } = issueToken('M');
  const id = ctx.db.transaction(() =>
    insertApiToken(ctx.db, {
      userId,
      name: input.name,
      access: input.access,
      appIds: JSON.stringify([...new Set(input.appIds)]),
      appTags: JSON.stringify([...new Set(input.appTags)]),
      expiresAt: input.expiresAt,
      digest,
      hint,
      now: ctx.clock.now(),
    }),
  );
  return { row: getApiToken(ctx, userId, id), token };
}

/** Absent fields keep their values (spec "API token": "In update, an absent field means no change"). */
export function updateApiToken(
  ctx: AppContext,
  userId: number,
  id: number,
  patch: Partial<ApiTokenInput>,
): ApiTokenRow {
  const row = getApiToken(ctx, userId, id);
  check(ctx, userId, patch);
  ctx.db.transaction(() =>
    updateRow(ctx.db, id, {
      name: patch.name ?? row.name,
      access: patch.access ?? row.access,
      appIds: patch.appIds === undefined ? row.app_ids : JSON.stringify([...new Set(patch.appIds)]),
      appTags: patch.appTags === undefined ? row.app_tags : JSON.stringify([...new Set(patch.appTags)]),
      expiresAt: patch.expiresAt === undefined ? row.expires_at : patch.expiresAt,
    }),
  );
  return getApiToken(ctx, userId, id);
}

export function rotateApiToken(
  ctx: AppContext,
  userId: number,
  id: number,
): { row: ApiTokenRow; token: string } {
  getApiToken(ctx, userId, id);
  const { token, digest, hint } = issueToken('M');
  ctx.db.transaction(() => setApiTokenValue(ctx.db, id, digest, hint));
  return { row: getApiToken(ctx, userId, id), token };
}

export function deleteApiToken(ctx: AppContext, userId: number, id: number): void {
  getApiToken(ctx, userId, id);
  ctx.db.transaction(() => deleteRow(ctx.db, id));
}

/** Password reset and admin password change: every API token of the user goes (spec point 8). */
export function deleteUserApiTokens(ctx: AppContext, userId: number): number {
  return deleteAllApiTokens(ctx.db, userId);
}

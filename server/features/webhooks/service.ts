import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { BusMessage } from '../../lib/bus';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { issueToken, tokenDigest, tokenPrefix } from '../../lib/tokens';
import { requireOwned } from '../channels/access';
import { type SendInput, sendMessages } from '../messages/service';
import { assertWebhookTemplate, writeWithinPlan } from '../plans/caps';
import {
  deleteWebhook,
  findWebhook,
  findWebhookByDigest,
  insertWebhook,
  listWebhooks,
  rotateWebhook,
  touchWebhook,
  updateWebhook,
  type WebhookFields,
  type WebhookRow,
} from './store';

export function presentWebhook(ctx: AppContext, row: WebhookRow, fullToken?: string) {
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    mode: row.mode,
    title: row.title,
    text: row.text,
    priority: row.priority,
    url: `${ctx.publicUrl()}/webhook/${fullToken ?? row.token_hint}`,
    createdAt: rfc3339(row.created_at),
    lastUsed: rfc3339OrNull(row.last_used),
  };
}

function checkFields(ctx: AppContext, userId: number, f: WebhookFields): void {
  if (f.mode === 'static' && f.text.trim() === '')
    throw errors.badRequest('text: a static webhook needs a text');
  assertWebhookTemplate(ctx, userId, f.title, f.text);
}

export function webhooksOf(ctx: AppContext, p: Principal, channelId: number): WebhookRow[] {
  requireOwned(ctx, p, channelId, { what: 'manage its webhooks' });
  return listWebhooks(ctx.db, channelId);
}

export function createWebhook(ctx: AppContext, p: Principal, channelId: number, f: WebhookFields) {
  requireOwned(ctx, p, channelId, { write: true, what: 'manage its webhooks' });
  checkFields(ctx, p.userId, f);
  const { token, digest, hint } = issueToken('W');
  const id = writeWithinPlan(ctx, p.userId, 'webhooks', () =>
    insertWebhook(ctx.db, channelId, f, digest, hint, ctx.clock.now()),
  );
  return { row: findWebhook(ctx.db, id)!, token };
}

function ownWebhook(ctx: AppContext, p: Principal, id: number): WebhookRow {
  const row = findWebhook(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('webhook');
  requireOwned(ctx, p, row.channel_id, { write: true, what: 'manage its webhooks' });
  return row;
}

export function changeWebhook(
  ctx: AppContext,
  p: Principal,
  id: number,
  patch: Partial<WebhookFields>,
): WebhookRow {
  const row = ownWebhook(ctx, p, id);
  const next: WebhookFields = {
    name: patch.name ?? row.name,
    mode: patch.mode ?? row.mode,
    title: patch.title ?? row.title,
    text: patch.text ?? row.text,
    priority: patch.priority === undefined ? row.priority : patch.priority,
  };
  checkFields(ctx, row.user_id, next);
  writeWithinPlan(ctx, row.user_id, null, () => updateWebhook(ctx.db, id, next));
  return findWebhook(ctx.db, id)!;
}

export function removeWebhook(ctx: AppContext, p: Principal, id: number): void {
  ownWebhook(ctx, p, id);
  ctx.db.transaction(() => deleteWebhook(ctx.db, id));
}

export function rotateWebhookToken(ctx: AppContext, p: Principal, id: number) {
  ownWebhook(ctx, p, id);
  const { token, digest, hint } = issueToken('W');
  ctx.db.transaction(() => rotateWebhook(ctx.db, id, digest, hint));
  return { row: findWebhook(ctx.db, id)!, token };
}

/** `GET|POST /webhook/{token}`: a W token of a live webhook, or 404 (deleting one stops it at once). */
export function fireWebhook(
  ctx: AppContext,
  token: string,
  readDynamic: () => { message?: string; title?: string; priority?: number },
): BusMessage {
  const row = tokenPrefix(token) === 'W' ? findWebhookByDigest(ctx.db, tokenDigest(token)) : undefined;
  if (!row) throw errors.notFound('webhook');
  let input: SendInput;
  if (row.mode === 'static') input = { message: row.text, title: row.title };
  else {
    const dynamic = readDynamic();
    const message = dynamic.message ?? (row.text === '' ? undefined : row.text);
    if (message === undefined) throw errors.badRequest('message is required');
    input = { message, title: dynamic.title ?? row.title };
    const priority = dynamic.priority ?? row.priority ?? undefined;
    if (priority !== undefined) input.priority = priority;
  }
  if (row.mode === 'static' && row.priority !== null) input.priority = row.priority;
  const now = ctx.clock.now();
  const [message] = sendMessages(ctx, row.channel_id, row.name, [input]);
  if (row.last_used === null || now - row.last_used >= LAST_USED_RESOLUTION_MS)
    ctx.db.relaxed(() => touchWebhook(ctx.db, row.id, now));
  return message!;
}

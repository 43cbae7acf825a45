import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, DEV_BASIC, principalOf, readCredential, requestMeta, TOK, TOK_BASIC } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../lib/limits';
import { setSessionCookie } from '../auth/cookie';
import { isRestricted, listVisible } from '../channels/access';
import { findUserById } from '../users/store';
import { presentActivity, presentDevice } from './present';
import {
  ACTIVITY_TYPES,
  changeDeviceStatus,
  createDevice,
  deleteDevice,
  deleteOtherDevices,
  getDevice,
  muteChannel,
  mutedChannelIds,
  renameDevice,
  replaceMutes,
  rotateDevice,
  unmuteChannel,
} from './service';
import { listActivity, listDevices } from './store';

// Spec "Devices (clients)": the legacy noun /client stays here. Reading the list, the activity and the
// mutes is Tok; managing devices (create, reconnect, rename, delete, status, mutes) is for a device
// token (spec point 7), or Basic where point 3 lists it: an API token never obtains or rotates a device
// token (docs/api.md "Devices").
const name = z.string().trim().min(1, 'name is required').max(200);
const createBody = z.object({ name, platform: z.string().max(100).optional() });
const renameBody = z.object({ name });
const statusBody = z.object({ status: z.enum(['active', 'suspended', 'revoked']) });
const channelId = z.number().int().positive();
const mutesBody = z.object({ channelIds: z.array(channelId).max(10_000) });
const muteBody = z.object({ channelId });
const time = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)),
    'expected an RFC 3339 timestamp',
  )
  .transform((s) => Date.parse(s));
const activityQuery = z.object({
  from: time.optional(),
  to: time.optional(),
  type: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .refine(
      (list) => list.every((x) => (ACTIVITY_TYPES as readonly string[]).includes(x)),
      `expected ${ACTIVITY_TYPES.join(', ')}`,
    )
    .optional(),
  limit: z.coerce.number().int().min(PAGE_LIMIT_MIN).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
});

export function deviceRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'devices');
  const userOf = (id: number) => {
    const user = findUserById(ctx.db, id);
    if (!user) throw errors.unauthorized();
    return user;
  };
  t.get('/client', TOK_BASIC, (req) => {
    const p = principalOf(req);
    return listDevices(ctx.db, p.userId).map((d) => presentDevice(d, p.deviceId));
  });
  t.post('/client', DEV_BASIC, (req) => {
    const p = principalOf(req);
    const body = parseBody(req, createBody);
    const created = createDevice(ctx, userOf(p.userId), body, requestMeta(ctx, req), 'reject');
    return presentDevice(created.row, p.deviceId, created.token);
  });
  t.delete('/client', DEV, (req) => {
    const p = principalOf(req);
    return { deleted: deleteOtherDevices(ctx, p.userId, p.deviceId) };
  });
  t.put('/client/:id', DEV, (req) => {
    const p = principalOf(req);
    return presentDevice(
      renameDevice(ctx, p.userId, idParam(req), parseBody(req, renameBody).name, requestMeta(ctx, req)),
      p.deviceId,
    );
  });
  t.delete('/client/:id', DEV, (req) => {
    deleteDevice(ctx, principalOf(req).userId, idParam(req));
    return {};
  });
  t.post('/client/:id/reconnect', DEV_BASIC, (req, res) => {
    const p = principalOf(req);
    const id = idParam(req);
    const rotated = rotateDevice(ctx, p.userId, id, requestMeta(ctx, req), 'reconnect');
    // The browser session that reconnects itself keeps working with the new token.
    if (id === p.deviceId && readCredential(req)?.transport === 'cookie')
      setSessionCookie(ctx, req, res, rotated.token);
    return presentDevice(rotated.row, p.deviceId, rotated.token);
  });
  t.put('/client/:id/status', DEV, (req) => {
    const p = principalOf(req);
    const row = changeDeviceStatus(
      ctx,
      userOf(p.userId),
      idParam(req),
      parseBody(req, statusBody).status,
      requestMeta(ctx, req),
    );
    return presentDevice(row, p.deviceId);
  });
  t.get('/client/:id/activity', TOK, (req) => {
    const p = principalOf(req);
    const device = getDevice(ctx, p.userId, idParam(req));
    const q = parseQuery(req, activityQuery);
    const rows = listActivity(ctx.db, device.id, {
      from: q.from ?? 0,
      to: q.to ?? Number.MAX_SAFE_INTEGER,
      types: q.type && q.type.length > 0 ? q.type : null,
      limit: q.limit,
    });
    return rows.map(presentActivity);
  });
  t.get('/client/:id/subscriptions', TOK, (req) => {
    const p = principalOf(req);
    const muted = mutedChannelIds(ctx, getDevice(ctx, p.userId, idParam(req)).id);
    if (!isRestricted(p)) return { channelIds: muted };
    // A restricted API token sees the mutes of channels inside its scope only.
    const visible = new Set(listVisible(ctx, p).map((v) => v.row.id));
    return { channelIds: muted.filter((id) => visible.has(id)) };
  });
  t.put('/client/:id/subscriptions', DEV, (req) => ({
    channelIds: replaceMutes(
      ctx,
      principalOf(req).userId,
      idParam(req),
      parseBody(req, mutesBody).channelIds,
    ),
  }));
  t.get('/device/me/subscriptions', DEV, (req) => ({
    channelIds: mutedChannelIds(ctx, principalOf(req).deviceId!),
  }));
  t.post('/device/me/subscriptions', DEV, (req) => {
    const p = principalOf(req);
    return { channelIds: muteChannel(ctx, p.userId, p.deviceId!, parseBody(req, muteBody).channelId) };
  });
  t.delete('/device/me/subscriptions/:channel_id', DEV, (req) => {
    const p = principalOf(req);
    return { channelIds: unmuteChannel(ctx, p.userId, p.deviceId!, idParam(req, 'channel_id')) };
  });
  return t;
}

import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { presentChannel } from '../channels/present';
import { presentIncoming, presentShare } from './present';
import {
  type Accepted,
  acceptById,
  changeShare,
  createShare,
  declineById,
  incoming,
  joinByToken,
  leave,
  listShares,
  recipients,
  revokeShare,
  rotate,
} from './service';

// Spec "Sharing a channel by email (Tok)"; record and create body from the contract. A restricted API
// token acts only on shares of channels inside its scope (the service answers 404 outside it).
const permission = z.enum(['view', 'send']);
const createBody = z.object({ email: z.email().max(320), permission, canShare: z.boolean().optional() });
const updateBody = z.object({ permission: permission.optional(), canShare: z.boolean().optional() });
const appidBody = z.object({ appid: z.number().int().positive() });
const joinBody = z.object({ token: z.string().min(1).max(200) });
const WRITE = { ...TOK, access: 'write' } as const;

export function shareRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'shares');
  const accepted = (a: Accepted) =>
    presentChannel(ctx, a.channel, a.channel.share?.permission === 'send' ? { fullToken: a.token } : {});
  t.get('/application/:id/share', TOK, (req) =>
    listShares(ctx, principalOf(req), idParam(req)).map(presentShare),
  );
  t.post('/application/:id/share', WRITE, (req) =>
    presentShare(createShare(ctx, principalOf(req), idParam(req), parseBody(req, createBody))),
  );
  t.put('/share/:id', WRITE, (req) =>
    presentShare(changeShare(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  t.delete('/share/:id', WRITE, (req) => {
    revokeShare(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.get('/share/incoming', TOK, (req) => incoming(ctx, principalOf(req)).map(presentIncoming));
  t.get('/share/recipients', TOK, (req) => recipients(ctx, principalOf(req)));
  t.post('/share/:id/accept', WRITE, (req) => accepted(acceptById(ctx, principalOf(req), idParam(req))));
  t.post('/share/:id/decline', WRITE, (req) =>
    presentShare(declineById(ctx, principalOf(req), idParam(req))),
  );
  t.post('/share/join', WRITE, (req) =>
    accepted(joinByToken(ctx, principalOf(req), parseBody(req, joinBody).token)),
  );
  t.post('/share/leave', WRITE, (req) => {
    leave(ctx, principalOf(req), parseBody(req, appidBody).appid);
    return {};
  });
  // Rotation mints a new S token and kills the one in use: a device operation, like reconnect (docs/api.md).
  t.post('/share/rotate', DEV, (req) => rotate(ctx, principalOf(req), parseBody(req, appidBody).appid));
  return t;
}

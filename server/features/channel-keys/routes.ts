import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { presentKey } from './present';
import { changeKey, issueKey, listChannelKeys, removeKey, rotateChannelKey } from './service';

// Spec "Channel keys (owner only, Tok)". Legacy noun /application stays here.
const keyFields = {
  name: z.string().max(200),
  note: z.string().max(1000),
  canRead: z.boolean(),
  canWrite: z.boolean(),
  expiresAt: z.number().int().min(0),
};
const createBody = z.object(keyFields).partial();
const updateBody = z.object(keyFields).partial();
const WRITE = { ...TOK, access: 'write' } as const;

export function channelKeyRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'channel-keys');
  t.get('/application/:id/token', TOK, (req) =>
    listChannelKeys(ctx, principalOf(req), idParam(req)).map((k) => presentKey(k)),
  );
  t.post('/application/:id/token', WRITE, (req) => {
    const { row, token } = issueKey(ctx, principalOf(req), idParam(req), parseBody(req, createBody));
    return presentKey(row, token);
  });
  t.put('/token/:id', WRITE, (req) =>
    presentKey(changeKey(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  t.delete('/token/:id', WRITE, (req) => {
    const row = removeKey(ctx, principalOf(req), idParam(req));
    return row ? presentKey(row) : {};
  });
  t.post('/token/:id/rotate', WRITE, (req) => {
    const { row, token } = rotateChannelKey(ctx, principalOf(req), idParam(req));
    return presentKey(row, token);
  });
  return t;
}

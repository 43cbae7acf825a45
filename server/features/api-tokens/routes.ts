import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { CHANNEL_TAG_RE } from '../../lib/limits';
import { presentApiToken } from './present';
import { createApiToken, deleteApiToken, rotateApiToken, updateApiToken } from './service';
import { listApiTokens } from './store';

const rfc3339Time = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)),
    'expected an RFC 3339 timestamp',
  )
  .transform((s) => Date.parse(s));

const fields = {
  name: z.string().trim().min(1, 'name is required').max(200),
  access: z.enum(['read', 'write']),
  appIds: z.array(z.number().int().positive()).max(1000),
  appTags: z.array(z.string().regex(CHANNEL_TAG_RE, 'each tag must match [a-z0-9_-]')).max(100),
  expiresAt: rfc3339Time.nullable(),
};

const createBody = z.object({
  name: fields.name,
  access: fields.access,
  appIds: fields.appIds.default([]),
  appTags: fields.appTags.default([]),
  expiresAt: fields.expiresAt.default(null),
});

const updateBody = z.object({
  name: fields.name.optional(),
  access: fields.access.optional(),
  appIds: fields.appIds.optional(),
  appTags: fields.appTags.optional(),
  expiresAt: fields.expiresAt.optional(),
});

/** Spec "API tokens": device token only; an API token gets 403, a channel key 403. */
export function apiTokenRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'api-tokens');
  t.get('/api-token', DEV, (req) =>
    listApiTokens(ctx.db, principalOf(req).userId).map((r) => presentApiToken(r)),
  );
  t.post('/api-token', DEV, (req) => {
    const created = createApiToken(ctx, principalOf(req).userId, parseBody(req, createBody));
    return presentApiToken(created.row, created.token);
  });
  t.put('/api-token/:id', DEV, (req) => {
    const body = parseBody(req, updateBody);
    const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    return presentApiToken(updateApiToken(ctx, principalOf(req).userId, idParam(req), patch));
  });
  t.post('/api-token/:id/rotate', DEV, (req) => {
    const rotated = rotateApiToken(ctx, principalOf(req).userId, idParam(req));
    return presentApiToken(rotated.row, rotated.token);
  });
  t.delete('/api-token/:id', DEV, (req) => {
    deleteApiToken(ctx, principalOf(req).userId, idParam(req));
    return {};
  });
  return t;
}

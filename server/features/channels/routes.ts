import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { testDelivery } from '../../delivery/outbox/service';
import { principalOf, READ, TOK, TOK_BASIC } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { formFieldsOnly, singleFileUpload } from '../../http/upload';
import { idParam, parseBody, recursiveFlag } from '../../http/validate';
import {
  CHANNEL_NAME_MAX,
  CHANNEL_TAG_MAX_CHARS,
  CHANNEL_TAG_RE,
  CHANNEL_TAGS_MAX,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../lib/limits';
import { channelHealth } from '../sources/registry';
import { IMAGE_ROUTE, presentChannel } from './present';
import {
  channelStatus,
  createChannel,
  deleteChannelFor,
  deleteImage,
  eventSources,
  imagePath,
  listVisible,
  setImage,
  updateChannelFor,
} from './service';

// Spec "Channels": the legacy noun /application stays here. name, description, defaultPriority,
// parentId and sortKey may come as a form (strings), hence the coercion; tags and deliveryConfig are JSON only.
const emptyAsAbsent = (v: unknown) => (v === '' ? undefined : v);
const priority = z.preprocess(emptyAsAbsent, z.coerce.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX));
const parentId = z.preprocess(
  (v) => (v === '' || v === 'null' ? null : v),
  z.union([z.null(), z.coerce.number().int().positive()]),
);
const tags = z
  .array(
    z
      .string()
      .min(1)
      .max(CHANNEL_TAG_MAX_CHARS)
      .regex(CHANNEL_TAG_RE, 'tags may contain only a-z, 0-9, _ and -'),
  )
  .max(CHANNEL_TAGS_MAX, `at most ${CHANNEL_TAGS_MAX} tags`)
  .transform((list) => [...new Set(list)]);
const fields = {
  description: z.string().max(10_000),
  defaultPriority: priority,
  parentId,
  sortKey: z.string().max(200),
  tags,
  deliveryConfig: z.unknown(),
};
const name = z.string().trim().min(1, 'name is required').max(CHANNEL_NAME_MAX);
const createBody = z.object({ name: z.string({ error: 'name is required' }).pipe(name), ...fields }).partial({
  description: true,
  defaultPriority: true,
  parentId: true,
  sortKey: true,
  tags: true,
  deliveryConfig: true,
});
const updateBody = z.object({ name, ...fields }).partial();
const testBody = z.object({ adapter: z.string().optional() });
const IMAGE_FILE_RE = /^[a-f0-9]{32}\.(png|jpg|gif|webp)$/;

const WRITE = { ...TOK, access: 'write' } as const;
/** Multipart text fields of POST /application (no files); a few more than its five form fields. */
const applicationForm = formFieldsOnly(10);

export function channelRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'channels');
  t.get('/application', READ, (req) => {
    const viewer = principalOf(req);
    const list = listVisible(ctx, viewer);
    const visibleIds = new Set(list.map((v) => v.row.id));
    const health = channelHealth(ctx, [...visibleIds]);
    return list.map((v) => presentChannel(ctx, v, { visibleIds, viewer, health }));
  });
  t.post(
    '/application',
    { ...TOK_BASIC, access: 'write' },
    (req) => {
      const viewer = principalOf(req);
      const { channel, token } = createChannel(ctx, viewer, parseBody(req, createBody));
      return presentChannel(ctx, channel, { fullToken: token, viewer });
    },
    // The spec's "may also be sent as a form" in either encoding: the older protocol's clients send multipart.
    applicationForm,
  );
  t.put('/application/:id', WRITE, (req) => {
    const viewer = principalOf(req);
    return presentChannel(ctx, updateChannelFor(ctx, viewer, idParam(req), parseBody(req, updateBody)), {
      viewer,
    });
  });
  t.delete('/application/:id', WRITE, (req) => {
    deleteChannelFor(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.get('/application/:id/status', TOK, (req) =>
    channelStatus(ctx, principalOf(req), idParam(req), recursiveFlag(req)),
  );
  t.get('/application/:id/event-sources', TOK, (req) =>
    eventSources(ctx, principalOf(req), idParam(req), recursiveFlag(req)),
  );
  t.post('/application/:id/delivery/test', WRITE, (req) =>
    testDelivery(ctx, principalOf(req), idParam(req), parseBody(req, testBody).adapter),
  );
  t.post(
    '/application/:id/image',
    WRITE,
    async (req) => {
      const viewer = principalOf(req);
      return presentChannel(ctx, await setImage(ctx, viewer, idParam(req), req.file?.buffer), { viewer });
    },
    singleFileUpload(),
  );
  t.delete('/application/:id/image', WRITE, (req) => {
    const viewer = principalOf(req);
    return presentChannel(ctx, deleteImage(ctx, viewer, idParam(req)), { viewer });
  });
  // Logos are public (an <img> sends no token); the names are random (docs/api.md "Logo").
  t.get(`${IMAGE_ROUTE}/:file`, null, (req, res) => {
    const file = String(req.params.file);
    if (!IMAGE_FILE_RE.test(file) || !existsSync(imagePath(ctx, file))) throw errors.notFound('image');
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.sendFile(imagePath(ctx, file));
    return undefined;
  });
  return t;
}

import { z } from 'zod';
import type { AppContext } from '../../context';
import { inWriteBatch } from '../../db/write-batch';
import { APP, principalOf, READ, readCredential, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { pagingQuery } from '../../http/paging';
import { type LeanRequest, RouteTable } from '../../http/routes';
import { idParam, isJson, parseBody, parseQuery, recursiveFlag } from '../../http/validate';
import {
  MESSAGE_MAX_CHARS,
  PRIORITY_MAX,
  PRIORITY_MIN,
  READ_IDS_MAX,
  SEARCH_QUERY_MIN_LENGTH,
  TITLE_MAX_CHARS,
} from '../../lib/limits';
import {
  deleteAllMessages,
  deleteChannelMessages,
  deleteOneMessage,
  listChannelMessages,
  listMessages,
  markChannelsRead,
  markMessagesRead,
  type PageRequest,
  searchVisible,
  senderNameOf,
  sendMessages,
} from './service';

// Spec "Sending and reading messages". Unknown fields (id, date, appid) are ignored: z.object strips them.
// null counts as absent: clients of the older protocol send `"extras": null`.
const nullish = <T extends z.ZodType>(s: T) => s.nullish().transform((v) => v ?? undefined);
export const sendBody = z.object({
  message: z
    .string({ error: 'message is required' })
    .min(1, 'message is required')
    .max(MESSAGE_MAX_CHARS, `message is too long: at most ${MESSAGE_MAX_CHARS} characters`),
  title: nullish(z.string().max(TITLE_MAX_CHARS)),
  priority: nullish(z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX)),
  extras: nullish(z.record(z.string(), z.unknown())),
});
type SendBody = z.output<typeof sendBody>;

/**
 * sendBody's answer for the bodies nearly every POST /message sends (strings, an integer priority, a
 * plain extras object), checked by hand: zod's parse was ~4 % of a durable POST's CPU. Anything it does
 * not recognise as valid (a wrong type, a limit, an extras key named `__proto__`) returns null and goes
 * through zod, which answers or names the error; send-body.test.ts holds both paths to the same outputs.
 */
export function quickSendBody(v: unknown): SendBody | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const { message, title, priority, extras } = o;
  if (typeof message !== 'string' || message.length === 0 || message.length > MESSAGE_MAX_CHARS) return null;
  const out = { message } as SendBody;
  // Present with null (older clients send `"extras": null`): the key stays, undefined, as zod leaves it.
  if ('title' in o) {
    if (title != null && (typeof title !== 'string' || title.length > TITLE_MAX_CHARS)) return null;
    out.title = title ?? undefined;
  }
  if ('priority' in o) {
    if (
      priority != null &&
      (!Number.isInteger(priority) ||
        (priority as number) < PRIORITY_MIN ||
        (priority as number) > PRIORITY_MAX)
    )
      return null;
    out.priority = (priority as number | null) ?? undefined;
  }
  if ('extras' in o) {
    if (extras != null) {
      if (typeof extras !== 'object' || Array.isArray(extras) || Object.hasOwn(extras, '__proto__'))
        return null;
      out.extras = { ...(extras as Record<string, unknown>) };
    } else out.extras = undefined;
  }
  return out;
}

const searchQuery = pagingQuery.extend({
  q: z
    .string({ error: `q: at least ${SEARCH_QUERY_MIN_LENGTH} characters` })
    .trim()
    .min(SEARCH_QUERY_MIN_LENGTH, `at least ${SEARCH_QUERY_MIN_LENGTH} characters`),
  appId: z.coerce.number().int().positive().optional(),
});
const readBody = z.object({ ids: z.array(z.number().int().positive()).min(1).max(READ_IDS_MAX) });

export const APP_SEND = { ...APP, access: 'write' } as const;
const WRITE = { ...TOK, access: 'write' } as const;

/** limit/since plus the URL of the next page, built from the request's own host. */
export function pageRequest(req: LeanRequest): PageRequest {
  const { limit, since } = parseQuery(req, pagingQuery);
  const cred = readCredential(req);
  return {
    limit,
    since,
    legacy: cred !== null && cred.transport === 'legacy-key',
    nextUrl: (next) => {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') params.set(k, v);
      params.set('limit', String(limit));
      params.set('since', String(next));
      return `${req.protocol}://${req.headers.host}${req.path}?${params.toString()}`;
    },
  };
}

export function messageRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'messages');
  t.postLean('/message', APP_SEND, (req) => {
    if (!isJson(req))
      throw errors.badRequest('POST /message takes a JSON body (Content-Type: application/json)');
    const p = principalOf(req);
    const body = quickSendBody(req.body) ?? parseBody(req, sendBody);
    // Group-committed with the other writes of this turn of the loop (db/write-batch.ts).
    return inWriteBatch(ctx.db, () => sendMessages(ctx, p.channelId!, senderNameOf(p), [body])[0]);
  });
  t.getLean('/message', READ, (req) => listMessages(ctx, principalOf(req), pageRequest(req)));
  t.get('/message/search', READ, (req) => {
    const q = parseQuery(req, searchQuery);
    return searchVisible(ctx, principalOf(req), q.q, q.appId, recursiveFlag(req), pageRequest(req));
  });
  t.get('/application/:id/message', TOK, (req) =>
    listChannelMessages(ctx, principalOf(req), idParam(req), recursiveFlag(req), pageRequest(req)),
  );
  t.post('/message/read', WRITE, (req) =>
    markMessagesRead(ctx, principalOf(req), parseBody(req, readBody).ids),
  );
  t.post('/application/:id/message/read', WRITE, (req) =>
    markChannelsRead(ctx, principalOf(req), idParam(req), recursiveFlag(req)),
  );
  t.delete('/message', WRITE, (req) => deleteAllMessages(ctx, principalOf(req)));
  t.delete('/message/:id', WRITE, (req) => deleteOneMessage(ctx, principalOf(req), idParam(req)));
  t.delete('/application/:id/message', WRITE, (req) =>
    deleteChannelMessages(ctx, principalOf(req), idParam(req), recursiveFlag(req)),
  );
  return t;
}

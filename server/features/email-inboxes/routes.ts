import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { pageRequest } from '../messages/routes';
import { listenerState } from './listener';
import { presentEvent, presentInbox, presentRule } from './present';
import {
  changeInbox,
  changeRule,
  createInbox,
  createRule,
  listEvents,
  listInboxes,
  listRules,
  ownEvent,
  ownInbox,
  removeEvent,
  removeInbox,
  removeRule,
  ruleFromEvent,
  TITLE_MAX_CHARS,
} from './service';

/** Management class (§0.2): device token or API token, `read` for GET, `write` otherwise. */
const WRITE = { ...TOK, access: 'write' } as const;

const priority = z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).nullable();
const inboxBody = z
  .object({
    appid: z.number().int().positive(),
    name: z.string().trim().min(1, 'required').max(200, 'at most 200 characters'),
    paused: z.boolean(),
    localPart: z.string().max(200, 'at most 64 characters'),
    priority,
  })
  .partial();
const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });
const eventQuery = z.object({ inboxId: z.coerce.number().int().positive().optional() });
const ruleBody = z
  .object({
    name: z.string().trim().min(1, 'required').max(200, 'at most 200 characters'),
    match: z.record(z.string(), z.unknown()),
    action: z.enum(['message', 'drop'], { error: 'must be one of message, drop' }),
    title: z.string().max(TITLE_MAX_CHARS, `at most ${TITLE_MAX_CHARS} characters`).nullable(),
    priority,
    position: z.number().int().min(1),
  })
  .partial();
const fromEventBody = z.object({ save: z.boolean().optional() });

export function inboxRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'email-inboxes');

  // Events first: `/email-inbox/event` is not an inbox id.
  t.get('/email-inbox/event', TOK, (req) =>
    listEvents(ctx, principalOf(req), parseQuery(req, eventQuery).inboxId, pageRequest(req)),
  );
  t.get('/email-inbox/event/:eid', TOK, (req) =>
    presentEvent(ownEvent(ctx, principalOf(req), idParam(req, 'eid'))),
  );
  t.delete('/email-inbox/event/:eid', WRITE, (req) => {
    removeEvent(ctx, principalOf(req), idParam(req, 'eid'));
    return {};
  });
  t.post('/email-inbox/rule/from-event/:eid', WRITE, (req) =>
    ruleFromEvent(ctx, principalOf(req), idParam(req, 'eid'), parseBody(req, fromEventBody).save ?? false),
  );

  t.get('/email-inbox/listener', TOK, () => listenerState(ctx));
  t.get('/email-inbox', TOK, (req) =>
    listInboxes(ctx, principalOf(req), parseQuery(req, listQuery).appid).map((r) => presentInbox(ctx, r)),
  );
  t.post('/email-inbox', WRITE, (req) =>
    presentInbox(ctx, createInbox(ctx, principalOf(req), parseBody(req, inboxBody))),
  );
  t.get('/email-inbox/:id', TOK, (req) => presentInbox(ctx, ownInbox(ctx, principalOf(req), idParam(req))));
  t.put('/email-inbox/:id', WRITE, (req) =>
    presentInbox(ctx, changeInbox(ctx, principalOf(req), idParam(req), parseBody(req, inboxBody))),
  );
  t.delete('/email-inbox/:id', WRITE, (req) => {
    removeInbox(ctx, principalOf(req), idParam(req));
    return {};
  });

  t.get('/email-inbox/:id/rules', TOK, (req) =>
    listRules(ctx, principalOf(req), idParam(req)).map(presentRule),
  );
  t.post('/email-inbox/:id/rules', WRITE, (req) =>
    presentRule(createRule(ctx, principalOf(req), idParam(req), parseBody(req, ruleBody))),
  );
  t.put('/email-inbox/:id/rules/:rid', WRITE, (req) =>
    presentRule(
      changeRule(ctx, principalOf(req), idParam(req), idParam(req, 'rid'), parseBody(req, ruleBody)),
    ),
  );
  t.delete('/email-inbox/:id/rules/:rid', WRITE, (req) => {
    removeRule(ctx, principalOf(req), idParam(req), idParam(req, 'rid'));
    return {};
  });
  return t;
}

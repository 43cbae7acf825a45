import type { Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { type AuthRule, principalOf, TOK } from '../../http/auth';
import { ApiError } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { APP_SEND } from '../messages/routes';
import { escapeHtml } from '../status-pages/render';
import {
  ack,
  answerByLink,
  answerMessage,
  answerQuestion,
  ask,
  cancelQuestion,
  extendQuestion,
  getQuestion,
  pendingAnswers,
  READY_MAX,
} from './service';
import { TIMEOUT_MAX_SEC } from './validate';

const WRITE = { ...TOK, access: 'write' } as const;
/** GET /ask-question/{id}: channel keys (their channel, with write; checked by the service) and tokens. */
const READ_QUESTION: AuthRule = { kinds: ['device', 'api', 'app', 'share'] };
/** extend: also a channel key with write (spec). */
const EXTEND: AuthRule = { kinds: ['device', 'api', 'app', 'share'], access: 'write' };

const answerBody = z.object({ answer: z.unknown().optional() });
const extendBody = z.object({
  timeout_sec: z
    .number({ error: 'required, an integer' })
    .int('must be an integer')
    .min(1, `must be 1-${TIMEOUT_MAX_SEC}`)
    .max(TIMEOUT_MAX_SEC, `must be 1-${TIMEOUT_MAX_SEC}`),
});
const ackBody = z.object({
  ids: z
    .array(z.number().int().positive(), { error: 'must be an array of question ids' })
    .max(READY_MAX, `at most ${READY_MAX} ids`),
});
const linkQuery = z.object({ token: z.string().max(2000).optional() });

/** The link's pages only show text: nothing loads, nothing runs (as /m/read). */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'";

function page(res: Response, status: number, heading: string): void {
  res.status(status).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.send(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Belfry</title><style>body{font-family:system-ui,sans-serif;margin:3rem auto;max-width:36rem;padding:0 1rem}</style></head><body><main><h1>${escapeHtml(heading)}</h1></main></body></html>`,
  );
}

/** Interactive questions (issue 16, wire rules §7). */
export function questionRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'questions');
  t.post('/ask', APP_SEND, (req) => ask(ctx, principalOf(req), req.body ?? {}));
  t.get('/ask/pending-answers', APP_SEND, (req) => pendingAnswers(ctx, principalOf(req)));
  t.post('/ask/ack', APP_SEND, (req) => ack(ctx, principalOf(req), parseBody(req, ackBody).ids));
  t.get('/ask-question/:id', READ_QUESTION, (req) => getQuestion(ctx, principalOf(req), idParam(req)));
  t.post('/ask-question/:id/answer', WRITE, (req) =>
    answerQuestion(ctx, principalOf(req), idParam(req), parseBody(req, answerBody).answer),
  );
  t.delete('/ask-question/:id', WRITE, (req) => cancelQuestion(ctx, principalOf(req), idParam(req)));
  t.post('/ask-question/:id/extend', EXTEND, (req) =>
    extendQuestion(ctx, principalOf(req), idParam(req), parseBody(req, extendBody).timeout_sec),
  );
  t.post('/message/:id/answer', WRITE, (req) =>
    answerMessage(ctx, principalOf(req), idParam(req), parseBody(req, answerBody).answer),
  );
  // Public signed link (§7.4): credentials in headers or cookies are never read (route rule null). HTML
  // pages unless the client asks for JSON only.
  t.get('/a/answer', null, (req, res) => {
    const accept = req.headers.accept ?? '';
    const wantsJson = /application\/json/i.test(accept) && !/text\/html/i.test(accept);
    const ua = req.headers['user-agent'] ?? '';
    let outcome: ReturnType<typeof answerByLink>;
    try {
      outcome = answerByLink(ctx, parseQuery(req, linkQuery).token, ua);
    } catch (err) {
      if (wantsJson || !(err instanceof ApiError)) throw err;
      page(res, err.status, err.description);
      return undefined;
    }
    if (outcome.preview) {
      if (wantsJson) return { ok: false, preview: true };
      page(res, 200, 'Open this link in a browser to answer');
      return undefined;
    }
    if (wantsJson) return { ok: true, id: outcome.id, answer: outcome.option };
    page(res, 200, `Answer recorded: ${outcome.option}`);
    return undefined;
  });
  return t;
}

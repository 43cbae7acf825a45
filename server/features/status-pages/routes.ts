import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { ApiError } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { pageHtml, pageSummary } from './cache';
import { renderNotice } from './render';
import {
  createPage,
  getPage,
  listPages,
  presentPage,
  presentSubscriber,
  removePage,
  removeSubscriber,
  subscribersOf,
  updatePageFor,
} from './service';
import { publicPage, subscribe, unsubscribe, verify } from './subscriptions';

const SLUG = /^[a-z0-9-]{3,60}$/;
const SLUG_RULE = '3-60 characters of a-z, 0-9 and -';
const fields = {
  appid: z.number().int().positive(),
  slug: z.string({ message: SLUG_RULE }).regex(SLUG, SLUG_RULE),
  title: z.string().max(200),
  description: z.string().max(2_000),
  enabled: z.boolean(),
  lang: z.enum(['en', 'ru'], { message: 'must be en or ru' }),
  brandingHidden: z.boolean(),
};
const createBody = z.object({ ...z.object(fields).partial().shape, appid: fields.appid, slug: fields.slug });
const updateBody = z.object(fields).partial();
const subscribeBody = z.object({
  email: z.string({ message: 'not a valid address' }).trim().max(254).email('not a valid address'),
});

const WRITE = { ...TOK, access: 'write' } as const;

/** Form posts of the public page's subscribe form (app.ts parses forms only on its own routes). */
const formParser = express.urlencoded({ extended: false, limit: '16kb' });

const isForm = (req: Request) =>
  /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '');

/** Signed-link pages answer JSON only when Accept names application/json and not text/html. */
function wantsJson(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept);
}

/** The public pages load nothing and run nothing: their only outbound action is the subscribe form. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'";

function html(res: Response, status: number, body: string): void {
  res.status(status).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.send(body);
}

/**
 * A small HTML page (`{ok: true}` when JSON was asked for) after `run`; a 4xx it throws becomes an HTML
 * page with the same status (the JSON error body when JSON was asked for).
 */
function notice(
  res: Response,
  json: boolean,
  failed: string,
  run: () => { title: string; line: string },
): unknown {
  try {
    const r = run();
    if (json) return { ok: true };
    html(res, 200, renderNotice(r.title, r.line));
    return undefined;
  } catch (err) {
    if (json || !(err instanceof ApiError) || err.status >= 500) throw err;
    if (err.status === 404) html(res, 404, renderNotice('Status page not found'));
    else html(res, err.status, renderNotice(failed, err.description));
    return undefined;
  }
}

export function statusPageRoutes(ctx: AppContext): RouteTable[] {
  const manage = new RouteTable(ctx, 'status-pages');
  manage.get('/status-page', TOK, (req) => listPages(ctx, principalOf(req)).map((r) => presentPage(ctx, r)));
  manage.post('/status-page', WRITE, (req) =>
    presentPage(ctx, createPage(ctx, principalOf(req), parseBody(req, createBody))),
  );
  manage.get('/status-page/:id', TOK, (req) =>
    presentPage(ctx, getPage(ctx, principalOf(req), idParam(req))),
  );
  manage.put('/status-page/:id', WRITE, (req) =>
    presentPage(ctx, updatePageFor(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  manage.delete('/status-page/:id', WRITE, (req) => {
    removePage(ctx, principalOf(req), idParam(req));
    return {};
  });
  manage.get('/status-page/:id/subscribers', TOK, (req) =>
    subscribersOf(ctx, principalOf(req), idParam(req)).map(presentSubscriber),
  );
  manage.delete('/status-page/:id/subscribers/:sid', WRITE, (req) => {
    removeSubscriber(ctx, principalOf(req), idParam(req), idParam(req, 'sid'));
    return {};
  });

  // The public surface: no credentials are read; the slug or the signed link is all there is.
  const pub = new RouteTable(ctx, 'status-public');
  pub.get('/status/:slug/summary', null, (req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.removeHeader('Access-Control-Allow-Credentials');
    res.setHeader('Cache-Control', 'no-store');
    return pageSummary(ctx, publicPage(ctx, String(req.params.slug)));
  });
  pub.options('/status/:slug/summary', (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET');
    res.status(204).end();
  });
  pub.get('/status/:slug', null, (req, res) => {
    let body: string;
    try {
      body = pageHtml(ctx, publicPage(ctx, String(req.params.slug)));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
      html(res, 404, renderNotice('Status page not found'));
      return undefined;
    }
    html(res, 200, body);
    return undefined;
  });
  pub.post(
    '/status/:slug/subscribe',
    null,
    (req, res) => {
      const form = isForm(req);
      if (!form) {
        subscribe(ctx, String(req.params.slug), parseBody(req, subscribeBody).email);
        return { ok: true };
      }
      return notice(res, false, 'Subscription failed', () => {
        subscribe(ctx, String(req.params.slug), parseBody(req, subscribeBody).email);
        return {
          title: 'Check your mail',
          line: 'If the address can receive mail, a link to confirm the subscription is on its way.',
        };
      });
    },
    formParser,
  );
  pub.get('/status-subscribe/verify', null, (req, res) =>
    notice(res, wantsJson(req), 'This link does not work', () => {
      verify(ctx, req.query.token);
      return {
        title: 'Subscription confirmed',
        line: 'You will get a mail when an incident starts and ends.',
      };
    }),
  );
  pub.get('/status-subscribe/unsub', null, (req, res) =>
    notice(res, wantsJson(req), 'This link does not work', () => {
      unsubscribe(ctx, req.query.token);
      return { title: 'Unsubscribed', line: 'No more mail about this status page will be sent to you.' };
    }),
  );
  return [manage, pub];
}

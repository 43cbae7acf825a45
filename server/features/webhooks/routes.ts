import type { Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { formFieldsOnly } from '../../http/upload';
import { idParam, parse, parseBody } from '../../http/validate';
import { MESSAGE_MAX_CHARS, PRIORITY_MAX, PRIORITY_MIN, TITLE_MAX_CHARS } from '../../lib/limits';
import {
  changeWebhook,
  createWebhook,
  fireWebhook,
  presentWebhook,
  removeWebhook,
  rotateWebhookToken,
  webhooksOf,
} from './service';

// Public webhooks (spec "Public webhooks"); the management endpoints are Belfry's (docs/api.md).
const priority = z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX);
const fields = {
  name: z.string().trim().min(1, 'name is required').max(200),
  mode: z.enum(['static', 'dynamic']),
  title: z.string().max(TITLE_MAX_CHARS),
  text: z.string().max(MESSAGE_MAX_CHARS),
  priority: priority.nullable(),
};
const createBody = z.object({
  name: fields.name,
  mode: fields.mode.default('dynamic'),
  title: fields.title.default(''),
  text: fields.text.default(''),
  priority: fields.priority.default(null),
});
const updateBody = z.object(fields).partial();
// Query strings and forms carry strings: coerce, and treat empty values as absent.
const blank = (v: unknown) => (v === '' || v === null ? undefined : v);
const dynamicInput = z.object({
  message: z.preprocess(blank, z.string().max(MESSAGE_MAX_CHARS).optional()),
  title: z.preprocess(blank, z.string().max(TITLE_MAX_CHARS).optional()),
  priority: z.preprocess(blank, z.coerce.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).optional()),
});
const WRITE = { ...TOK, access: 'write' } as const;
const formData = formFieldsOnly(20);

/** Simple CORS: any page may call the URL and read the answer; no credentials are involved. */
function openCors(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.removeHeader('Access-Control-Allow-Credentials');
}

export function webhookRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'webhooks');
  t.get('/application/:id/webhook', TOK, (req) =>
    webhooksOf(ctx, principalOf(req), idParam(req)).map((w) => presentWebhook(ctx, w)),
  );
  t.post('/application/:id/webhook', WRITE, (req) => {
    const { row, token } = createWebhook(ctx, principalOf(req), idParam(req), parseBody(req, createBody));
    return presentWebhook(ctx, row, token);
  });
  t.put('/webhook-config/:id', WRITE, (req) =>
    presentWebhook(ctx, changeWebhook(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  t.delete('/webhook-config/:id', WRITE, (req) => {
    removeWebhook(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.post('/webhook-config/:id/rotate', WRITE, (req) => {
    const { row, token } = rotateWebhookToken(ctx, principalOf(req), idParam(req));
    return presentWebhook(ctx, row, token);
  });

  const fire = (req: Request, res: Response) => {
    openCors(res);
    // Read lazily: static mode ignores the body and query entirely, even malformed ones.
    return fireWebhook(ctx, String(req.params.token), () => {
      const fromQuery = parse(dynamicInput, req.query, 'query');
      const raw = req.body as unknown;
      const fromBody = parse(
        dynamicInput,
        typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {},
        'body',
      );
      return {
        message: fromBody.message ?? fromQuery.message,
        title: fromBody.title ?? fromQuery.title,
        priority: fromBody.priority ?? fromQuery.priority,
      };
    });
  };
  const cors = (_req: Request, res: Response, next: () => void) => {
    openCors(res);
    next();
  };
  t.get('/webhook/:token', null, fire, cors);
  t.post('/webhook/:token', null, fire, cors, formData);
  t.options('/webhook/:token', (_req, res) => {
    openCors(res);
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.status(204).end();
  });
  return t;
}

import type { IncomingMessage } from 'node:http';
import express, { type Express } from 'express';
import type { AppContext } from './context';
import type { Feature } from './features/index';
import { applyCors } from './http/cors';
import { durableResponses } from './http/durable';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { assertJsonDepth } from './http/lean';
import { notImplementedRouter } from './http/not-implemented';
import { dispatchBySegment, type RouteTable } from './http/routes';
import { staticRenderer } from './http/static';

export interface AssembledApp {
  app: Express;
  /** `METHOD /express/path` of every route a family mounted (the route inventory). */
  mounted: Set<string>;
  tables: RouteTable[];
}

/**
 * The routes that take urlencoded forms: sign-in (the older protocol's clients), channel creation (the
 * older protocol's CLI), the alert receivers (Zabbix posts forms) and public webhooks (HTML forms).
 */
const FORM_ROUTES =
  /^\/(?:auth\/local\/login|application|integrations\/[^/]+|webhook\/[^/]+|heartbeat\/ping\/[^/]+(?:\/[^/]+)?)\/?$/i;
/**
 * Heartbeat pings keep their body in the ping log as sent, and webhook-router events their JSON as sent
 * (and its size): the parsers leave the raw bytes on `rawBody`.
 */
const RAW_BODY_ROUTES = /^\/(?:heartbeat\/ping|router)\//i;
const keepRawBody = (req: IncomingMessage, _res: unknown, buf: Buffer) => {
  if (RAW_BODY_ROUTES.test(req.url ?? '')) (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
};

/** Express assembly: body parsing, family routers in order, 501 for unbuilt spec routes, errors last. */
export function assembleApp(ctx: AppContext, features: readonly Feature[]): AssembledApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(ctx.activity.middleware());
  app.use(durableResponses(ctx.store, ctx.log));
  app.use((req, res, next) => {
    if (!applyCors(req, res, ctx.config.allowedOrigins)) next();
  });
  const limit = ctx.config.bodyLimitBytes;
  app.use(express.json({ limit, type: ['application/json', 'application/*+json'], verify: keepRawBody }));
  // Form bodies only where a client sends them (docs/api.md): elsewhere a form is not a body at all.
  const form = express.urlencoded({ limit, extended: false, verify: keepRawBody });
  app.use((req, res, next) => {
    if (req.method === 'POST' && FORM_ROUTES.test(req.path)) form(req, res, next);
    else next();
  });
  app.use((req, _res, next) => {
    assertJsonDepth(req.body);
    next();
  });

  const tables: RouteTable[] = [];
  for (const f of features) {
    if (!f.routes) continue;
    const t = f.routes(ctx);
    tables.push(...(Array.isArray(t) ? t : [t]));
  }
  app.use(dispatchBySegment(tables));
  const mounted = new Set(tables.flatMap((t) => t.routes.map((r) => `${r.method} ${r.path}`)));
  // The web UI (dist/renderer) after every family route, before the 501s: API paths never fall back.
  app.use(staticRenderer());
  app.use(notImplementedRouter(mounted));
  app.use(notFoundHandler);
  app.use(errorHandler(ctx.log, limit));
  return { app, mounted, tables };
}

import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { AppContext } from '../context';
import { type AuthRequest, type AuthRule, requireAuth } from './auth';

/** A handler returns the JSON body to send, or undefined when it answered itself (204, files, streams). */
export type Handler = (req: Request, res: Response) => unknown;

/** What a lean route's handler reads of a request: the same whether express or the lean lane serves it. */
export interface LeanRequest extends AuthRequest {
  body?: unknown;
  /** The body as received (UTF-8 text), for handlers that keep it (heartbeat pings). */
  rawBody?: string;
  /** The same body's bytes as they came (the lean lane): stored as they are, without encoding the text again. */
  rawBytes?: Buffer;
  /** `http` (Belfry serves no TLS itself; no proxy is trusted). */
  protocol: string;
}
/** A lean route's handler always returns the JSON body of its 200 answer (or throws an ApiError). */
export type LeanHandler = (req: LeanRequest) => unknown;

export interface LeanRoute {
  method: 'GET' | 'POST';
  path: string;
  /** null: a public route (no credentials are read). */
  auth: AuthRule | null;
  handler: LeanHandler;
  /** `path` is a prefix: every path below it (a token in the URL) is this route's. */
  prefix?: boolean;
  /** Headers of every answer, errors included (CORS of public endpoints). */
  headers?: Record<string, string>;
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A family's routes: each path declares the principal kinds it accepts (or null for public routes)
 * beside the handler, and is recorded so the route inventory can compare code with docs/api.md.
 */
export class RouteTable {
  readonly router = Router();
  readonly routes: { method: string; path: string }[] = [];
  /** Routes the lean lane (lean.ts) may serve without express. */
  readonly leanRoutes: LeanRoute[] = [];
  /** First path segments this table answers (`/message/...` → `message`), for the dispatcher in app.ts. */
  readonly segments = new Set<string>();

  constructor(
    private readonly ctx: AppContext,
    readonly family: string,
  ) {}

  get(path: string, auth: AuthRule | null, handler: Handler, ...before: RequestHandler[]): this {
    return this.add('get', path, auth, handler, before);
  }
  post(path: string, auth: AuthRule | null, handler: Handler, ...before: RequestHandler[]): this {
    return this.add('post', path, auth, handler, before);
  }
  put(path: string, auth: AuthRule | null, handler: Handler, ...before: RequestHandler[]): this {
    return this.add('put', path, auth, handler, before);
  }
  patch(path: string, auth: AuthRule | null, handler: Handler, ...before: RequestHandler[]): this {
    return this.add('patch', path, auth, handler, before);
  }
  delete(path: string, auth: AuthRule | null, handler: Handler, ...before: RequestHandler[]): this {
    return this.add('delete', path, auth, handler, before);
  }

  /**
   * A POST route with a JSON body that the lean lane (lean.ts) serves straight on node:http for the
   * common request shape; other requests reach the same handler through express. For the hottest
   * endpoints only: the path must be literal, and the handler sees only a LeanRequest.
   */
  postLean(path: string, auth: AuthRule, handler: LeanHandler): this {
    return this.lean('POST', path, auth, handler);
  }

  /** A GET route the lean lane serves (HEAD goes through express). */
  getLean(path: string, auth: AuthRule, handler: LeanHandler): this {
    return this.lean('GET', path, auth, handler);
  }

  /**
   * Public GET and POST routes under `prefix` (a token in the path) served on the lean lane. The express
   * routes for the same paths must be declared as well (they serve HEAD, forms and other bodies); this
   * only adds the lane, so it is not part of the inventory.
   */
  leanPrefix(prefix: string, handler: LeanHandler, headers: Record<string, string> = {}): this {
    if (!prefix.endsWith('/') || prefix.includes(':'))
      throw new Error(`lean prefix ${prefix}: literal, ending in /`);
    for (const method of ['GET', 'POST'] as const)
      this.leanRoutes.push({ method, path: prefix, auth: null, handler, prefix: true, headers });
    return this;
  }

  private lean(method: LeanRoute['method'], path: string, auth: AuthRule, handler: LeanHandler): this {
    if (path.includes(':') || path.includes('*'))
      throw new Error(`lean route ${path}: the path must be literal`);
    this.leanRoutes.push({ method, path, auth, handler });
    return this.add(method === 'GET' ? 'get' : 'post', path, auth, handler, []);
  }

  /** A bare OPTIONS answer (CORS preflight of public endpoints); not part of the inventory. */
  options(path: string, handler: RequestHandler): this {
    this.segments.add(firstSegment(path));
    this.router.options(path, handler);
    return this;
  }

  private add(
    method: Method,
    path: string,
    auth: AuthRule | null,
    handler: Handler,
    before: RequestHandler[],
  ): this {
    this.routes.push({ method: method.toUpperCase(), path });
    this.segments.add(firstSegment(path));
    const chain: RequestHandler[] = [];
    if (auth) chain.push(requireAuth(this.ctx, auth));
    chain.push(...before);
    chain.push(async (req, res) => {
      const body = await handler(req, res);
      if (body !== undefined && !res.headersSent) res.json(body);
    });
    this.router[method](path, ...chain);
    return this;
  }
}

/** `/application/:id/message` → `application`. Every route starts with a literal segment. */
export function firstSegment(path: string): string {
  const seg = path.split('/')[1] ?? '';
  if (seg.startsWith(':') || seg.startsWith('*'))
    throw new Error(`route ${path}: the first segment must be literal`);
  return seg;
}

/**
 * One middleware in place of a router per family: a request goes straight to the tables that have
 * routes under its first path segment (in family order) instead of walking every family's routes.
 */
export function dispatchBySegment(tables: readonly RouteTable[]): RequestHandler {
  const bySegment = new Map<string, Router[]>();
  for (const t of tables)
    for (const seg of t.segments) {
      const list = bySegment.get(seg) ?? [];
      list.push(t.router);
      bySegment.set(seg, list);
    }
  return (req, res, next) => {
    const path = req.path;
    const end = path.indexOf('/', 1);
    const routers = bySegment.get(end < 0 ? path.slice(1) : path.slice(1, end));
    if (!routers) {
      next();
      return;
    }
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== 'route' && err !== 'router') {
        next(err);
        return;
      }
      const r = routers[i++];
      if (r) r(req, res, step);
      else next();
    };
    step();
  };
}

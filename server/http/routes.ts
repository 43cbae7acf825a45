import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { AppContext } from '../context';
import { type AuthRule, requireAuth } from './auth';

/** A handler returns the JSON body to send, or undefined when it answered itself (204, files, streams). */
export type Handler = (req: Request, res: Response) => unknown;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A family's routes: each path declares the principal kinds it accepts (or null for public routes)
 * beside the handler, and is recorded so the route inventory can compare code with docs/api.md.
 */
export class RouteTable {
  readonly router = Router();
  readonly routes: { method: string; path: string }[] = [];

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

  private add(
    method: Method,
    path: string,
    auth: AuthRule | null,
    handler: Handler,
    before: RequestHandler[],
  ): this {
    this.routes.push({ method: method.toUpperCase(), path });
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

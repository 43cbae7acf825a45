import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import type { AppContext } from '../context';
import { JSON_MAX_DEPTH } from '../lib/limits';
import { authenticate } from './auth';
import { applyCors } from './cors';
import { endWhenDurable } from './durable';
import { apiErrorOf } from './error-handler';
import { errorBody, errors } from './errors';
import type { LeanRequest, LeanRoute, RouteTable } from './routes';

/** The request shape the lane takes: a JSON body in UTF-8, not compressed. Anything else goes to express. */
const PLAIN_JSON = /^application\/(?:[\w.-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
/** body-parser's strict mode: a JSON body must be an object or an array. */
const FIRST_CHAR = /^[ \t\n\r]*([^ \t\n\r])/;

/**
 * The lean lane: the routes declared with `RouteTable.postLean`/`getLean` (POST /message, GET /message)
 * served straight on node:http, in front of express. Express costs ~200 µs of CPU per request on Node 20
 * before a handler runs (measured with an empty handler): as much as the durable insert itself, which
 * halves throughput on the hottest path, and a sixth of a page of messages. The lane does what the
 * middleware chain in app.ts does for these routes (request activity, CORS headers, the JSON body with
 * its limit and errors, authentication, the handler, the answer after the journal fsync, the error body)
 * with the same functions, so both transports answer alike; test/api/lean-lane.test.ts holds them side
 * by side. Every other request, and a lean route's POST in another shape (form bodies, compressed or
 * non-UTF-8 bodies) or HEAD, goes to `fallback` (express).
 */
export function leanListener(
  ctx: AppContext,
  tables: readonly RouteTable[],
  fallback: RequestListener,
): RequestListener {
  const routes = new Map<string, LeanRoute>();
  const prefixes: LeanRoute[] = [];
  for (const t of tables)
    for (const r of t.leanRoutes) {
      if (r.prefix) prefixes.push(r);
      else routes.set(`${r.method} ${r.path}`, r);
    }
  const byPrefix = (method: string | undefined, path: string): LeanRoute | undefined => {
    for (const r of prefixes)
      if (r.method === method && path.length > r.path.length && path.startsWith(r.path)) return r;
    return undefined;
  };
  // Nothing thrown while dispatching may reach the process (issue 21): it answers this request instead.
  return (req, res) => {
    try {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const route =
        (routes.size === 0 ? undefined : routes.get(`${req.method} ${path}`)) ??
        (prefixes.length === 0 ? undefined : byPrefix(req.method, path));
      if (route && (route.method === 'GET' || isPlainJson(req)))
        serveLean(ctx, route, req, res, path, q < 0 ? '' : url.slice(q + 1));
      else fallback(req, res);
    } catch (err) {
      const path = (req.url ?? '').slice(0, 200);
      if (res.headersSent) {
        ctx.log.error('request failed after its answer started', { method: req.method, path, err });
        res.destroy();
      } else answerError(ctx, req, res, path, err);
    }
  };
}

function isPlainJson(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return (
    (encoding === undefined || encoding.toLowerCase() === 'identity') &&
    PLAIN_JSON.test(req.headers['content-type'] ?? '')
  );
}

function serveLean(
  ctx: AppContext,
  route: LeanRoute,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  search: string,
): void {
  ctx.activity.touch();
  if (route.headers) for (const [k, v] of Object.entries(route.headers)) res.setHeader(k, v);
  else applyCors(req, res, ctx.config.allowedOrigins);
  const handle = (err: unknown, text?: string, bytes?: Buffer) => {
    if (err) {
      answerError(ctx, req, res, path, err);
      return;
    }
    const lean: LeanRequest = {
      headers: req.headers,
      query: search === '' ? {} : parseQueryString(search),
      socket: req.socket,
      method: req.method,
      path,
      protocol: 'http',
      body: undefined,
    };
    let pending: Promise<unknown>;
    try {
      if (text !== undefined) {
        lean.body = parseJson(text);
        lean.rawBody = text;
        lean.rawBytes = bytes;
      }
      const auth = route.auth;
      pending =
        auth === null
          ? Promise.resolve().then(() => route.handler(lean))
          : authenticate(ctx, lean, auth).then((principal) => {
              lean.principal = principal;
              return route.handler(lean);
            });
    } catch (e) {
      pending = Promise.reject(e);
    }
    pending
      .then(
        (out) => answer(ctx, res, 200, out === undefined ? {} : out),
        (e: unknown) => answerError(ctx, req, res, path, e),
      )
      .catch((e: unknown) => {
        // Writing the answer itself failed (it cannot be serialised): nothing sensible is left to send.
        ctx.log.error('could not answer a request', { method: req.method, path, err: e });
        res.destroy();
      });
  };
  // A GET's body is not read (Node discards it). Express would parse one; no client sends one.
  if (route.method === 'GET') handle(null);
  else readBody(req, ctx.config.bodyLimitBytes, handle);
}

/** The body as text and bytes, within the limit (413 like body-parser: by Content-Length first, then by count). */
function readBody(
  req: IncomingMessage,
  limit: number,
  done: (err: unknown, text?: string, bytes?: Buffer) => void,
): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    done(errors.payloadTooLarge(limit));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  req.on('data', (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > limit) {
      settled = true;
      done(errors.payloadTooLarge(limit));
    } else chunks.push(chunk);
  });
  req.on('end', () => {
    if (settled) return;
    settled = true;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    done(null, bytes.toString('utf8'), bytes);
  });
  req.on('error', () => {
    if (settled) return;
    settled = true;
    done(errors.badRequest('request aborted'));
  });
}

/** body-parser's json() in strict mode: empty is {}, a BOM is dropped, only objects and arrays. */
function parseJson(text: string): unknown {
  if (text.length === 0) return {};
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const first = FIRST_CHAR.exec(body)?.[1];
  if (first !== '{' && first !== '[') throw errors.malformedJson();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw errors.malformedJson();
  }
  assertJsonDepth(value);
  return value;
}

/**
 * Refuses a parsed JSON body nested deeper than JSON_MAX_DEPTH (400), for both lanes (app.ts checks
 * express's bodies with it). JSON.parse copes with 100,000 levels but every recursive walk after it does
 * not: `extras` 10,000 levels deep overflowed the stack in JSON.stringify on insert (a 500, issue 21).
 * Iterative, so the check itself cannot overflow.
 */
export function assertJsonDepth(value: unknown, max = JSON_MAX_DEPTH): void {
  if (typeof value !== 'object' || value === null) return;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) throw errors.badRequest(`JSON body nested deeper than ${max} levels`);
    for (const child of Object.values(node))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}

function answerError(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  err: unknown,
): void {
  const e = apiErrorOf(err, ctx.config.bodyLimitBytes, ctx.log, req.method ?? '', path);
  answer(ctx, res, e.status, errorBody(e), e.headers);
}

/** Like express's res.json, after the fsync covering this request's writes (durable.ts). */
function answer(
  ctx: AppContext,
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  // One Buffer for the body: Node would otherwise prepend the head to a string body (a copy of the
  // whole page on the young heap) and then encode it again on write.
  const bytes = Buffer.from(JSON.stringify(payload));
  endWhenDurable(
    ctx.store,
    ctx.log,
    res,
    () => {
      if (res.destroyed) return;
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
      res.writeHead(status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': bytes.length,
      });
      res.end(bytes);
      ctx.activity.touch();
    },
    (body) => res.end(body),
  );
}

import { isUtf8 } from 'node:buffer';
import { parse as parseQueryString } from 'node:querystring';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { inWriteBatch } from '../../db/write-batch';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { type LeanRequest, RouteTable } from '../../http/routes';
import { idParam, isJson, parseBody } from '../../http/validate';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { pageRequest } from '../messages/routes';
import { presentEvent, presentRouter, presentRule } from './present';
import {
  changeRouter,
  changeRule,
  createRule,
  EVENT_BODY_BYTES,
  ensureRouter,
  getEvent,
  type IngestInput,
  ingest,
  listEvents,
  listRoutedMessages,
  listRulesOf,
  removeEvent,
  removeRoutedMessage,
  removeRule,
  requireUserLevel,
  rotateRouter,
  ruleFromEvent,
} from './service';
import { findRouterOfUser } from './store';

/** User-level class (§0.2): device token or unscoped API token (`read` for GET, `write` otherwise). */
const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

const routerBody = z.object({
  enabled: z.boolean().optional(),
  defaultAppid: z.number().int().positive().nullable().optional(),
});
const METHODS = ['GET', 'POST', 'PUT', 'PATCH'] as const;
const ruleBody = z
  .object({
    name: z.string().trim().min(1, 'required').max(200, 'at most 200 characters'),
    appid: z.number().int().positive(),
    pathPattern: z.string(),
    method: z.preprocess(
      (v) => (typeof v === 'string' ? v.toUpperCase() : v),
      z.enum(METHODS, { error: 'must be one of GET, POST, PUT, PATCH or null' }).nullable(),
    ),
    match: z.array(z.unknown()),
    title: z.string().max(1_000, 'at most 1000 characters'),
    message: z.string().max(10_000, 'at most 10000 characters').nullable(),
    priority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).nullable(),
    enabled: z.boolean(),
    position: z.number().int().min(1),
  })
  .partial();
const fromEventBody = z.object({ save: z.boolean().optional() });

const PREFIX = '/router/';
const CORS = { 'Access-Control-Allow-Origin': '*' };

function openCors(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.removeHeader('Access-Control-Allow-Credentials');
}

/** `/router/{token}/a/b` → the token and `/a/b` (`/` when nothing follows the token). */
function splitPath(path: string): { token: string; rest: string } {
  const after = path.slice(PREFIX.length);
  const slash = after.indexOf('/');
  if (slash < 0) return { token: after, rest: '/' };
  return { token: after.slice(0, slash), rest: after.slice(slash) || '/' };
}

type RouterRequest = Request & { rawBody?: Buffer; routerBody?: Buffer; routerSize?: number };

const FORM = /^application\/x-www-form-urlencoded\b/i;

/**
 * The body of an ingest request no parser read (forms, text, XML, anything not JSON): the bytes up to
 * the server's body limit (413 beyond it, as everywhere), decoded per Content-Encoding. Only the first
 * 64 KiB (+1 byte, to tell that there was more) are kept; the size tells ingest to refuse the event.
 */
function readRawBody(limit: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const r = req as RouterRequest;
    const declared = req.headers['content-length'];
    const hasBody =
      (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
    if (r.rawBody !== undefined || !hasBody || req.readableDidRead || req.readableEnded) {
      next();
      return;
    }
    if (declared !== undefined && Number(declared) > limit) {
      next(errors.payloadTooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      next(err);
    };
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) settle(errors.payloadTooLarge(limit));
      else if (!settled) chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      try {
        const raw = Buffer.concat(chunks, total);
        const decoded = decode(raw, String(req.headers['content-encoding'] ?? 'identity').toLowerCase());
        r.routerBody = decoded.subarray(0, EVENT_BODY_BYTES + 1);
        r.routerSize = decoded.length;
        settle();
      } catch (err) {
        settle(err);
      }
    });
    req.on('error', () => settle(errors.badRequest('request aborted')));
  };
}

/** Content-Encoding of a body no parser read; output capped just past 64 KiB (a larger body is refused anyway). */
function decode(raw: Buffer, encoding: string): Buffer {
  if (encoding === 'identity' || encoding === '') return raw;
  const opts = { maxOutputLength: EVENT_BODY_BYTES + 1 };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(raw, opts);
    if (encoding === 'deflate') return inflateSync(raw, opts);
    if (encoding === 'br') return brotliDecompressSync(raw, opts);
  } catch (err) {
    // Past the cap: larger than any body ingest keeps; report a size just past it.
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return Buffer.alloc(EVENT_BODY_BYTES + 1);
    throw errors.badRequest('request body does not match its Content-Encoding');
  }
  throw errors.unsupportedMediaType('unsupported body encoding');
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The JSON body to store: its bytes as received, without the BOM, when they are well-formed UTF-8 (the
 * text that was parsed is exactly their decoding, so nothing is encoded again); else the decoded text.
 */
function jsonBody(bytes: Buffer | undefined, text: string): string | Uint8Array {
  if (bytes === undefined || !isUtf8(bytes)) return stripBom(text);
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

/** What ingest needs of a request, from the lean lane (GET, or POST with a plain JSON body). */
function leanInput(req: LeanRequest, rest: string): IngestInput {
  const raw = req.rawBody;
  const base = { path: rest, method: req.method ?? 'GET', query: { ...req.query }, headers: req.headers };
  if (raw === undefined || raw === '')
    return { ...base, body: null, bodyKind: 'none', bodyText: null, size: 0 };
  const size = req.rawBytes?.length ?? Buffer.byteLength(raw);
  return { ...base, body: req.body, bodyKind: 'json', bodyText: jsonBody(req.rawBytes, raw), size };
}

/** The same from express: JSON parsed by app.ts (raw bytes on rawBody), anything else read above. */
function expressInput(req: RouterRequest, rest: string): IngestInput {
  const base = { path: rest, method: req.method, query: { ...req.query }, headers: req.headers };
  if (isJson(req) && req.rawBody !== undefined && req.rawBody.length > 0) {
    const text = req.rawBody.toString('utf8');
    return {
      ...base,
      body: req.body,
      bodyKind: 'json',
      bodyText: jsonBody(req.rawBody, text),
      size: req.rawBody.length,
    };
  }
  const bytes = req.routerBody;
  if (bytes === undefined || bytes.length === 0)
    return { ...base, body: null, bodyKind: 'none', bodyText: null, size: 0 };
  const size = req.routerSize ?? bytes.length;
  const text = bytes.toString('utf8');
  if (FORM.test(req.headers['content-type'] ?? '')) {
    const form = { ...parseQueryString(text) };
    return { ...base, body: form, bodyKind: 'json', bodyText: JSON.stringify(form), size };
  }
  return { ...base, body: text, bodyKind: 'text', bodyText: text, size };
}

export function routerRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'router');

  // Public ingest (§11): the R token in the URL is the only credential; headers are never read as one.
  // GET and POST with a plain JSON body skip express (lean.ts); PUT, PATCH, forms, text and compressed
  // bodies take the express routes below, which end in the same ingest().
  t.leanPrefix(
    PREFIX,
    (req) => {
      const { token, rest } = splitPath(req.path);
      return inWriteBatch(ctx.db, () => ingest(ctx, token, leanInput(req, rest)));
    },
    CORS,
  );
  const handle = (req: Request, res: Response) => {
    openCors(res);
    if (req.method === 'HEAD') throw errors.routeNotFound('HEAD', req.path);
    const { token, rest } = splitPath(req.path);
    return inWriteBatch(ctx.db, () => ingest(ctx, token, expressInput(req as RouterRequest, rest)));
  };
  const reader = readRawBody(ctx.config.bodyLimitBytes);
  for (const path of ['/router/:token', '/router/:token/*path']) {
    t.get(path, null, handle);
    t.post(path, null, handle, reader);
    t.put(path, null, handle, reader);
    t.patch(path, null, handle, reader);
    t.options(path, (_req, res) => {
      openCors(res);
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
      res.status(204).end();
    });
  }

  // Management: the per-user singleton.
  t.get('/webhook-router', READ_RULE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    // The first GET creates the router (§11) — a write a read-only API token may not make: until a device
    // or a write token has created it, such a token finds no router.
    if (p.kind === 'api' && p.access !== 'write') {
      const row = findRouterOfUser(ctx.db, p.userId);
      if (!row) throw errors.notFound('router');
      return presentRouter(ctx, row);
    }
    const { row, token } = ensureRouter(ctx, p.userId);
    return presentRouter(ctx, row, token);
  });
  t.put('/webhook-router', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    const { row, token } = changeRouter(ctx, p, parseBody(req, routerBody));
    return presentRouter(ctx, row, token);
  });
  t.post('/webhook-router/rotate-token', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    const { row, token } = rotateRouter(ctx, p);
    return presentRouter(ctx, row, token);
  });

  // Rules.
  t.get('/webhook-router/rule', READ_RULE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    return listRulesOf(ctx, p).map(presentRule);
  });
  t.post('/webhook-router/rule', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    return presentRule(createRule(ctx, p, parseBody(req, ruleBody)));
  });
  t.put('/webhook-router/rule/:rid', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    const id = idParam(req, 'rid');
    return presentRule(changeRule(ctx, p, id, parseBody(req, ruleBody)));
  });
  t.delete('/webhook-router/rule/:rid', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    removeRule(ctx, p, idParam(req, 'rid'));
    return {};
  });
  t.post('/webhook-router/rule/from-event/:eid', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    const id = idParam(req, 'eid');
    return ruleFromEvent(ctx, p, id, parseBody(req, fromEventBody).save ?? false);
  });

  // Events and the messages they made.
  t.get('/webhook-router/event', READ_RULE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    return listEvents(ctx, p, pageRequest(req));
  });
  t.get('/webhook-router/event/:eid', READ_RULE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    return presentEvent(getEvent(ctx, p, idParam(req, 'eid')));
  });
  t.delete('/webhook-router/event/:eid', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    removeEvent(ctx, p, idParam(req, 'eid'));
    return {};
  });
  t.get('/webhook-router/message', READ_RULE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    return listRoutedMessages(ctx, p, pageRequest(req));
  });
  t.delete('/webhook-router/message/:mid', WRITE, (req) => {
    const p = principalOf(req);
    requireUserLevel(p);
    removeRoutedMessage(ctx, p, idParam(req, 'mid'));
    return {};
  });
  return t;
}

import express, { type Request, type Response } from 'express';
import multer from 'multer';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK, TOK_BASIC } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { withCatalogErrors } from '../../http/upload';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { analyze, savedAnalysis } from './analysis';
import { admit, BATCH_MAX_BYTES, ingestBatch, loadSnippet, ping } from './ingest';
import { listMaps, removeMap, SOURCE_MAP_MAX_BYTES, uploadMap } from './maps';
import { presentScript } from './present';
import {
  breadcrumbs,
  changeScript,
  createScript,
  errorSeries,
  flushStats,
  issueCount,
  listIssues,
  listScripts,
  markIssue,
  ORIGINS_MAX,
  ownScript,
  removeIssue,
  removeScript,
  rotateToken,
  series,
} from './service';

/** `scheme://host[:port]` as a browser sends it in `Origin`, or `*`. */
const origin = z
  .string()
  .trim()
  .transform((v) => v.toLowerCase())
  .refine((v) => {
    if (v === '*') return true;
    try {
      const u = new URL(v);
      return u.origin === v && u.origin !== 'null';
    } catch {
      return false;
    }
  }, 'must be scheme://host[:port] or *');
const fields = {
  appid: z.number().int().positive(),
  name: z.string().trim().min(1, 'required').max(200),
  paused: z.boolean(),
  allowedOrigins: z.array(origin).max(ORIGINS_MAX),
  priority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX),
};
const createBody = z.object({
  ...z.object(fields).partial().shape,
  appid: fields.appid,
  name: fields.name,
});
const updateBody = z.object(fields).partial();
const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });
const issuesQuery = z.object({ status: z.enum(['unresolved', 'resolved', 'ignored', 'all']).optional() });
const rangeQuery = z.object({
  bucket: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
});
const analyzeBody = z.object({ lang: z.enum(['en', 'ru']).optional(), force: z.boolean().optional() });

const WRITE = { ...TOK, access: 'write' } as const;
const UPLOAD = { ...TOK_BASIC, access: 'write' } as const;

/** CORS of the public endpoints (§9.1): the allowed origin echoed, never with credentials. */
function allowOrigin(req: Request, res: Response): void {
  res.removeHeader('Access-Control-Allow-Credentials');
  const o = req.headers.origin;
  if (o === undefined) {
    res.removeHeader('Access-Control-Allow-Origin');
    return;
  }
  res.setHeader('Access-Control-Allow-Origin', o);
  res.setHeader('Vary', 'Origin');
}

/** A refused or unknown request carries no CORS header at all. */
function noCors(res: Response): void {
  for (const h of ['Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Vary'])
    res.removeHeader(h);
}

function publicAdmit(ctx: AppContext, req: Request, res: Response) {
  try {
    const row = admit(ctx, String(req.params.token), req.headers.origin);
    allowOrigin(req, res);
    return row;
  } catch (err) {
    noCors(res);
    throw err;
  }
}

/** A POST without a body (no bytes at all, or only whitespace) is a ping. */
function bodyless(req: Request): boolean {
  if (req.headers['transfer-encoding'] === undefined && Number(req.headers['content-length'] ?? 0) === 0)
    return true;
  return typeof req.body === 'string' && req.body.trim() === '';
}

export function webScriptRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'web-scripts');

  // ---------------------------------------------------------------- public (§9.1)
  t.get('/script/:token', null, (req, res) => {
    const row = publicAdmit(ctx, req, res);
    const js = loadSnippet(ctx, row, String(req.params.token));
    res.status(200);
    res.setHeader('Content-Type', 'application/javascript; charset=utf-8');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.send(js);
    return undefined;
  });
  // JSON whatever the content type: the snippet sends text/plain (no preflight). application/json was
  // parsed by app.ts already (its size is checked here); anything else arrives as text.
  const text = express.text({ type: () => true, limit: BATCH_MAX_BYTES });
  t.post(
    '/script/:token',
    null,
    async (req: Request, res: Response) => {
      const row = publicAdmit(ctx, req, res);
      if (bodyless(req)) return ping(ctx, row);
      if (Number(req.headers['content-length'] ?? 0) > BATCH_MAX_BYTES)
        throw errors.payloadTooLarge(BATCH_MAX_BYTES);
      let body: unknown = req.body;
      if (typeof body === 'string') {
        try {
          body = JSON.parse(body);
        } catch {
          throw errors.malformedJson();
        }
      } else if (Buffer.isBuffer(body)) throw errors.malformedJson();
      return ingestBatch(ctx, row, body);
    },
    (_req, res, next) => {
      // Size and parse errors of the body come before the token is known: they carry no CORS header.
      noCors(res);
      next();
    },
    text,
  );
  t.options('/script/:token', (req, res, next) => {
    try {
      publicAdmit(ctx, req, res);
    } catch (err) {
      next(err);
      return;
    }
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
  });

  // ---------------------------------------------------------------- records
  t.get('/web-script', TOK, (req) =>
    listScripts(ctx, principalOf(req), parseQuery(req, listQuery).appid).map((r) => presentScript(ctx, r)),
  );
  t.post('/web-script', WRITE, (req) => {
    const { row, token } = createScript(ctx, principalOf(req), parseBody(req, createBody));
    return presentScript(ctx, row, token);
  });
  t.get('/web-script/:id', TOK, (req) => presentScript(ctx, ownScript(ctx, principalOf(req), idParam(req))));
  t.put('/web-script/:id', WRITE, (req) =>
    presentScript(ctx, changeScript(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  t.delete('/web-script/:id', WRITE, (req) => {
    removeScript(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.post('/web-script/:id/rotate', WRITE, (req) => {
    const { row, token } = rotateToken(ctx, principalOf(req), idParam(req));
    return presentScript(ctx, row, token);
  });

  // ---------------------------------------------------------------- source maps (§9.3)
  const upload = withCatalogErrors(
    multer({
      storage: multer.memoryStorage(),
      limits: { fileSize: SOURCE_MAP_MAX_BYTES, files: 1, fields: 10 },
    }).single('file'),
    (code) =>
      code === 'LIMIT_FILE_SIZE'
        ? errors.notASourceMap(`: larger than ${SOURCE_MAP_MAX_BYTES} bytes`)
        : errors.badRequest('invalid multipart body: one file field named file, and url, release'),
  );
  t.get('/web-script/:id/sourcemaps', TOK, (req) => listMaps(ctx, principalOf(req), idParam(req)));
  t.post(
    '/web-script/:id/sourcemaps',
    UPLOAD,
    (req) => {
      const p = principalOf(req);
      const id = idParam(req);
      ownScript(ctx, p, id);
      if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data'))
        throw errors.unsupportedMediaType('send multipart/form-data with a file field named file and url');
      const file = (req as Request & { file?: { buffer: Buffer } }).file;
      return uploadMap(ctx, p, id, file, (req.body ?? {}) as Record<string, unknown>);
    },
    (req, res, next) => {
      if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data'))
        upload(req, res, next);
      else next();
    },
  );
  t.delete('/web-script/:id/sourcemaps/:smid', WRITE, (req) => {
    removeMap(ctx, principalOf(req), idParam(req), idParam(req, 'smid'));
    return {};
  });

  // ---------------------------------------------------------------- issues (§9.2)
  t.get('/web-script/:id/issues', TOK, (req) =>
    listIssues(ctx, principalOf(req), idParam(req), parseQuery(req, issuesQuery).status ?? 'unresolved'),
  );
  t.get('/web-script/:id/issue-count', TOK, (req) => issueCount(ctx, principalOf(req), idParam(req)));
  t.post('/web-script/:id/issues/:iid/resolve', WRITE, (req) =>
    markIssue(ctx, principalOf(req), idParam(req), idParam(req, 'iid'), 'resolved'),
  );
  t.post('/web-script/:id/issues/:iid/ignore', WRITE, (req) =>
    markIssue(ctx, principalOf(req), idParam(req), idParam(req, 'iid'), 'ignored'),
  );
  t.delete('/web-script/:id/issues/:iid', WRITE, (req) => {
    removeIssue(ctx, principalOf(req), idParam(req), idParam(req, 'iid'));
    return {};
  });
  t.get('/web-script/:id/issues/:iid/breadcrumbs', TOK, (req) =>
    breadcrumbs(ctx, principalOf(req), idParam(req), idParam(req, 'iid')),
  );
  t.post('/web-script/:id/issues/:iid/analyze', WRITE, (req) =>
    analyze(ctx, principalOf(req), idParam(req), idParam(req, 'iid'), parseBody(req, analyzeBody)),
  );
  t.get('/web-script/:id/issues/:iid/analysis', TOK, (req, res) => {
    const a = savedAnalysis(ctx, principalOf(req), idParam(req), idParam(req, 'iid'));
    if (a) return a;
    res.status(204).end();
    return undefined;
  });
  t.get('/web-script/:id/series', TOK, (req) =>
    series(ctx, principalOf(req), idParam(req), parseQuery(req, rangeQuery)),
  );
  t.get('/web-script/:id/error-series', TOK, (req) =>
    errorSeries(ctx, principalOf(req), idParam(req), parseQuery(req, rangeQuery)),
  );
  t.get('/web-script/:id/flush-stats', TOK, (req) =>
    flushStats(ctx, principalOf(req), idParam(req), parseQuery(req, rangeQuery)),
  );
  return t;
}

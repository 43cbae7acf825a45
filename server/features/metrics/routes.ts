import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { changeAlert, createAlert, getAlert, listAlerts, presentAlert, removeAlert } from './alerts';
import { type IngestBody, ingest } from './ingest';
import {
  ALERT_FOR_MAX_SEC,
  ALERT_MESSAGE_MAX_CHARS,
  DESCRIPTION_MAX_CHARS,
  NAME_RE,
  TAG_KEY_MAX_CHARS,
  TAG_KEY_RE,
  TAG_VALUE_MAX_CHARS,
  TAGS_PER_POINT,
  UNIT_MAX_CHARS,
} from './points';
import { presentSource } from './present';
import {
  changeMetric,
  changeSource,
  createSource,
  listMetrics,
  listSources,
  ownSource,
  readSeries,
  removeMetric,
  removeSource,
  rotateToken,
} from './service';

const sourceFields = {
  appid: z.number().int().positive(),
  name: z.string().trim().min(1, 'required').max(200),
  paused: z.boolean(),
};
const createSourceBody = z.object({
  appid: sourceFields.appid,
  name: sourceFields.name,
  paused: sourceFields.paused.optional(),
});
const updateSourceBody = z.object(sourceFields).partial();
const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });
const metricBody = z.object({
  unit: z.string().max(UNIT_MAX_CHARS).optional(),
  description: z.string().max(DESCRIPTION_MAX_CHARS).optional(),
});
const seriesQuery = z.object({
  bucket: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
});
const tags = z
  .record(
    z.string().regex(TAG_KEY_RE, 'tag names are letters, digits, _ . -').max(TAG_KEY_MAX_CHARS),
    z.string().max(TAG_VALUE_MAX_CHARS),
  )
  .refine((t) => Object.keys(t).length <= TAGS_PER_POINT, `at most ${TAGS_PER_POINT} tags`);
const alertFields = {
  metric: z.string().regex(NAME_RE, 'must match ^[a-zA-Z_:][a-zA-Z0-9_:.-]{0,127}$'),
  tags,
  condition: z.enum(['above', 'below', 'absent']),
  threshold: z.number().finite().nullable(),
  forSec: z.number().int().min(0).max(ALERT_FOR_MAX_SEC),
  priority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX),
  message: z.string().max(ALERT_MESSAGE_MAX_CHARS),
  enabled: z.boolean(),
};
const createAlertBody = z.object({
  ...z.object(alertFields).partial().shape,
  metric: alertFields.metric,
  condition: alertFields.condition,
});
const updateAlertBody = z.object(alertFields).partial();

const WRITE = { ...TOK, access: 'write' } as const;
const INGEST_PREFIX = '/metric/';
const OPEN_CORS = { 'Access-Control-Allow-Origin': '*' };

/** Public ingest: any page may post and read the answer; no credentials are involved. */
function openCors(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.removeHeader('Access-Control-Allow-Credentials');
}

/** The body of an ingest request as the service takes it: JSON (parsed by app.ts) or Prometheus text. */
function ingestBodyOf(contentType: string | undefined, body: unknown): IngestBody {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/plain') return { kind: 'text', text: typeof body === 'string' ? body : '' };
  if (type === 'application/json' || type.endsWith('+json')) return { kind: 'json', body };
  throw errors.unsupportedMediaType('send application/json or text/plain (Prometheus text format 0.0.4)');
}

export function metricRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'metrics');

  // Public ingest (§8.1): the M token in the URL is the only credential. Plain JSON takes the lean lane;
  // Prometheus text (and JSON in other shapes) comes through express with a text parser.
  t.leanPrefix(
    INGEST_PREFIX,
    (req) => {
      const token = req.path.slice(INGEST_PREFIX.length);
      if (req.method !== 'POST' || token === '' || token.includes('/'))
        throw errors.routeNotFound(req.method ?? 'GET', req.path);
      return ingest(ctx, token, { kind: 'json', body: req.body });
    },
    OPEN_CORS,
  );
  const text = express.text({ type: 'text/plain', limit: ctx.config.bodyLimitBytes });
  t.post(
    '/metric/:token',
    null,
    (req: Request, res: Response) => {
      openCors(res);
      return ingest(ctx, String(req.params.token), ingestBodyOf(req.headers['content-type'], req.body));
    },
    (_req, res, next) => {
      openCors(res);
      next();
    },
    text,
  );
  t.options('/metric/:token', (_req, res) => {
    openCors(res);
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.status(204).end();
  });

  t.get('/metric-source', TOK, (req) =>
    listSources(ctx, principalOf(req), parseQuery(req, listQuery).appid).map((r) => presentSource(ctx, r)),
  );
  t.post('/metric-source', WRITE, (req) => {
    const { row, token } = createSource(ctx, principalOf(req), parseBody(req, createSourceBody));
    return presentSource(ctx, row, token);
  });
  t.get('/metric-source/:id', TOK, (req) =>
    presentSource(ctx, ownSource(ctx, principalOf(req), idParam(req))),
  );
  t.put('/metric-source/:id', WRITE, (req) =>
    presentSource(ctx, changeSource(ctx, principalOf(req), idParam(req), parseBody(req, updateSourceBody))),
  );
  t.delete('/metric-source/:id', WRITE, (req) => {
    removeSource(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.post('/metric-source/:id/rotate', WRITE, (req) => {
    const { row, token } = rotateToken(ctx, principalOf(req), idParam(req));
    return presentSource(ctx, row, token);
  });

  t.get('/metric-source/:id/metrics', TOK, (req) => listMetrics(ctx, principalOf(req), idParam(req)));
  t.patch('/metric-source/:id/metrics/:mid', WRITE, (req) =>
    changeMetric(ctx, principalOf(req), idParam(req), idParam(req, 'mid'), parseBody(req, metricBody)),
  );
  t.delete('/metric-source/:id/metrics/:mid', WRITE, (req) => {
    removeMetric(ctx, principalOf(req), idParam(req), idParam(req, 'mid'));
    return {};
  });
  // The answer is the JSON text readSeries builds (a 1,440-bucket answer is ~160 kB), sent as a string:
  // express's res.json would measure and copy it into a Buffer first.
  t.get('/metric-source/:id/metrics/:mid/series', TOK, (req, res) => {
    const q = parseQuery(req, seriesQuery);
    const { text, bytes } = readSeries(ctx, principalOf(req), idParam(req), idParam(req, 'mid'), q);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', bytes);
    res.end(text);
  });

  t.get('/metric-source/:id/alerts', TOK, (req) =>
    listAlerts(ctx, principalOf(req), idParam(req)).map(presentAlert),
  );
  t.post('/metric-source/:id/alerts', WRITE, (req) =>
    presentAlert(createAlert(ctx, principalOf(req), idParam(req), parseBody(req, createAlertBody))),
  );
  t.get('/metric-source/:id/alerts/:aid', TOK, (req) =>
    presentAlert(getAlert(ctx, principalOf(req), idParam(req), idParam(req, 'aid'))),
  );
  t.put('/metric-source/:id/alerts/:aid', WRITE, (req) =>
    presentAlert(
      changeAlert(ctx, principalOf(req), idParam(req), idParam(req, 'aid'), parseBody(req, updateAlertBody)),
    ),
  );
  t.delete('/metric-source/:id/alerts/:aid', WRITE, (req) => {
    removeAlert(ctx, principalOf(req), idParam(req), idParam(req, 'aid'));
    return {};
  });
  return t;
}

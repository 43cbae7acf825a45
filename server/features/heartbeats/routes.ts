import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import {
  HEARTBEAT_FAIL_REASON_CHARS,
  HEARTBEAT_PING_BODY_BYTES,
  MESSAGE_MAX_CHARS,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../lib/limits';
import { presentHeartbeat } from './present';
import {
  createHeartbeat,
  getHeartbeat,
  listHeartbeats,
  type PingInput,
  type PingKind,
  pauseHeartbeat,
  ping,
  removeHeartbeat,
  resumeHeartbeat,
  rotateToken,
  testMessage,
  updateHeartbeat,
} from './service';

const MAX_SEC = 31_536_000;
const fields = {
  appid: z.number().int().positive(),
  name: z.string().trim().min(1, 'required').max(200),
  paused: z.boolean(),
  intervalSec: z.number().int().min(1).max(MAX_SEC).nullable(),
  schedule: z.string().trim().min(1, 'invalid cron expression').max(200).nullable(),
  timezone: z.string().min(1).max(100),
  graceSec: z.number().int().min(0).max(MAX_SEC),
  alertMessage: z.string().max(Math.min(1_000, MESSAGE_MAX_CHARS)),
  manualResume: z.boolean(),
  priority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX),
};
const createBody = z.object({ ...z.object(fields).partial().shape, appid: fields.appid, name: fields.name });
const updateBody = z.object(fields).partial();
const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });

const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

/** Pings come from anywhere (cron jobs, browsers): any origin may call and read; no credentials. */
function openCors(res: Response): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.removeHeader('Access-Control-Allow-Credentials');
  res.setHeader('Ping-Body-Limit', String(HEARTBEAT_PING_BODY_BYTES));
}

type PingRequest = Request & { rawBody?: Buffer; pingBody?: Buffer };

/**
 * The body of a ping that no parser read (text/plain, a shell's `--data-binary @log`): its first
 * HEARTBEAT_PING_BODY_BYTES are kept for the ping log, the rest is drained (413 beyond the body limit).
 * JSON and form bodies were parsed by app.ts, which keeps their raw bytes in `rawBody`.
 */
function readPingBody(limit: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    openCors(res);
    const r = req as PingRequest;
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
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let total = 0;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      next(err);
    };
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        settle(errors.payloadTooLarge(limit));
        return;
      }
      if (keptBytes < HEARTBEAT_PING_BODY_BYTES) {
        const part = chunk.subarray(0, HEARTBEAT_PING_BODY_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    });
    req.on('end', () => {
      r.pingBody = Buffer.concat(kept, keptBytes);
      settle();
    });
    req.on('error', () => settle(errors.badRequest('request aborted')));
  };
}

/** What a ping request carries, from either lane (express or lean.ts). */
interface PingParts {
  method: string;
  path: string;
  action: string | undefined;
  body: unknown;
  query: Record<string, unknown>;
  raw: Buffer | string | undefined;
}

function failReasonOf(r: PingParts): string | undefined {
  let raw: unknown;
  const body = r.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'fail_reason' in body)
    raw = (body as Record<string, unknown>).fail_reason;
  if (raw === undefined || raw === '') raw = r.query.fail_reason;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw errors.badRequest('fail_reason: must be a string');
  return raw.length > HEARTBEAT_FAIL_REASON_CHARS ? raw.slice(0, HEARTBEAT_FAIL_REASON_CHARS) : raw;
}

/** `/{token}`, `/{token}/start|fail|log|{exitCode}` → what the ping means (§1.3). */
function pingInputOf(r: PingParts): PingInput {
  const action = r.action === '' ? undefined : r.action;
  let kind: PingKind = 'success';
  let exitCode: number | undefined;
  if (action === 'start' || action === 'fail' || action === 'log') kind = action;
  else if (action !== undefined) {
    if (!/^[+-]?\d{1,12}$/.test(action)) throw errors.routeNotFound(r.method, r.path);
    exitCode = Number(action);
    if (exitCode < 0 || exitCode > 255) throw errors.badRequest('exit status must be 0-255');
  }
  const input: PingInput = { kind };
  if (exitCode !== undefined) input.exitCode = exitCode;
  const reason = failReasonOf(r);
  if (reason !== undefined) input.reason = reason;
  if (r.raw !== undefined && r.raw.length > 0) {
    const bytes = typeof r.raw === 'string' ? Buffer.from(r.raw, 'utf8') : r.raw;
    input.body = bytes.subarray(0, HEARTBEAT_PING_BODY_BYTES).toString('utf8');
  }
  return input;
}

const PING_PREFIX = '/heartbeat/ping/';

export function heartbeatRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'heartbeats');

  // The ping endpoint (§1.3): public, the H token in the URL is the only credential.
  const handlePing = (req: Request, res: Response) => {
    openCors(res);
    const r = req as PingRequest;
    const action = req.params.action === undefined ? undefined : String(req.params.action);
    const input = pingInputOf({
      method: req.method,
      path: req.path,
      action,
      body: req.body,
      query: req.query as Record<string, unknown>,
      raw: r.rawBody ?? r.pingBody,
    });
    return ping(ctx, String(req.params.token), input);
  };
  // The common shapes (GET, POST with a JSON body) skip express (lean.ts): a ping is a small write that
  // should cost no more than a message. HEAD, forms and other bodies take the express routes below.
  t.leanPrefix(
    PING_PREFIX,
    (req) => {
      const [token = '', action, ...more] = req.path.slice(PING_PREFIX.length).split('/');
      if (token === '' || more.length > 1 || (more.length === 1 && more[0] !== ''))
        throw errors.routeNotFound(req.method ?? 'GET', req.path);
      const input = pingInputOf({
        method: req.method ?? 'GET',
        path: req.path,
        action,
        body: req.body,
        query: req.query as Record<string, unknown>,
        raw: req.rawBody,
      });
      return ping(ctx, token, input);
    },
    {
      'Access-Control-Allow-Origin': '*',
      'Ping-Body-Limit': String(HEARTBEAT_PING_BODY_BYTES),
    },
  );
  const bodyReader = readPingBody(ctx.config.bodyLimitBytes);
  for (const path of ['/heartbeat/ping/:token', '/heartbeat/ping/:token/:action']) {
    t.get(path, null, handlePing, bodyReader);
    t.post(path, null, handlePing, bodyReader);
    t.options(path, (_req, res) => {
      openCors(res);
      res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
      res.status(204).end();
    });
  }

  t.get('/heartbeat', READ_RULE, (req) =>
    listHeartbeats(ctx, principalOf(req), parseQuery(req, listQuery).appid).map((r) =>
      presentHeartbeat(ctx, r),
    ),
  );
  t.post('/heartbeat', WRITE, (req) => {
    const { row, token } = createHeartbeat(ctx, principalOf(req), parseBody(req, createBody));
    return presentHeartbeat(ctx, row, token);
  });
  t.get('/heartbeat/:id', READ_RULE, (req) =>
    presentHeartbeat(ctx, getHeartbeat(ctx, principalOf(req), idParam(req))),
  );
  t.put('/heartbeat/:id', WRITE, (req) =>
    presentHeartbeat(ctx, updateHeartbeat(ctx, principalOf(req), idParam(req), parseBody(req, updateBody))),
  );
  t.delete('/heartbeat/:id', WRITE, (req) => {
    removeHeartbeat(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.post('/heartbeat/:id/pause', WRITE, (req) =>
    presentHeartbeat(ctx, pauseHeartbeat(ctx, principalOf(req), idParam(req))),
  );
  t.post('/heartbeat/:id/resume', WRITE, (req) =>
    presentHeartbeat(ctx, resumeHeartbeat(ctx, principalOf(req), idParam(req))),
  );
  t.post('/heartbeat/:id/rotate', WRITE, (req) => {
    const { row, token } = rotateToken(ctx, principalOf(req), idParam(req));
    return presentHeartbeat(ctx, row, token);
  });
  t.post('/heartbeat/:id/test-alert', WRITE, (req) =>
    testMessage(ctx, principalOf(req), idParam(req), 'alert'),
  );
  t.post('/heartbeat/:id/test-recovery', WRITE, (req) =>
    testMessage(ctx, principalOf(req), idParam(req), 'recovery'),
  );
  return t;
}

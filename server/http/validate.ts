import type { Request } from 'express';
import type { z } from 'zod';
import { errors } from './errors';

/** Validation at the edge: a readable 400 naming the field, never the schema library's internals. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : where;
  throw errors.badRequest(`${field}: ${issue.message}`);
}

export function parseBody<S extends z.ZodType>(req: { body?: unknown }, schema: S): z.output<S> {
  return parse(schema, req.body ?? {}, 'body');
}

export function parseQuery<S extends z.ZodType>(req: { query: unknown }, schema: S): z.output<S> {
  return parse(schema, req.query, 'query');
}

/** A positive integer path parameter. Anything else cannot name a resource: 404, like a missing one. */
export function idParam(req: Request, name = 'id'): number {
  const raw = req.params[name];
  const n = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw errors.notFound();
  return n;
}

/** `recursive=1|true` flag of the spec. */
export function recursiveFlag(req: Request): boolean {
  const v = req.query.recursive;
  return v === '1' || v === 'true';
}

/** True when the request carries a JSON body (content type application/json or +json). */
export function isJson(req: { headers: { 'content-type'?: string | undefined } }): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(req.headers['content-type'] ?? '');
}

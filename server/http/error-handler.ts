import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../lib/log';
import { ApiError, errorBody, errors } from './errors';

/** The only writer of error bodies. Unknown errors become a generic 500, logged with context. */
export function errorHandler(log: Logger, bodyLimit: number): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = apiErrorOf(err, bodyLimit, log, req.method, req.path);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    res.status(e.status).json(errorBody(e));
  };
}

/** The error a client is shown for `err`: its own ApiError, a mapped body-parser error, or a logged 500. */
export function apiErrorOf(
  err: unknown,
  bodyLimit: number,
  log: Logger,
  method: string,
  path: string,
): ApiError {
  const apiError = toApiError(err, bodyLimit);
  if (apiError) return apiError;
  log.error('unhandled error', { method, path, err });
  return errors.internal();
}

function toApiError(err: unknown, bodyLimit: number): ApiError | null {
  if (err instanceof ApiError) return err;
  if (typeof err === 'object' && err !== null && 'type' in err) {
    // body-parser's errors carry a `type`; map the client's faults, never expose their text.
    const type = (err as { type: unknown }).type;
    if (type === 'entity.parse.failed') return errors.malformedJson();
    if (type === 'entity.too.large') return errors.payloadTooLarge(bodyLimit);
    if (type === 'encoding.unsupported' || type === 'charset.unsupported')
      return errors.unsupportedMediaType('unsupported body encoding');
    if (type === 'request.aborted') return errors.badRequest('request aborted');
  }
  // A body that does not decode as its Content-Encoding says (gzip header over plain bytes, a truncated
  // stream): body-parser passes zlib's error on as a 400 without a type (a 500 before, issue 21).
  if (isZlibError(err)) return errors.badRequest('request body does not match its Content-Encoding');
  return null;
}

function isZlibError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(?:Z_|ERR__|ERR_BROTLI|ERR_ZSTD)/.test(code);
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(errors.routeNotFound(req.method, req.path));
};

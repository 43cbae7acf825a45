import type { RequestHandler, Response } from 'express';
import type { StoreHandle } from '../context';
import type { Logger } from '../lib/log';
import { errorBody, errors } from './errors';

/**
 * A response leaves only after the journal fsync that covers every write committed before it
 * (architecture.md, "Store"): an acknowledged write survives a crash, and nobody is shown data
 * that a crash could take back. When nothing is pending this costs nothing.
 */
export function durableResponses(store: StoreHandle, log: Logger): RequestHandler {
  return (_req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (!store.hasUnsynced()) return end(...args);
      store.sync().then(
        () => end(...args),
        (err: unknown) => {
          log.error('journal sync failed; answering 503', { err });
          if (res.headersSent) {
            res.destroy();
            return;
          }
          const body = JSON.stringify(
            errorBody(errors.unavailable('the database could not save this change')),
          );
          res.statusCode = 503;
          res.removeHeader('ETag');
          res.setHeader('Content-Type', 'application/json; charset=utf-8');
          res.setHeader('Content-Length', Buffer.byteLength(body));
          end(body);
        },
      );
      return res;
    }) as Response['end'];
    next();
  };
}

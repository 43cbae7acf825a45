import type { ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { StoreHandle } from '../context';
import type { Logger } from '../lib/log';
import { errorBody, errors } from './errors';

/**
 * A response leaves only after the journal fsync that covers every write committed before it
 * (docs/operations.md, "Data directory and durability"): an acknowledged write survives a crash, and nobody is shown data
 * that a crash could take back. When nothing is pending this costs nothing.
 */
export function durableResponses(store: StoreHandle, log: Logger): RequestHandler {
  return (req, res, next) => {
    // /health reads nothing a crash could take back, and must answer its own body while the journal fails.
    if (req.method === 'GET' && req.path === '/health') return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      endWhenDurable(store, log, res, () => end(...args), end);
      return res;
    }) as Response['end'];
    next();
  };
}

/**
 * Calls `finish` once the journal covers every committed write (at once when nothing is pending). When
 * the fsync fails the client gets a 503 instead, written with `end` (the response's own end).
 */
export function endWhenDurable(
  store: StoreHandle,
  log: Logger,
  res: ServerResponse,
  finish: () => void,
  end: (body: string) => unknown,
): void {
  if (!store.hasUnsynced()) {
    finish();
    return;
  }
  store.sync().then(finish, (err: unknown) => {
    log.error('journal sync failed; answering 503', { err });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = JSON.stringify(errorBody(errors.unavailable('the database could not save this change')));
    res.statusCode = 503;
    res.removeHeader('ETag');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    end(body);
  });
}

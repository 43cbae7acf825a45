import type { Logger } from './log';

/**
 * The process-level safety net (issue 21): an exception or rejection that escaped every request guard
 * is logged at error level and the process keeps serving, so one bad request can never stop Belfry (and
 * never pops Electron's error dialog). Request paths have their own guards (http/lean.ts, realtime/ws.ts);
 * reaching this handler is a bug to fix. Returns a function that removes the handlers again.
 */
export function installLastResortHandlers(log: Logger): () => void {
  const onException = (err: Error, origin: string) => {
    log.error('uncaught exception; kept running', { origin, err });
  };
  const onRejection = (reason: unknown) => {
    log.error('unhandled promise rejection; kept running', { err: reason });
  };
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

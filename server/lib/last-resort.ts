import type { Logger } from './log';

/**
 * The process's last line of defence: an exception or rejection that nothing caught is logged at error
 * level and the process keeps serving, so one bad request can never stop it (and Electron shows no
 * error dialog for it). Returns a function that removes the handlers again.
 */
export function installLastResortHandlers(log: Logger): () => void {
  const onException = (err: unknown) => log.error('uncaught exception (kept running)', { err });
  const onRejection = (reason: unknown) =>
    log.error('unhandled promise rejection (kept running)', { err: reason });
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

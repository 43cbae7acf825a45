import type { AppContext } from '../context';
import { buildInfo } from '../lib/version';
import type { Job } from './scheduler';

/** A self-ping that has not answered by then is abandoned (and counts as a failure). */
export const SELF_PING_TIMEOUT_MS = 10_000;

/**
 * Watch the watcher: GET BELFRY_SELF_PING_URL every BELFRY_SELF_PING_INTERVAL_S, so that an outside
 * dead-man switch (a hosted Healthchecks-style check) alerts when Belfry stops, e.g. the laptop is closed.
 * A failure is logged once per streak (warn) and retried at the next interval; nothing waits for the
 * request (the scheduler skips the job while one is in flight, and stop() aborts it).
 * Only the URL's origin is logged: the path of such a check is its secret.
 */
export function selfPingJob(ctx: AppContext): Job | null {
  const url = ctx.config.selfPingUrl;
  if (!url) return null;
  const origin = new URL(url).origin;
  const userAgent = `Belfry/${buildInfo(ctx.config).version}`;
  let failures = 0;
  let inFlight: AbortController | null = null;
  return {
    name: 'self-ping',
    intervalMs: ctx.config.selfPingIntervalS * 1000,
    run: async (c) => {
      const abort = new AbortController();
      inFlight = abort;
      const timer = setTimeout(() => abort.abort(new Error('timed out')), SELF_PING_TIMEOUT_MS);
      try {
        const res = await fetch(url, { signal: abort.signal, headers: { 'User-Agent': userAgent } });
        await res.body?.cancel();
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        if (failures > 0) c.log.info('self-ping recovered', { origin, failures });
        failures = 0;
      } catch (err) {
        failures++;
        const error = ((abort.signal.aborted ? abort.signal.reason : err) as Error).message;
        if (failures === 1)
          c.log.warn('self-ping failed; retrying every interval, logged again once it succeeds', {
            origin,
            error,
          });
        else c.log.debug('self-ping failed again', { origin, error, failures });
      } finally {
        clearTimeout(timer);
        inFlight = null;
      }
    },
    stop: () => inFlight?.abort(new Error('server stopping')),
  };
}

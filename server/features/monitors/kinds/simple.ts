import type { MonitorKind } from '../kind';
import { httpMonitor, runHttpCheck, urlHost } from './http';
import { field, httpUrl } from './validate';

export interface SimpleSettings {
  url: string;
}

/**
 * `monitor` (§2.3) is an `http-monitor` with everything but the URL fixed: `GET`, redirects not followed,
 * up on 200-399, the same error texts and details.
 */
export const simpleMonitor: MonitorKind<SimpleSettings> = {
  kind: 'monitor',
  defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
  parse: (body, prev) => ({ url: field(body, 'url', 'url', httpUrl(), { prev: prev?.url, required: true }) }),
  present: (s) => ({ url: s.url }),
  target: (s) => s.url,
  hosts: (s) => [urlHost(s.url) ?? s.url],
  check: (s, _state, io) =>
    runHttpCheck(
      httpMonitor.parse(
        { url: s.url, expectedStatus: ['200-399'], followRedirects: false },
        undefined,
        io.ctx,
      ),
      io,
    ),
};

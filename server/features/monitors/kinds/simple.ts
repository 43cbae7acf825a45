import type { MonitorKind } from '../kind';
import { type HttpSettings, runHttpCheck, urlHost } from './http';
import { field, httpUrl } from './validate';

export interface SimpleSettings {
  url: string;
}

/** `monitor` (§2.3) is an `http-monitor` with everything but the URL fixed: GET, redirects not followed, up on 2xx/3xx. */
const UP_ON = ['200-399'];

function asHttp(s: SimpleSettings): HttpSettings {
  return {
    method: 'GET',
    url: s.url,
    headers: {},
    body: '',
    basicAuth: null,
    expectedStatus: UP_ON,
    followRedirects: false,
    ignoreTlsErrors: false,
    maxResponseMs: null,
    bodyContains: null,
    bodyNotContains: null,
    json: [],
    tlsExpiryDays: 0,
  };
}

export const simpleMonitor: MonitorKind<SimpleSettings> = {
  kind: 'monitor',
  defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
  parse: (body, prev) => ({ url: field(body, 'url', 'url', httpUrl(), { prev: prev?.url, required: true }) }),
  present: (s) => ({ url: s.url }),
  target: (s) => s.url,
  hosts: (s) => [urlHost(s.url) ?? s.url],
  check: (s, _state, io) => runHttpCheck(asHttp(s), io),
};

import net from 'node:net';
import type { MonitorKind } from '../kind';
import { tcpProbe } from '../net/tcp';
import { daysLeft } from './http';
import { bool, field, hostName, int } from './validate';

export interface PortSettings {
  host: string;
  port: number;
  tls: boolean;
  ignoreTlsErrors: boolean;
}

/** `port-monitor` (§2.3): up when the connect (and with `tls` the handshake) succeeds within `timeoutSec`. */
export const portMonitor: MonitorKind<PortSettings> = {
  kind: 'port-monitor',
  defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
  parse: (body, prev) => ({
    host: field(body, 'host', 'host', hostName, { prev: prev?.host, required: true }),
    port: field(body, 'port', 'port', int(1, 65_535), { prev: prev?.port, required: true }),
    tls: field(body, 'tls', 'tls', bool, { prev: prev?.tls, def: false }),
    ignoreTlsErrors: field(body, 'ignoreTlsErrors', 'ignoreTlsErrors', bool, {
      prev: prev?.ignoreTlsErrors,
      def: false,
    }),
  }),
  present: (s) => ({ ...s }),
  target: (s) => (net.isIPv6(s.host) ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`),
  hosts: (s) => [s.host],
  async check(s, _state, io) {
    const r = await tcpProbe(io.ctx, {
      host: s.host,
      port: s.port,
      tls: s.tls,
      ignoreTlsErrors: s.ignoreTlsErrors,
      signal: io.signal,
      timeoutSec: io.timeoutSec,
      allowPrivate: io.allowPrivate,
    });
    if (!r.ok) return { ok: false, error: r.error, responseTimeMs: null, details: {} };
    return {
      ok: true,
      responseTimeMs: r.responseTimeMs,
      details: {
        address: r.address,
        ...(r.tlsValidTo === undefined ? {} : { tlsDaysLeft: daysLeft(r.tlsValidTo, io.ctx.clock.now()) }),
      },
    };
  },
};

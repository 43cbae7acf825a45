import net from 'node:net';
import tls from 'node:tls';
import type { AppContext } from '../../../context';
import { netErrorText, timeoutText, untilAborted } from './errors';
import { bareHost, resolveHost } from './resolve';

export interface TcpProbeSpec {
  host: string;
  port: number;
  /** A TLS handshake (with SNI for host names) after the connect. */
  tls: boolean;
  ignoreTlsErrors: boolean;
  signal: AbortSignal;
  timeoutSec: number;
  allowPrivate: boolean;
}

export type TcpResult =
  | { ok: true; address: string; responseTimeMs: number; tlsValidTo?: number }
  | { ok: false; error: string; responseTimeMs: number };

/**
 * A port check: resolve (overrides, private-address refusal), connect, optionally complete a TLS handshake,
 * close. Never throws: failures are the §2.3 port texts (`connection refused`, `timeout after {n} s`,
 * `DNS lookup failed: {host}`, `TLS handshake failed: {detail}`; anything else `{code}: {detail}`).
 */
export async function tcpProbe(ctx: AppContext, o: TcpProbeSpec): Promise<TcpResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const fail = (error: string): TcpResult => ({ ok: false, error, responseTimeMs: elapsed() });
  const resolved = await untilAborted(resolveHost(ctx, o.host, { allowPrivate: o.allowPrivate }), o.signal);
  if (resolved === null) return fail(timeoutText(o.timeoutSec));
  if ('error' in resolved) return fail(resolved.error);
  const host = bareHost(o.host);
  return new Promise<TcpResult>((resolve) => {
    let socket: net.Socket;
    let done = false;
    const finish = (r: TcpResult) => {
      if (done) return;
      done = true;
      o.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const onAbort = () => finish(fail(timeoutText(o.timeoutSec)));
    if (o.tls) {
      const t = tls.connect({
        host: resolved.address,
        port: o.port,
        rejectUnauthorized: !o.ignoreTlsErrors,
        ...(net.isIP(host) === 0 ? { servername: host } : {}),
      });
      socket = t;
      t.once('secureConnect', () => {
        const validTo = certValidTo(t);
        finish({
          ok: true,
          address: resolved.address,
          responseTimeMs: elapsed(),
          ...(validTo === undefined ? {} : { tlsValidTo: validTo }),
        });
      });
    } else {
      socket = net.connect({ host: resolved.address, port: o.port });
      socket.once('connect', () =>
        finish({ ok: true, address: resolved.address, responseTimeMs: elapsed() }),
      );
    }
    // Once TCP is connected, anything that goes wrong before `secureConnect` is a handshake failure.
    let connected = false;
    socket.once('connect', () => {
      connected = true;
    });
    socket.once('error', (err) =>
      finish(
        fail(
          o.tls && connected
            ? `TLS handshake failed: ${err.message}`
            : netErrorText(err, 'TLS handshake failed'),
        ),
      ),
    );
    socket.once('close', () =>
      finish(fail(o.tls ? 'TLS handshake failed: the connection was closed' : 'connection closed')),
    );
    if (o.signal.aborted) onAbort();
    else o.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Unix ms of the peer certificate's `notAfter`, when the socket has one. */
export function certValidTo(socket: tls.TLSSocket): number | undefined {
  const cert = socket.getPeerCertificate?.();
  if (!cert?.valid_to) return undefined;
  const t = Date.parse(cert.valid_to);
  return Number.isFinite(t) ? t : undefined;
}

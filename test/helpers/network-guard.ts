import net from 'node:net';

/**
 * Fails loudly on any connection to a non-loopback address (conventions, habit 11): tests talk only
 * to servers they start on 127.0.0.1. Outbound HTTP goes to test/helpers/fake-http.ts instead.
 */
export function isLoopback(host: string | undefined): boolean {
  if (!host) return true; // Node's default host is localhost
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}

let installed = false;

export function installNetworkGuard(): void {
  if (installed) return;
  installed = true;
  const original = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    let host: string | undefined;
    let path: string | undefined;
    if (typeof first === 'object' && first !== null && !Array.isArray(first)) {
      const o = first as { host?: string; path?: string };
      host = o.host;
      path = o.path;
    } else if (typeof first === 'number') {
      host = typeof args[1] === 'string' ? args[1] : undefined;
    } else if (typeof first === 'string') {
      path = first;
    }
    if (!path && !isLoopback(host)) {
      throw new Error(`network guard: test tried to connect to ${host}; only loopback is allowed`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
}

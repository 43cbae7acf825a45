import { createHash } from 'node:crypto';
import net from 'node:net';
import type { ClientChannel } from 'ssh2';
import ssh2 from 'ssh2';
import { bad, field, hostName, httpUrl, int, obj, str } from '../../monitors/kinds/validate';
import type { RunningTunnel, TunnelProvider, TunnelTarget } from '../provider';

// ssh2 is CommonJS whose exports Node's ESM loader cannot name: take them off the default export.
const { Client, utils } = ssh2;

/**
 * The `ssh` tunnel provider: `ssh -N -R {remotePort}:{target}` done in-process with ssh2 (pure JS, no
 * OpenSSH binary needed). Key authentication only; the server must allow remote forwarding.
 *
 * Host key: `hostFingerprint` (optional, OpenSSH's `SHA256:…` form as printed by `ssh-keygen -lf`) pins
 * the server's key; a different key fails the start with both fingerprints in the error. Without it any
 * host key is accepted (like `StrictHostKeyChecking=no`): the tunnel carries only public routes, but a
 * pin is the way to be sure the forwarded port is the one on your own server.
 */
// A type alias (not an interface) so it fits the registry's Record<string, unknown> view of settings.
export type SshSettings = {
  host: string;
  port: number;
  user: string;
  privateKey: string;
  remotePort: number;
  /** Address the remote listener binds on the server; `localhost` (default) for a reverse proxy there. */
  bindAddress: string;
  publicUrl: string;
  hostFingerprint: string | null;
};

export interface SshProviderOptions {
  /** Handshake (TCP connect + key exchange + auth) deadline. */
  readyTimeoutMs?: number;
  /** Keepalive probe interval; after `keepaliveCountMax` unanswered probes the connection counts as dead. */
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
}

const KEY_MAX = 16_384;
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

/** The OpenSSH fingerprint (`SHA256:` + unpadded base64 of the SHA-256 of the key blob). */
export function sshFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

function privateKey(v: unknown, path: string): string {
  const s = str({ max: KEY_MAX, min: 1, trim: true })(v, path).replace(/\r\n?/g, '\n');
  const parsed = utils.parseKey(`${s}\n`);
  if (parsed instanceof Error) {
    if (/encrypted|passphrase/i.test(parsed.message))
      bad(path, 'encrypted keys are not supported; use a dedicated key without a passphrase');
    bad(path, 'not a private key');
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key.getPrivatePEM() === null) bad(path, 'not a private key');
  return `${s}\n`;
}

function fingerprint(v: unknown, path: string): string {
  const s = str({ max: 100, trim: true })(v, path);
  if (!FINGERPRINT.test(s)) bad(path, 'must be an OpenSSH SHA256 fingerprint (SHA256:…)');
  return s.replace(/=$/, '');
}

function bindAddress(v: unknown, path: string): string {
  const s = str({ max: 253, trim: true })(v, path);
  if (s === '' || s === '*') return s;
  return hostName(s, path);
}

export function parseSshSettings(body: unknown): SshSettings {
  const b = obj(body, 'ssh');
  const o = { prev: undefined };
  return {
    host: field(b, 'host', 'ssh.host', hostName, { ...o, required: true }),
    port: field(b, 'port', 'ssh.port', int(1, 65_535), { ...o, def: 22 }),
    user: field(b, 'user', 'ssh.user', str({ max: 100, min: 1, trim: true }), { ...o, required: true }),
    privateKey: field(b, 'privateKey', 'ssh.privateKey', privateKey, { ...o, required: true }),
    remotePort: field(b, 'remotePort', 'ssh.remotePort', int(1, 65_535), { ...o, required: true }),
    bindAddress: field(b, 'bindAddress', 'ssh.bindAddress', bindAddress, { ...o, def: 'localhost' }),
    publicUrl: field(b, 'publicUrl', 'ssh.publicUrl', httpUrl(), { ...o, required: true }).replace(
      /\/+$/,
      '',
    ),
    hostFingerprint: field(b, 'hostFingerprint', 'ssh.hostFingerprint', fingerprint, {
      prev: undefined,
      def: null,
      nullable: true,
    }),
  };
}

type SshError = Error & { level?: string; code?: string };

/** A short, key-free reason for the record's `error`. */
function describe(err: SshError, s: SshSettings, readyTimeoutMs: number): string {
  const where = `${s.host}:${s.port}`;
  if (err.level === 'client-authentication')
    return `ssh: authentication failed for user "${s.user}" (the server refused the key)`;
  if (err.level === 'client-dns') return `ssh: cannot resolve host ${s.host}`;
  if (err.message === 'Keepalive timeout') return `ssh: connection to ${where} lost (no keepalive answer)`;
  if (err.level === 'client-timeout')
    return `ssh: no SSH handshake with ${where} within ${readyTimeoutMs % 1000 ? `${readyTimeoutMs} ms` : `${readyTimeoutMs / 1000} s`}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `ssh: connection refused by ${where}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `ssh: cannot resolve host ${s.host}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `ssh: host ${where} unreachable (${err.code})`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `ssh: connection to ${where} reset`;
  }
  if (err.level === 'client-socket') return `ssh: connection to ${where} failed (${err.code ?? 'error'})`;
  return `ssh: connection to ${where} failed (protocol error)`;
}

/** Pipes one forwarded connection to the public listener; either side closing closes both. */
function pipeToTarget(channel: ClientChannel, target: TunnelTarget, open: Set<() => void>): void {
  const sock = net.connect(target.port, target.host);
  const close = () => {
    open.delete(close);
    sock.destroy();
    channel.destroy();
  };
  open.add(close);
  sock.on('error', close).on('close', close);
  channel.on('error', close).on('close', close);
  sock.pipe(channel).pipe(sock);
}

export function createSshProvider(opts: SshProviderOptions = {}): TunnelProvider<SshSettings> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 20_000;
  const keepaliveIntervalMs = opts.keepaliveIntervalMs ?? 15_000;
  const keepaliveCountMax = opts.keepaliveCountMax ?? 3;

  return {
    name: 'ssh',
    secretFields: ['privateKey'],
    parse: parseSshSettings,
    start(s, target, signal) {
      const conn = new Client();
      const open = new Set<() => void>();
      let phase: 'connecting' | 'up' | 'stopping' | 'closed' = 'connecting';
      let lastError: string | null = null;
      let hostMismatch: string | null = null;
      let exitListener: ((reason: string) => void) | null = null;
      let exitReason: string | null = null;
      let closed: () => void = () => {};
      const whenClosed = new Promise<void>((r) => {
        closed = r;
      });

      return new Promise<RunningTunnel>((resolve, reject) => {
        const fail = (reason: string) => {
          if (phase !== 'connecting') return;
          phase = 'stopping';
          signal.removeEventListener('abort', onAbort);
          conn.end();
          conn.destroy();
          reject(new Error(reason));
        };
        const onAbort = () => fail('ssh: start cancelled');
        if (signal.aborted) {
          reject(new Error('ssh: start cancelled'));
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });

        const running: RunningTunnel = {
          publicUrl: s.publicUrl,
          onExit(listener) {
            exitListener = listener;
            if (exitReason !== null) listener(exitReason);
          },
          async stop() {
            if (phase === 'up') {
              phase = 'stopping';
              for (const close of [...open]) close();
              conn.end();
              // A peer that never answers the disconnect must not hold stop() forever.
              const t = setTimeout(() => conn.destroy(), 2_000);
              t.unref();
            }
            await whenClosed;
          },
        };

        conn.on('ready', () => {
          if (phase !== 'connecting') return;
          conn.forwardIn(s.bindAddress, s.remotePort, (err) => {
            if (phase !== 'connecting') return;
            if (err) {
              fail(
                `ssh: remote port forwarding refused (${s.bindAddress || '*'}:${s.remotePort} on ${s.host}; is the port free and AllowTcpForwarding on?)`,
              );
              return;
            }
            phase = 'up';
            signal.removeEventListener('abort', onAbort);
            resolve(running);
          });
        });

        conn.on('tcp connection', (info, accept, rejectChannel) => {
          if (phase !== 'up' || info.destPort !== s.remotePort) {
            rejectChannel();
            return;
          }
          pipeToTarget(accept(), target, open);
        });

        conn.on('error', (err: SshError) => {
          lastError = hostMismatch ?? describe(err, s, readyTimeoutMs);
          fail(lastError);
        });

        conn.on('close', () => {
          const was = phase;
          phase = 'closed';
          for (const close of [...open]) close();
          closed();
          if (was === 'connecting') {
            signal.removeEventListener('abort', onAbort);
            reject(new Error(lastError ?? `ssh: ${s.host}:${s.port} closed the connection during login`));
          } else if (was === 'up') {
            exitReason = lastError ?? `ssh: connection to ${s.host}:${s.port} closed`;
            exitListener?.(exitReason);
          }
        });

        try {
          conn.connect({
            host: s.host,
            port: s.port,
            username: s.user,
            privateKey: s.privateKey,
            readyTimeout: readyTimeoutMs,
            keepaliveInterval: keepaliveIntervalMs,
            keepaliveCountMax,
            hostVerifier: (key: Buffer) => {
              const seen = sshFingerprint(key);
              if (s.hostFingerprint === null || seen === s.hostFingerprint) return true;
              hostMismatch = `ssh: host key mismatch: ${s.host} presented ${seen}, expected ${s.hostFingerprint}`;
              return false;
            },
          });
        } catch {
          // ssh2 throws synchronously only on a key it cannot use; parse() already checked it.
          fail('ssh: the private key cannot be used');
        }
      });
    },
  };
}

export const sshProvider = createSshProvider();

import { timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import type { Connection, ParsedKey } from 'ssh2';
import ssh2 from 'ssh2';
import { sshFingerprint } from '../../server/features/tunnel/providers/ssh';

// ssh2 is CommonJS whose exports Node's ESM loader cannot name: take them off the default export.
const { Server, utils } = ssh2;

/**
 * A loopback SSH server standing in for the user's VPS in the `ssh` tunnel tests. It behaves like sshd
 * with `AllowTcpForwarding remote`: public-key auth only (the key must be the expected one for the
 * expected user, and its signature must verify), `tcpip-forward` opens a listener on 127.0.0.1 whose
 * connections are carried back to the client as `forwarded-tcpip` channels, `cancel-tcpip-forward` and a
 * client's disconnect close it.
 */
export interface FakeSshServer {
  host: string;
  port: number;
  /** The generated ed25519 host key's fingerprint, `SHA256:…` as `ssh-keygen -lf` prints it. */
  hostFingerprint: string;
  /** The generated client key pair the server accepts for `user` (OpenSSH format). */
  clientKey: { private: string; public: string };
  user: string;
  /** When true, `tcpip-forward` requests are refused (like `AllowTcpForwarding no` or a port in use). */
  refuseForwards: boolean;
  stats: {
    /** TCP connections accepted. */
    connections: number;
    /** Clients that passed authentication. */
    authenticated: number;
    /** Public-key attempts refused. */
    authFailures: number;
    /** Connections carried through a forward. */
    forwarded: number;
    /** Bytes that came in on forwarded connections (requests; kept-alive connections carry several). */
    bytesIn: number;
  };
  /** Ports with a forward listener open right now. */
  listeningPorts(): number[];
  /** Resolves when a forward listener is open on `port` (event-driven, no polling). */
  waitForForward(port: number): Promise<void>;
  /** Resolves when no forward listener is open on `port`. */
  waitForUnforward(port: number): Promise<void>;
  /** Cuts every client connection at the TCP level (the VPS rebooted, the laptop's network went away). */
  dropClients(): void;
  /**
   * Stops reading from every client without closing anything: the path went dead silently (a laptop
   * that slept behind NAT), so only the client's keepalives can notice.
   */
  freezeClients(): void;
  close(): Promise<void>;
}

/**
 * An ed25519 pair that ssh2 itself can read back. ssh2 1.17's keygen strips leading zero bytes from the
 * public key, so about 1 pair in 256 (a public key starting with 0x00) is written malformed and refused by
 * parseKey and by `new Server({ hostKeys })` (mscdex/ssh2#1390, #1513, open): such a pair is drawn again.
 */
export function ed25519Pair(
  opts: { passphrase: string; cipher: string; rounds: number } | undefined = undefined,
): { private: string; public: string } {
  for (;;) {
    const pair = opts ? utils.generateKeyPairSync('ed25519', opts) : utils.generateKeyPairSync('ed25519');
    const readable =
      !(utils.parseKey(pair.public) instanceof Error) &&
      !(utils.parseKey(pair.private, opts?.passphrase) instanceof Error);
    if (readable) return pair;
  }
}

export function generateClientKey(): { private: string; public: string } {
  return ed25519Pair();
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startFakeSshServer(
  o: { user?: string; clientKey?: { private: string; public: string } } = {},
): Promise<FakeSshServer> {
  const hostPair = ed25519Pair();
  const clientKey = o.clientKey ?? generateClientKey();
  const allowed = utils.parseKey(clientKey.public) as ParsedKey;
  const hostPublic = utils.parseKey(hostPair.public) as ParsedKey;
  const user = o.user ?? 'tunnel';
  const clients = new Set<{ conn: Connection; sock: net.Socket }>();
  const forwards = new Map<number, net.Server>();
  const forwardWaiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...forwardWaiters]) w();
  };

  const fake: FakeSshServer = {
    host: '127.0.0.1',
    port: 0,
    hostFingerprint: '',
    clientKey,
    user,
    refuseForwards: false,
    stats: { connections: 0, authenticated: 0, authFailures: 0, forwarded: 0, bytesIn: 0 },
    listeningPorts: () => [...forwards.keys()],
    waitForForward: (port) => waitUntil(() => forwards.has(port)),
    waitForUnforward: (port) => waitUntil(() => !forwards.has(port)),
    dropClients() {
      for (const c of clients) c.sock.destroy();
    },
    freezeClients() {
      for (const c of clients) c.sock.pause();
    },
    async close() {
      fake.dropClients();
      for (const l of forwards.values()) l.close();
      forwards.clear();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  function waitUntil(cond: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      if (cond()) return resolve();
      const check = () => {
        if (!cond()) return;
        forwardWaiters.delete(check);
        resolve();
      };
      forwardWaiters.add(check);
    });
  }

  function closeForward(port: number): void {
    const l = forwards.get(port);
    if (!l) return;
    forwards.delete(port);
    l.close();
    notify();
  }

  const server = new Server({ hostKeys: [hostPair.private] }, (conn) => {
    // ssh2 hands the raw socket to the connection as `_sock`; keep it to cut the line in dropClients().
    const sock = (conn as unknown as { _sock: net.Socket })._sock;
    const entry = { conn, sock };
    clients.add(entry);
    fake.stats.connections++;
    const owned = new Set<number>();

    conn.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const keyOk =
        ctx.username === user &&
        ctx.key.algo === allowed.type &&
        sameBytes(ctx.key.data, allowed.getPublicSSH());
      // Without a signature the client only asks whether the key would do (sshd's PK_OK); with one the
      // signature over the session data must verify against the key, like a real sshd checks.
      if (!keyOk || (ctx.signature && allowed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) !== true)) {
        fake.stats.authFailures++;
        return ctx.reject(['publickey']);
      }
      if (ctx.signature) fake.stats.authenticated++;
      ctx.accept();
    });

    conn.on('request', (accept, reject, name, info) => {
      const bind = info as { bindAddr: string; bindPort: number };
      if (name === 'cancel-tcpip-forward') {
        if (owned.delete(bind.bindPort)) closeForward(bind.bindPort);
        accept?.();
        return;
      }
      if (name !== 'tcpip-forward' || fake.refuseForwards) return reject?.();
      const listener = net.createServer((socket) => {
        fake.stats.forwarded++;
        conn.forwardOut(
          bind.bindAddr,
          port,
          socket.remoteAddress ?? '127.0.0.1',
          socket.remotePort ?? 0,
          (err, channel) => {
            if (err) return socket.destroy();
            socket.on('data', (chunk: Buffer) => {
              fake.stats.bytesIn += chunk.length;
            });
            socket.pipe(channel).pipe(socket);
            socket.on('error', () => channel.destroy()).on('close', () => channel.destroy());
            channel.on('error', () => socket.destroy()).on('close', () => socket.destroy());
          },
        );
      });
      let port = bind.bindPort;
      listener.once('error', () => reject?.());
      listener.listen(bind.bindPort, '127.0.0.1', () => {
        port = (listener.address() as net.AddressInfo).port;
        forwards.set(port, listener);
        owned.add(port);
        notify();
        accept?.(port);
      });
    });

    conn.on('error', () => {});
    conn.on('close', () => {
      clients.delete(entry);
      for (const p of owned) closeForward(p);
      owned.clear();
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.port = (server.address() as net.AddressInfo).port;
  fake.hostFingerprint = sshFingerprint(hostPublic.getPublicSSH());
  return fake;
}

/** A free loopback port (listen on 0, read it, close): the remote port a test asks the tunnel for. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

import net from 'node:net';

/**
 * The TCP connect scanner (§3.2): a bounded pool of workers, each connecting to one port at a time, so
 * at most `concurrency` sockets are open at once and no loop runs over the ports without awaiting a
 * connect in between (the event loop and the HTTP server keep running through a 65,535-port scan).
 * Out of file descriptors or local ports (EMFILE, ENFILE, EADDRNOTAVAIL, ENOBUFS) the port is tried
 * again after a pause and the pool shrinks by one worker; it never throws for a socket error, and
 * rejects (the scan fails) only after RESOURCE_RETRIES such errors in a row.
 */

/** A banner: at most this many printable bytes, read for at most BANNER_WAIT_MS after the connect. */
export const BANNER_BYTES = 256;
export const BANNER_WAIT_MS = 500;
/** Resource errors in a row (no connect in between got through) that fail the scan: ~5 s of them. */
const RESOURCE_RETRIES = 50;
const RESOURCE_PAUSE_MS = 100;
const RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL', 'ENOBUFS', 'ENOMEM']);
/**
 * Connects started per second, at most. Against a remote host the pool bounds the rate (200 workers and
 * 1 s timeouts: ~200/s); against this machine or a LAN host that refuses at once, every connect costs the
 * event loop ~50 µs, and 65,535 refusals back to back took ~75 % of a core and made `POST /message` wait
 * 30 ms at p50 (`npm run bench -- scans`). 5,000/s keeps a scan at about a quarter of the loop and still
 * scans every port in ~13 s.
 */
export const MAX_CONNECTS_PER_SEC = 5_000;

export interface OpenPort {
  port: number;
  banner?: string;
}

export interface ScanSpec {
  address: string;
  ports: readonly number[];
  concurrency: number;
  timeoutMs: number;
  /** Stops the scan: workers finish their current connect (closed at once) and take no further port. */
  signal: AbortSignal;
  onOpen(p: OpenPort): void;
  /** After every port (open or not). */
  onScanned(): void;
  /** Connects started per second, at most (default MAX_CONNECTS_PER_SEC). */
  maxRatePerSec?: number;
}

type Probe = { kind: 'open'; banner?: string } | { kind: 'closed' } | { kind: 'resource'; code: string };

/** Printable ASCII of a banner: line breaks and tabs become spaces, other bytes are dropped. */
export function printable(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const space = b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
    // Leading and repeated white space is not kept.
    if (space) {
      if (out !== '' && !out.endsWith(' ')) out += ' ';
    } else if (b > 0x20 && b <= 0x7e) out += String.fromCharCode(b);
    if (out.length >= BANNER_BYTES) break;
  }
  return out.trimEnd().slice(0, BANNER_BYTES);
}

/**
 * One connect. `inFlight` holds a way to end each connect in flight, so an abort ends them all with one
 * listener on the signal instead of one listener per connect.
 */
function probe(address: string, port: number, timeoutMs: number, inFlight: Set<() => void>): Promise<Probe> {
  return new Promise<Probe>((resolve) => {
    let socket: net.Socket | undefined;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const done = (p: Probe) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      inFlight.delete(onAbort);
      socket?.destroy();
      resolve(p);
    };
    const onAbort = () => done({ kind: 'closed' });
    inFlight.add(onAbort);
    try {
      socket = net.connect({ host: address, port });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      return done(RESOURCE_CODES.has(code) ? { kind: 'resource', code } : { kind: 'closed' });
    }
    const s = socket;
    // Filtered (no answer) counts as not open once the connect timeout passes.
    timer = setTimeout(() => done({ kind: 'closed' }), timeoutMs);
    s.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      done(RESOURCE_CODES.has(code) ? { kind: 'resource', code } : { kind: 'closed' });
    });
    s.once('connect', () => {
      if (timer) clearTimeout(timer);
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const text = printable(Buffer.concat(chunks));
        done(text === '' ? { kind: 'open' } : { kind: 'open', banner: text });
      };
      timer = setTimeout(finish, BANNER_WAIT_MS);
      s.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        // Enough bytes that the printable ones could fill a banner: stop reading.
        if (size >= BANNER_BYTES * 4 || printable(Buffer.concat(chunks)).length >= BANNER_BYTES) finish();
      });
      s.once('end', finish);
      s.once('close', finish);
      s.removeAllListeners('error');
      s.on('error', finish);
    });
  });
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Start slots every `1000 / rate` ms shared by the workers: a worker waits for its slot. */
function pacer(ratePerSec: number): () => Promise<void> {
  const interval = 1000 / ratePerSec;
  let next = performance.now();
  return async () => {
    const now = performance.now();
    const at = Math.max(now, next);
    next = at + interval;
    if (at - now >= 1) await pause(at - now);
  };
}

/** Runs the scan to the end or until `signal` aborts. Rejects only when resources stay exhausted. */
export async function tcpScan(spec: ScanSpec): Promise<void> {
  const inFlight = new Set<() => void>();
  const onAbort = () => {
    for (const end of [...inFlight]) end();
  };
  if (spec.signal.aborted) return;
  spec.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await runPool(spec, inFlight);
  } finally {
    spec.signal.removeEventListener('abort', onAbort);
  }
}

async function runPool(spec: ScanSpec, inFlight: Set<() => void>): Promise<void> {
  let next = 0;
  const retry: number[] = [];
  let resourceErrors = 0;
  const slot = pacer(spec.maxRatePerSec ?? MAX_CONNECTS_PER_SEC);
  let workers = 0;
  let failure: Error | null = null;
  const take = (): number | undefined => (retry.length > 0 ? retry.shift() : spec.ports[next++]);
  const worker = async () => {
    for (;;) {
      if (spec.signal.aborted || failure) return;
      const port = take();
      if (port === undefined) return;
      await slot();
      if (spec.signal.aborted) return;
      const r = await probe(spec.address, port, spec.timeoutMs, inFlight);
      if (r.kind === 'resource') {
        resourceErrors++;
        if (resourceErrors > RESOURCE_RETRIES) {
          failure = new Error(`${r.code}: out of sockets or file descriptors`);
          return;
        }
        retry.push(port);
        // One worker fewer while the machine is short of descriptors (never below one).
        if (workers > 1) {
          workers--;
          await pause(RESOURCE_PAUSE_MS);
          return;
        }
        await pause(RESOURCE_PAUSE_MS);
        continue;
      }
      resourceErrors = 0;
      if (spec.signal.aborted) return;
      if (r.kind === 'open') spec.onOpen(r.banner === undefined ? { port } : { port, banner: r.banner });
      spec.onScanned();
    }
  };
  const n = Math.max(1, Math.min(spec.concurrency, spec.ports.length));
  const pool: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    workers++;
    pool.push(worker());
  }
  // A worker that left (pool shrinking) leaves ports to the others; wait until every worker is done
  // and no retried port is left behind.
  for (;;) {
    await Promise.all(pool.splice(0));
    if (failure) throw failure;
    if (spec.signal.aborted || retry.length === 0) return;
    workers = 1;
    pool.push(worker());
  }
}

/** A service named by a banner, when the banner says it. */
export function serviceFromBanner(banner: string): string | undefined {
  if (/^SSH-\d/.test(banner)) return 'ssh';
  if (/^HTTP\/\d/.test(banner)) return 'http';
  if (/^220[ -].*\b(E?SMTP|Postfix|Exim|Sendmail)\b/i.test(banner)) return 'smtp';
  if (/^220[ -].*\bFTP\b/i.test(banner)) return 'ftp';
  if (/^\+OK\b/.test(banner)) return 'pop3';
  if (/^\* OK\b/.test(banner)) return 'imap';
  if (/^RFB \d{3}\.\d{3}/.test(banner)) return 'vnc';
  return undefined;
}

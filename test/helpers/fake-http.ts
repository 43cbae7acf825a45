import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json(): unknown;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Milliseconds to wait before answering (timeouts, slow peers). */
  delayMs?: number;
}

/**
 * A loopback HTTP server standing in for every outside service (Slack, Telegram, SMTP-over-HTTP
 * relays, monitored sites): it records each request and answers as the test tells it.
 */
export interface FakeHttp {
  url: string;
  requests: RecordedRequest[];
  /** Answer requests whose path starts with `prefix` (first match wins; default 200 `{}`). */
  on(method: string, prefix: string, reply: FakeReply | ((req: RecordedRequest) => FakeReply)): void;
  waitFor(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export async function startFakeHttp(): Promise<FakeHttp> {
  const requests: RecordedRequest[] = [];
  const routes: { method: string; prefix: string; reply: FakeReply | ((r: RecordedRequest) => FakeReply) }[] =
    [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        json: () => JSON.parse(body),
      };
      requests.push(rec);
      for (const w of waiters.filter((w) => requests.length >= w.count)) w.resolve();
      const route = routes.find(
        (r) => (r.method === '*' || r.method === rec.method) && rec.path.startsWith(r.prefix),
      );
      const reply = route ? (typeof route.reply === 'function' ? route.reply(rec) : route.reply) : {};
      const send = () => {
        const payload =
          reply.body === undefined
            ? '{}'
            : typeof reply.body === 'string'
              ? reply.body
              : JSON.stringify(reply.body);
        res.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json', ...reply.headers });
        res.end(payload);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (method, prefix, reply) => routes.push({ method, prefix, reply }),
    waitFor: (count, timeoutMs = 5_000) =>
      new Promise((resolve, reject) => {
        if (requests.length >= count) return resolve(requests);
        const timer = setTimeout(
          () => reject(new Error(`fake-http: ${requests.length}/${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(requests);
          },
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

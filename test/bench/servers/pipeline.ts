/**
 * The references for the throughput and latency benchmarks (servers/reference.ts, servers/bare.ts): a
 * minimal raw `node:http` + `ws` server doing the same durable work as Belfry's POST /message and nothing
 * else: token lookup by SHA-256 digest, JSON validation, a sql.js insert (the same schema: the project's
 * migrations) through the project's store, a group-committed fdatasync'd journal append (the response
 * waits for it), then WebSocket fan-out to the owner's sockets, the frame encoded once per message.
 * No framework, no quota, no lastUsed, no sender name, no read marks.
 *
 * `searchIndex: false` (the bare pipeline) drops every trigger on `messages` after the migrations, so an
 * insert writes the row and its indexes and nothing else: no FTS4 segment.
 *
 * `searchIndex: true` (the reference) indexes search the way Belfry did before its batched indexer
 * (migration 0008): an FTS4 insert trigger writes a segment inside every message INSERT. Migration 0008
 * dropped that trigger from the schema, so without recreating it here the reference would be the bare
 * pipeline under another name.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { tokenDigest } from '../../../server/lib/tokens';
import { openBenchStore } from '../lib';

export async function startPipeline(opts: { searchIndex: boolean }): Promise<void> {
  const dataDir = process.env.BENCH_DATA_DIR;
  if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
  const store = await openBenchStore(dataDir);
  const db = store.db;
  if (!opts.searchIndex) {
    const triggers = db.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'",
    );
    db.transaction(() => {
      for (const t of triggers) db.exec(`DROP TRIGGER "${t.name}"`);
    });
    await store.sync();
  } else {
    db.transaction(() => {
      db.exec(
        `CREATE TRIGGER IF NOT EXISTS bench_reference_fts_insert AFTER INSERT ON messages BEGIN
           INSERT INTO messages_fts(docid, title, message) VALUES (new.id, new.title, new.message);
         END`,
      );
    });
    await store.sync();
  }
  const sockets = new Map<number, Set<WebSocket>>();

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method !== 'POST' || url.pathname !== '/message') return send(res, 404, { error: 'not found' });
    const token = url.searchParams.get('token') ?? req.headers['x-gotify-key'];
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key =
        typeof token === 'string'
          ? db.first<{ channel_id: number; user_id: number; can_write: number }>(
              'SELECT k.channel_id, c.user_id, k.can_write FROM channel_keys k JOIN channels c ON c.id = k.channel_id WHERE k.token_digest = ? AND k.revoked_at IS NULL',
              [tokenDigest(token)],
            )
          : undefined;
      if (key?.can_write !== 1) return send(res, 401, { error: 'unauthorized' });
      let body: { message?: unknown; title?: unknown; priority?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return send(res, 400, { error: 'bad json' });
      }
      const { message, title = '', priority = 0 } = body;
      if (
        typeof message !== 'string' ||
        typeof title !== 'string' ||
        !Number.isInteger(priority) ||
        (priority as number) < 0 ||
        (priority as number) > 10
      )
        return send(res, 400, { error: 'invalid' });
      const now = Date.now();
      const id = db.transaction(
        () =>
          db.run(
            'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, ?, ?)',
            [key.channel_id, key.user_id, message, title, priority as number, now],
          ).lastInsertRowid,
      );
      const out = { id, appid: key.channel_id, message, title, priority, date: new Date(now).toISOString() };
      store.sync().then(
        () => {
          send(res, 200, out);
          const frame = Buffer.from(JSON.stringify(out));
          for (const ws of sockets.get(key.user_id) ?? []) ws.send(frame, { binary: false });
        },
        () => send(res, 503, { error: 'journal' }),
      );
    });
  });

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '';
    const device = db.first<{ user_id: number }>(
      "SELECT user_id FROM devices WHERE token_digest = ? AND status = 'active'",
      [tokenDigest(token)],
    );
    if (!device) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const set = sockets.get(device.user_id) ?? new Set();
      sockets.set(device.user_id, set);
      set.add(ws);
      ws.on('close', () => set.delete(ws));
      ws.on('error', () => {});
    });
  });

  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ port })}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    for (const set of sockets.values()) for (const ws of set) ws.terminate();
    store.close().then(() => process.exit(0));
  });
}

import { type Socket, connect as tcpConnect } from 'node:net';
import WebSocket from 'ws';
import type { BusMessage } from '../../server/lib/bus';
import { issueToken } from '../../server/lib/tokens';
import type { LiveHub } from '../../server/realtime/hub';
import { liveHubOf } from '../../server/realtime/index';
import type { TestServer } from '../helpers/test-server';

/** A connected WebSocket client that records frames and its close. */
export interface WsClient {
  ws: WebSocket;
  frames: unknown[];
  /** Resolves with the next frame not yet taken (or rejects after `ms`). */
  next(ms?: number): Promise<unknown>;
  /** True if no frame arrives within `ms`. */
  silentFor(ms: number): Promise<boolean>;
  closed: Promise<{ code: number; reason: string }>;
}

export function wsUrl(t: TestServer, path: string, token?: string): string {
  const base = t.url.replace(/^http/, 'ws') + path;
  return token === undefined
    ? base
    : `${base}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

export function openWs(
  t: TestServer,
  path: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<WsClient> {
  const ws = new WebSocket(wsUrl(t, path, token), { headers });
  const frames: unknown[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  ws.on('message', (data, isBinary) => {
    frames.push(isBinary ? data : JSON.parse(data.toString()));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const client: WsClient = {
    ws,
    frames,
    closed,
    next: (ms = 2_000) =>
      new Promise((resolve, reject) => {
        let done = false;
        const timer = setTimeout(() => {
          done = true;
          reject(new Error(`no frame within ${ms} ms`));
        }, ms);
        const check = () => {
          if (done) return;
          if (taken < frames.length) {
            done = true;
            clearTimeout(timer);
            resolve(frames[taken++]);
          } else waiters.push(check);
        };
        check();
      }),
    silentFor: async (ms) => {
      const before = frames.length;
      await new Promise((r) => setTimeout(r, ms));
      return frames.length === before;
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Attempts an upgrade that should be refused; returns the HTTP status and the parsed JSON body. */
export function refusedUpgrade(
  t: TestServer,
  path: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const ws = new WebSocket(wsUrl(t, path, token), { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    ws.once('error', () => {});
  });
}

/**
 * A raw TCP WebSocket client: completes the handshake and then never reads or answers anything, like a
 * phone that dropped off the network (dead peer) or a client that stopped reading (slow consumer).
 */
export function rawUpgrade(t: TestServer, path: string, token: string): Promise<Socket> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET ${path}?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    socket.once('data', (chunk) => {
      if (chunk.toString().startsWith('HTTP/1.1 101')) {
        socket.pause();
        resolve(socket);
      } else reject(new Error(chunk.toString()));
    });
    socket.once('error', reject);
  });
}

export function hub(t: TestServer): LiveHub {
  return liveHubOf(t.server.ctx);
}

/** A channel row straight in the store (the channels family's endpoints are not needed for the hub). */
export function makeChannel(t: TestServer, userId: number, name = 'alerts'): number {
  const now = t.clock.now();
  return t.server.ctx.db.transaction(
    () =>
      t.server.ctx.db.run('INSERT INTO channels (user_id, name, created_at) VALUES (?, ?, ?)', [
        userId,
        name,
        now,
      ]).lastInsertRowid,
  );
}

/** A channel key (A token) row; returns the token and its record id. */
export function makeChannelKey(
  t: TestServer,
  channelId: number,
  perms: { canRead: boolean; canWrite?: boolean },
): { id: number; token: string } {
  const { token, digest, hint } = issueToken('A');
  const id = t.server.ctx.db.transaction(
    () =>
      t.server.ctx.db.run(
        'INSERT INTO channel_keys (channel_id, can_read, can_write, token_digest, token_hint, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        [channelId, perms.canRead ? 1 : 0, perms.canWrite === false ? 0 : 1, digest, hint, t.clock.now()],
      ).lastInsertRowid,
  );
  return { id, token };
}

/** An API token (M) row. */
export function makeApiToken(t: TestServer, userId: number): string {
  const { token, digest, hint } = issueToken('M');
  t.server.ctx.db.transaction(() =>
    t.server.ctx.db.run(
      "INSERT INTO api_tokens (user_id, name, access, token_digest, token_hint, created_at) VALUES (?, 'bench', 'write', ?, ?, ?)",
      [userId, digest, hint, t.clock.now()],
    ),
  );
  return token;
}

let nextId = 1_000;

/** Publishes a message on the bus as the channels family does after its commit. */
export function emitMessage(
  t: TestServer,
  appid: number,
  ownerId: number,
  over: Partial<BusMessage> = {},
): BusMessage {
  const message: BusMessage = {
    id: nextId++,
    appid,
    message: 'disk almost full',
    title: 'backup',
    priority: 5,
    date: '2026-01-15T12:00:00.000Z',
    senderName: 'cron',
    ...over,
  };
  t.server.ctx.bus.emit('message:created', { message, ownerId });
  return message;
}

export async function until(cond: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

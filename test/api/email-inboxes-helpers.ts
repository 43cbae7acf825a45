import { connect, type Socket } from 'node:net';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import type { ApiResponse, TestServer } from '../helpers/test-server';

export function ok<T = any>(res: ApiResponse, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body as T;
}

/** The port the server's SMTP listener is bound to (the tests listen on 127.0.0.1:0). */
export function smtpPort(t: TestServer): number {
  const port = t.server.smtp?.boundPort;
  if (!port) throw new Error('the SMTP listener is not running');
  return port;
}

/** A user with a device, a channel (default priority 6) and one inbox on it. */
export async function inboxUser(t: TestServer, inbox: Record<string, unknown> = {}) {
  const user = makeUser(t);
  const device = await deviceToken(t, user, 'inbox test');
  const channel = await makeChannel(t, device.token, { name: 'mail', defaultPriority: 6 });
  const box = ok<{ id: number; address: string; localPart: string; [k: string]: unknown }>(
    await t.request('POST', '/email-inbox', {
      token: device.token,
      json: { appid: channel.id, name: 'Alerts inbox', ...inbox },
    }),
    'inbox',
  );
  return { user, device, channel, inbox: box };
}

export async function addRule(t: TestServer, tok: string, inboxId: number, rule: Record<string, unknown>) {
  return ok<{ id: number; position: number; [k: string]: unknown }>(
    await t.request('POST', `/email-inbox/${inboxId}/rules`, { token: tok, json: rule }),
    'rule',
  );
}

/** Sends a raw RFC 5322 mail through the listener with nodemailer (a real SMTP client). */
export async function sendRaw(t: TestServer, from: string, to: string[], raw: string) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: smtpPort(t),
    secure: false,
    ignoreTLS: true,
  });
  try {
    return await transport.sendMail({ envelope: { from, to }, raw });
  } finally {
    transport.close();
  }
}

/** Composes and sends a mail with nodemailer's MIME builder. */
export async function sendMail(t: TestServer, mail: SendMailOptions) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: smtpPort(t),
    secure: false,
    ignoreTLS: true,
  });
  try {
    return await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

/** The newest events of a user (one inbox when given). */
export async function events(t: TestServer, tok: string, inboxId?: number, limit = 100) {
  const q = inboxId === undefined ? `?limit=${limit}` : `?inboxId=${inboxId}&limit=${limit}`;
  return ok<{ paging: Record<string, unknown>; events: any[] }>(
    await t.request('GET', `/email-inbox/event${q}`, { token: tok }),
    'events',
  ).events;
}

export async function messageById(t: TestServer, tok: string, id: number) {
  const list = ok<{ messages: { id: number; [k: string]: unknown }[] }>(
    await t.request('GET', '/message?limit=200', { token: tok }),
    'messages',
  );
  return list.messages.find((m) => m.id === id);
}

/**
 * A raw SMTP session over `net`, for the replies a well-behaved client never provokes: `command()` sends
 * a line and resolves with the complete reply (multi-line replies joined), `reply()` waits for the next one.
 */
export class RawSmtp {
  private buffer = '';
  private waiting: ((reply: string) => void)[] = [];
  private replies: string[] = [];
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end = this.completeReplyEnd();
      while (end >= 0) {
        const reply = this.buffer.slice(0, end).replace(/\r\n$/, '');
        this.buffer = this.buffer.slice(end);
        const w = this.waiting.shift();
        if (w) w(reply);
        else this.replies.push(reply);
        end = this.completeReplyEnd();
      }
    });
  }

  /** The end of the first complete reply in the buffer (its last line is `NNN text`), or -1. */
  private completeReplyEnd(): number {
    let at = 0;
    while (true) {
      const nl = this.buffer.indexOf('\r\n', at);
      if (nl < 0) return -1;
      const line = this.buffer.slice(at, nl);
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) return nl + 2;
      at = nl + 2;
    }
  }

  static async open(port: number): Promise<{ s: RawSmtp; greeting: string }> {
    const socket = connect(port, '127.0.0.1');
    const s = new RawSmtp(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return { s, greeting: await s.reply() };
  }

  reply(): Promise<string> {
    const ready = this.replies.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  command(line: string): Promise<string> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /** Writes bytes without waiting for a reply (a DATA body). */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(data, (err) => (err ? reject(err) : resolve())),
    );
  }

  async quit(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.write('QUIT\r\n');
    await closed;
  }
}

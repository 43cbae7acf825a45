import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';

export interface FakeSmtp {
  url: string;
  /** Accepted messages. */
  mails: { from: string; to: string[]; data: string }[];
  /** MAIL FROM commands seen (accepted or refused): one per send attempt. */
  attempts: number;
  /**
   * Refuse the next n attempts at MAIL FROM with `451 4.3.0 try again later`, or with `reply` (e.g.
   * `550 5.1.1 mailbox unavailable` for a permanent refusal).
   */
  failNext(n: number, reply?: string): void;
  /**
   * The next accepted message is recorded at once but its `250 queued` waits until the returned function is
   * called: the sender is still inside its SMTP attempt while the test sees the mail (a slow server, or a
   * laptop asleep mid-transaction).
   */
  holdNext(): () => void;
  close(): Promise<void>;
}

/** A tiny loopback SMTP server: enough of RFC 5321 for nodemailer, recording each message. */
export async function startSmtp(): Promise<FakeSmtp> {
  let failing = 0;
  let failReply = '451 4.3.0 try again later';
  let hold: Promise<void> | null = null;
  const sockets = new Set<import('node:net').Socket>();
  const state: FakeSmtp = {
    url: '',
    mails: [],
    attempts: 0,
    failNext: (n, reply = '451 4.3.0 try again later') => {
      failing = n;
      failReply = reply;
    },
    holdNext: () => {
      let release!: () => void;
      hold = new Promise<void>((r) => {
        release = r;
      });
      return release;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buf = '';
    let inData = false;
    let cur = { from: '', to: [] as string[], data: '' };
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          cur.data = buf.slice(0, end);
          buf = buf.slice(end + 5);
          inData = false;
          state.mails.push(cur);
          cur = { from: '', to: [], data: '' };
          if (hold) {
            void hold.then(() => socket.write('250 queued\r\n'));
            hold = null;
          } else socket.write('250 queued\r\n');
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 test\r\n');
        else if (verb === 'MAIL') {
          state.attempts++;
          if (failing > 0) {
            failing--;
            socket.write(`${failReply}\r\n`);
            continue;
          }
          cur.from = line;
          socket.write('250 ok\r\n');
        } else if (verb === 'RCPT') {
          cur.to.push(line);
          socket.write('250 ok\r\n');
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
        } else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

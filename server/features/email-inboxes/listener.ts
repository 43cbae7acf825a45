import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { parseHostPort } from '../../config';
import type { AppContext } from '../../context';
import { MailParsePool } from './parse-pool';
import { mailDomain } from './present';
import { deliverToInbox } from './receive';
import { findInboxByLocalPart } from './store';

/** §10: the largest mail (552 beyond it, the library's standard reply) and recipients per mail (452). */
export const MAIL_MAX_BYTES = 10 * 1024 * 1024;
export const RECIPIENTS_MAX = 50;
export const RELAY_DENIED = '5.7.1 relaying denied';
export const NO_SUCH_INBOX = '5.1.1 no such inbox';
/** smtp-server's own reply to a mail over `size`, kept word for word for the path this module answers. */
const TOO_BIG = `Error: message exceeds fixed maximum message size ${MAIL_MAX_BYTES}`;

function smtpError(code: number, text: string): Error & { responseCode: number } {
  return Object.assign(new Error(text), { responseCode: code });
}

/** `local@domain` → the lowercased local part when the domain is ours; undefined for any other domain. */
export function localPartOf(address: string, domain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  if (address.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return undefined;
  return address.slice(0, at).toLowerCase();
}

/** `host:port` of the running listener of each server (a test process runs several). */
const bound = new WeakMap<AppContext, string>();

/**
 * `GET /email-inbox/listener` (an extension, docs/api.md): whether this server takes mail now, where, and
 * the domain of its inbox addresses; the UI says how to turn the listener on when it is off.
 */
export function listenerState(ctx: AppContext) {
  const address = bound.get(ctx) ?? null;
  return { enabled: address !== null, address, domain: mailDomain(ctx) };
}

/**
 * The inbound SMTP listener of email inboxes (`BELFRY_SMTP_LISTEN`, §10), built on smtp-server: the
 * protocol state machine, SIZE, dot-stuffing and line limits are the library's. No AUTH, no STARTTLS;
 * RCPT is checked against the mail domain and the inboxes; a mail is parsed once (in a worker thread) and
 * recorded for each accepted recipient inbox before the 250 (after the journal fsync, like every HTTP
 * answer).
 */
export class InboundSmtp {
  readonly server: SMTPServer;
  /** MIME parsing off the main thread; a worker that dies fails its mail with a 451 (parse-pool.ts). */
  readonly parser: MailParsePool;
  private port = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly listen: string,
  ) {
    this.parser = new MailParsePool({}, (why) =>
      ctx.log.warn('email inbox: a mail parser worker stopped', { why }),
    );
    this.server = new SMTPServer({
      name: 'belfry',
      banner: 'Belfry email inboxes',
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      hideSTARTTLS: true,
      disableReverseLookup: true,
      size: MAIL_MAX_BYTES,
      rejectOversized: true,
      maxRecipients: RECIPIENTS_MAX,
      logger: false,
      closeTimeout: 2_000,
      onRcptTo: (address, _session, callback) => callback(this.checkRecipient(address)),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => {
          if (!stream.sizeExceeded) chunks.push(c);
        });
        stream.on('end', () => {
          // Over the limit: smtp-server answers 552 itself (rejectOversized), whatever this callback says.
          if (stream.sizeExceeded) return callback(smtpError(552, TOO_BIG));
          this.receive(Buffer.concat(chunks), session).then(
            () => callback(null),
            (err: unknown) => {
              ctx.log.error('email inbox: a mail could not be recorded', { err: String(err) });
              callback(smtpError(451, '4.3.0 temporary failure, try again later'));
            },
          );
        });
      },
    });
    this.server.on('error', (err) => ctx.log.warn('smtp listener error', { err: String(err) }));
  }

  private checkRecipient(address: SMTPServerAddress): Error | null {
    const local = localPartOf(address.address, mailDomain(this.ctx));
    if (local === undefined) return smtpError(550, RELAY_DENIED);
    if (!findInboxByLocalPart(this.ctx.db, local)) return smtpError(550, NO_SUCH_INBOX);
    return null;
  }

  private async receive(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const mail = await this.parser.parse(raw, envelopeFrom);
    const domain = mailDomain(this.ctx);
    const seen = new Set<number>();
    for (const rcpt of session.envelope.rcptTo) {
      const local = localPartOf(rcpt.address, domain);
      // An inbox deleted (or renamed) between RCPT and the end of DATA is skipped.
      const inbox = local === undefined ? undefined : findInboxByLocalPart(this.ctx.db, local);
      if (!inbox || seen.has(inbox.id)) continue;
      seen.add(inbox.id);
      deliverToInbox(this.ctx, inbox, `${inbox.local_part}@${domain}`, mail);
    }
    if (this.ctx.store.hasUnsynced()) await this.ctx.store.sync();
  }

  start(): Promise<{ host: string; port: number }> {
    const where = parseHostPort(this.listen)!;
    return new Promise((resolve, reject) => {
      this.server.server.once('error', reject);
      this.server.listen(where.port, where.host, () => {
        this.server.server.off('error', reject);
        const addr = this.server.server.address() as AddressInfo;
        this.port = addr.port;
        const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        bound.set(this.ctx, `${host}:${addr.port}`);
        this.ctx.log.info('smtp listener started', { host: addr.address, port: addr.port });
        resolve({ host: addr.address, port: addr.port });
      });
    });
  }

  /** The bound port (tests listen on port 0). */
  get boundPort(): number {
    return this.port;
  }

  async close(): Promise<void> {
    bound.delete(this.ctx);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.parser.close();
  }
}

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { PARSE_WORKER_SOURCE } from './parse-worker';
import type { ReceivedMail } from './receive';
import { ADDRESS_CHARS, EVENT_TEXT_BYTES, SUBJECT_CHARS } from './receive';

/**
 * MIME parsing of received mail off the main thread (issue 18, "Speed"): mailparser and html-to-text
 * take milliseconds of CPU per mail, which at 50 mails/s stood in the way of every HTTP request. A small
 * pool of worker threads (`worker_threads`, no dependency) parses; the main thread only stores.
 *
 * - Each worker parses one mail at a time; mails wait in a bounded queue (QUEUE_MAX); beyond it `parse`
 *   fails at once, and the SMTP transaction is answered 451 (the sender retries later).
 * - A worker that dies (a crash in the parser, out of memory) or takes longer than TIMEOUT_MS fails the
 *   mail it held, the same 451: nothing is lost, the sender keeps the mail and retries. The next mail
 *   starts a new worker.
 * - Workers start on the first mail and do not keep the process alive; `close()` ends them.
 */

export const POOL_SIZE = 1;
export const QUEUE_MAX = 64;
export const TIMEOUT_MS = 30_000;

/** Why a mail could not be parsed now: the SMTP answer is a temporary failure. */
export class ParseUnavailable extends Error {}

interface Job {
  id: number;
  raw: Buffer;
  envelopeFrom: string;
  resolve: (m: ReceivedMail) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Set when the worker was ended for taking longer than this many ms. */
  timedOut?: number;
}

const require = createRequire(import.meta.url);

export class MailParsePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private crashNext = false;
  private readonly modules = {
    mailparser: require.resolve('mailparser'),
    htmlToText: require.resolve('html-to-text'),
  };

  constructor(
    private readonly opts: { size?: number; queueMax?: number; timeoutMs?: number } = {},
    private readonly onCrash: (why: string) => void = () => {},
  ) {}

  /** The mail parsed in a worker; rejects with ParseUnavailable when it cannot be parsed now. */
  parse(raw: Buffer, envelopeFrom: string): Promise<ReceivedMail> {
    if (this.closed) return Promise.reject(new ParseUnavailable('the mail parser is stopping'));
    if (this.queue.length >= (this.opts.queueMax ?? QUEUE_MAX))
      return Promise.reject(new ParseUnavailable('the mail parser is busy'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, raw, envelopeFrom, resolve, reject });
      this.pump();
    });
  }

  /** Tests: the worker that takes the next mail dies before parsing it, as a crash in the parser would. */
  crashOnNextMail(): void {
    this.crashNext = true;
  }

  /** Workers alive now (tests). */
  get workers(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new ParseUnavailable('the mail parser is stopping'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === null);
      if (!slot) {
        if (this.slots.length >= (this.opts.size ?? POOL_SIZE)) return;
        slot = this.spawn();
      }
      this.run(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(PARSE_WORKER_SOURCE, {
      eval: true,
      workerData: { ...this.modules, limits: { EVENT_TEXT_BYTES, SUBJECT_CHARS, ADDRESS_CHARS } },
    });
    worker.unref();
    const slot: Slot = { worker, job: null, timer: null };
    this.slots.push(slot);
    worker.on('message', (m: { id: number; mail?: ReceivedMail; error?: string }) => {
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      this.settle(slot);
      if (m.mail) job.resolve(m.mail);
      // A mail mailparser cannot read at all: not the sender's fault to retry forever, but nothing was
      // stored either; a temporary failure keeps it with the sender.
      else job.reject(new ParseUnavailable(`the mail could not be parsed: ${m.error}`));
      this.pump();
    });
    const gone = (why: string) => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      const job = slot.job;
      this.settle(slot);
      if (!this.closed) this.onCrash(why);
      job?.reject(new ParseUnavailable(`the mail parser stopped: ${why}`));
      if (!this.closed) this.pump();
    };
    worker.on('error', (err) => gone(String(err)));
    worker.on('exit', (code) =>
      gone(slot.timedOut ? `took longer than ${slot.timedOut} ms` : `exit code ${code}`),
    );
    return slot;
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref(); // a mail in hand keeps the process up until it is answered
    const ms = this.opts.timeoutMs ?? TIMEOUT_MS;
    slot.timer = setTimeout(() => {
      slot.timedOut = ms;
      void slot.worker.terminate();
    }, ms);
    slot.timer.unref();
    const crash = this.crashNext;
    this.crashNext = false;
    // A copy the worker owns: the Buffer may be a slice of a larger pool.
    const copy = job.raw.buffer.slice(job.raw.byteOffset, job.raw.byteOffset + job.raw.byteLength);
    slot.worker.postMessage({ id: job.id, raw: copy, envelopeFrom: job.envelopeFrom, crash }, [
      copy as ArrayBuffer,
    ]);
  }

  private settle(slot: Slot): void {
    slot.worker.unref();
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
  }
}

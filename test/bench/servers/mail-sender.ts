/**
 * The SMTP client of webscripts-mail.bench.ts, in a process of its own so that its CPU does not delay the
 * `POST /message` latencies the bench measures alongside. Sends MAIL_RATE mails/s for MAIL_SECONDS, open
 * loop (a mail starts on schedule whether or not the earlier ones were answered), over a nodemailer pool
 * of MAIL_CONNECTIONS connections to 127.0.0.1:MAIL_PORT, and prints one JSON line at the end:
 * `{sent, errors, elapsedS, lat: [ms start → 250 per mail]}` (after a `{ready: true}` line once connected).
 */
import nodemailer from 'nodemailer';

const port = Number(process.env.MAIL_PORT);
const to = process.env.MAIL_TO!;
const rate = Number(process.env.MAIL_RATE ?? 50);
const seconds = Number(process.env.MAIL_SECONDS ?? 5);
const offset = Number(process.env.MAIL_OFFSET ?? 0);
const connections = Number(process.env.MAIL_CONNECTIONS ?? 5);

/** A CI notification as GitHub sends it: multipart/alternative, text + HTML, ~2.5 kB. */
export function ciMail(n: number): string {
  const run = 90_000 + n;
  return [
    'From: GitHub <notifications@github.com>',
    `To: ${to}`,
    `Subject: [acme/api] Run failed: deploy - main (${run.toString(16)})`,
    `Message-ID: <acme/api/actions/runs/${run}@github.com>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="==b=="',
    '',
    '--==b==',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Run failed: deploy - main',
    `The job "build" failed after 3m 12s (run ${run}).`,
    `View the run: https://github.com/acme/api/actions/runs/${run}`,
    'x'.repeat(800),
    '',
    '--==b==',
    'Content-Type: text/html; charset=utf-8',
    '',
    `<html><body><p><b>Run failed</b>: deploy - main</p><p>${'y'.repeat(800)}</p></body></html>`,
    '--==b==--',
    '',
  ].join('\r\n');
}

const transport = nodemailer.createTransport({
  host: '127.0.0.1',
  port,
  secure: false,
  ignoreTLS: true,
  pool: true,
  maxConnections: connections,
  maxMessages: Number.POSITIVE_INFINITY,
});
// Loaded and connected: the bench starts its `POST /message` loop on this line.
await transport.verify();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
const lat: number[] = [];
let errors = 0;
const pending: Promise<void>[] = [];
const total = rate * seconds;
const start = performance.now();
for (let i = 0; i < total; i++) {
  const wait = start + (i * 1000) / rate - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const t0 = performance.now();
  pending.push(
    transport.sendMail({ envelope: { from: 'bounces@github.com', to: [to] }, raw: ciMail(offset + i) }).then(
      () => {
        lat.push(performance.now() - t0);
      },
      () => {
        errors++;
      },
    ),
  );
}
await Promise.all(pending);
const elapsedS = (performance.now() - start) / 1000;
transport.close();
process.stdout.write(`${JSON.stringify({ sent: total, errors, elapsedS, lat })}\n`);

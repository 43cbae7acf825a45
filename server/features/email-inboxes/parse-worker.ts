/**
 * The code of a mail-parsing worker thread (parse-pool.ts), as the text the worker evaluates: a worker
 * started from a string runs the same way under tsx, vitest and the bundled Electron app, where a worker
 * file next to this module would not exist. CommonJS: mailparser and html-to-text are required by the
 * absolute paths the pool resolves (`workerData`), so no loader or module lookup from the worker's cwd.
 *
 * One message in, `{id, raw (ArrayBuffer), envelopeFrom, crash?}`; one out, `{id, mail}` or `{id, error}`.
 * `crash` (tests only) ends the thread at once, as a crash inside the parser would.
 */
export const PARSE_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { simpleParser } = require(workerData.mailparser);
const { convert } = require(workerData.htmlToText);
const { EVENT_TEXT_BYTES, SUBJECT_CHARS, ADDRESS_CHARS } = workerData.limits;

function cutUtf8(s, bytes) {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= bytes) return s;
  let end = bytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

function firstAddress(a) {
  const list = a === undefined ? [] : Array.isArray(a) ? a : [a];
  for (const o of list) for (const v of o.value) if (v.address) return v.address;
  return undefined;
}

async function parseMail(raw, envelopeFrom) {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  let text = parsed.text || '';
  if (text.trim() === '' && typeof parsed.html === 'string')
    text = convert(parsed.html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    });
  return {
    from: (firstAddress(parsed.from) || envelopeFrom).slice(0, ADDRESS_CHARS),
    subject: (parsed.subject || '').trim().slice(0, SUBJECT_CHARS),
    text: cutUtf8(text.trim(), EVENT_TEXT_BYTES),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename || null,
      size: a.size,
      contentType: a.contentType,
    })),
    size: raw.length,
  };
}

parentPort.on('message', (job) => {
  if (job.crash) process.exit(70);
  parseMail(Buffer.from(job.raw), job.envelopeFrom).then(
    (mail) => parentPort.postMessage({ id: job.id, mail }),
    (err) => parentPort.postMessage({ id: job.id, error: String((err && err.message) || err) }),
  );
});
`;

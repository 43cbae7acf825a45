#!/usr/bin/env node
// Ask a question through Belfry and receive the answer on a callback (docs/questions.md).
//
//   BELFRY_URL=https://belfry.example.com BELFRY_KEY=A... node ask.mjs "Deploy 4.2 to production?" yes no
//
// The first argument is the question, the others are the options (none: a free-text question).
// The script starts a small HTTP server for the callback, asks with a `callbackUrl` and a fresh
// `callbackSecret`, checks each callback's signature and timestamp, prints the answer and exits. It also
// polls `GET /ask-question/{id}` now and then, in case the callback cannot reach it.
//
// Prints the answer on stdout: an option or a text answer as plain text, any other answer as JSON
// (an expired question's default answer too). Progress and errors go to stderr.
// Exit status: 0 answered; 2 expired or cancelled; 1 error.
//
// Environment:
//   BELFRY_URL, BELFRY_KEY    the server's address and a channel key with write permission (required)
//   BELFRY_TIMEOUT_S          how long the question stays open, 1-86400 seconds (default 3600)
//   BELFRY_CLIENT_MESSAGE_ID  an idempotency key (asking again with it returns the same question)
//   BELFRY_LISTEN_HOST        where the callback server listens (default 127.0.0.1)
//   BELFRY_LISTEN_PORT        its port (default 0: any free port)
//   BELFRY_CALLBACK_URL       the address Belfry should POST to, when it is not
//                             http://{BELFRY_LISTEN_HOST}:{port}/belfry-callback (a proxy or tunnel in front)
//   BELFRY_POLL_S             seconds between two fallback polls (default 30)
//
// Plain Node 20 or later: no dependencies.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const MAX_SKEW_S = 300; // a callback whose X-Belfry-Timestamp is further from now is refused
const CALLBACK_PATH = '/belfry-callback';

const env = process.env;
const base = (env.BELFRY_URL ?? '').replace(/\/+$/, '');
const key = env.BELFRY_KEY ?? '';
const [question, ...options] = process.argv.slice(2);
if (!base || !key || !question) {
  console.error('usage: BELFRY_URL=… BELFRY_KEY=… node ask.mjs QUESTION [OPTION...]');
  process.exit(1);
}
const pollMs = Number(env.BELFRY_POLL_S ?? 30) * 1000;
const secret = randomBytes(32).toString('hex');

/** A call to Belfry with the channel key → {status, body}. */
async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, text };
}

let done = false;
/** The end: prints the outcome once, whichever path (callback or poll) learnt it first. */
function finish(outcome, via) {
  if (done) return;
  done = true;
  if (outcome.answer !== null && outcome.answer !== undefined)
    console.log(typeof outcome.answer === 'string' ? outcome.answer : JSON.stringify(outcome.answer));
  console.error(`ask.mjs: question ${outcome.id} ${outcome.status} (learnt by ${via})`);
  process.exit(outcome.status === 'answered' ? 0 : 2);
}

function fail(message) {
  done = true;
  console.error(`ask.mjs: ${message}`);
  process.exit(1);
}

/** Checks X-Belfry-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>. */
function verify(headers, raw) {
  const ts = String(headers['x-belfry-timestamp'] ?? '');
  const sig = String(headers['x-belfry-signature'] ?? '');
  if (!/^\d+$/.test(ts)) return 'missing timestamp';
  if (Math.abs(Date.now() / 1000 - Number(ts)) > MAX_SKEW_S) return 'timestamp too old or too new';
  const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(raw).digest('hex')}`;
  const a = Buffer.from(sig);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return 'bad signature';
  return null;
}

let questionId = null;
const seen = new Set(); // X-Belfry-Delivery ids already handled: a retry repeats the same id
const early = new Map(); // outcomes that arrived before POST /ask answered (question id → body)

const server = createServer((req, res) => {
  if (req.method !== 'POST' || new URL(req.url, 'http://x').pathname !== CALLBACK_PATH) {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // verify the bytes as received, before parsing
    const problem = verify(req.headers, raw);
    if (problem) {
      console.error(`ask.mjs: callback refused: ${problem}`);
      res.writeHead(401).end();
      return;
    }
    // A retry of a callback already handled carries the same X-Belfry-Delivery: answer 2xx, do nothing.
    const delivery = String(req.headers['x-belfry-delivery'] ?? '');
    const repeat = seen.has(delivery);
    seen.add(delivery);
    // Answer 2xx (Belfry retries anything else), then act once the answer is on its way.
    res.writeHead(204).end(() => {
      if (repeat) return;
      let body;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return;
      }
      if (questionId === null) early.set(body.id, body);
      else if (body.id === questionId) finish(body, 'callback');
    });
  });
});

async function poll() {
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    if (done) return;
    let r;
    try {
      r = await api('GET', `/ask-question/${questionId}`);
    } catch (e) {
      console.error(`ask.mjs: poll failed (${e.message}); trying again`);
      continue;
    }
    if (r.status === 200 && r.body.status !== 'pending') finish(r.body, 'polling');
    else if (r.status === 410) {
      const status = /cancel/.test(r.body?.errorDescription ?? '') ? 'cancelled' : 'expired';
      finish({ id: questionId, status, answer: null }, 'polling');
    } else if (r.status !== 200 && r.status < 500 && r.status !== 408 && r.status !== 429)
      fail(`GET /ask-question/${questionId} failed: HTTP ${r.status}: ${r.body?.errorDescription ?? r.text}`);
  }
}

server.listen(Number(env.BELFRY_LISTEN_PORT ?? 0), env.BELFRY_LISTEN_HOST ?? '127.0.0.1', async () => {
  const { address, port } = server.address();
  const host = address.includes(':') ? `[${address}]` : address;
  const callbackUrl = env.BELFRY_CALLBACK_URL || `http://${host}:${port}${CALLBACK_PATH}`;
  const body = {
    question,
    options,
    timeout_sec: Number(env.BELFRY_TIMEOUT_S ?? 3600),
    callbackUrl,
    callbackSecret: secret,
    ...(env.BELFRY_CLIENT_MESSAGE_ID ? { clientMessageId: env.BELFRY_CLIENT_MESSAGE_ID } : {}),
  };
  let r;
  try {
    r = await api('POST', '/ask', body);
  } catch (e) {
    return fail(`POST /ask failed: ${e.message}`);
  }
  if (r.status !== 200)
    return fail(`POST /ask failed: HTTP ${r.status}: ${r.body?.errorDescription ?? r.text}`);
  questionId = r.body.id;
  console.error(`ask.mjs: question ${questionId} asked; waiting for the callback on ${callbackUrl}`);
  if (early.has(questionId)) return finish(early.get(questionId), 'callback');
  // A repeated clientMessageId returns a question that may already be over.
  if (r.body.status !== 'pending') {
    const rec = await api('GET', `/ask-question/${questionId}`);
    finish(
      rec.status === 200 ? rec.body : { id: questionId, status: r.body.status, answer: null },
      'polling',
    );
  }
  void poll();
});

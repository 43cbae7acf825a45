import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../server/lib/clock';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

// The client examples of docs/questions.md, run as the outside processes they are (real time, real HTTP)
// against a real server: the script asks, the test answers (or cancels) as the channel owner, and the
// script's stdout and exit status are what the docs promise.
const EXAMPLES = resolve(import.meta.dirname, '../../docs/examples');
/** The scripts poll this often (seconds): fast enough to keep each run well under a second. */
const FAST_POLL_S = '0.05';

let t: TestServer;
let dev: string;
let appid: number;
let key: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  // The server's clock at real time: ask.mjs refuses callbacks whose X-Belfry-Timestamp is 5 minutes off.
  t = await startTestServer({ clock: new ManualClock(Date.now()) });
  dev = (await deviceToken(t)).token;
  appid = (await makeChannel(t, dev, { name: 'deploys' })).id;
  // A key of its own for the scripts, as a user would issue one (write only: asking needs no read).
  const k = await t.request('POST', `/application/${appid}/token`, {
    token: dev,
    json: { name: 'deploy script', canWrite: true },
  });
  expect(k.status).toBe(200);
  key = k.body.token;
});
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
});
afterAll(async () => {
  await t.close();
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit status once the process has exited and its output is read. */
  exit: Promise<number | null>;
}

function run(command: string, args: string[], env: Record<string, string>): Run {
  const child = spawn(command, args, {
    // Only what the scripts need: nothing of the parent's BELFRY_* leaks in.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BELFRY_URL: t.url, BELFRY_KEY: key, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const exit = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

const askSh = (args: string[], env: Record<string, string> = {}) =>
  run(resolve(EXAMPLES, 'ask.sh'), args, { BELFRY_POLL_S: FAST_POLL_S, ...env });
const askMjs = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [resolve(EXAMPLES, 'ask.mjs'), ...args], env);

let seenMessages = 0;
/**
 * Waits (through the API, as the owner) for the script's question to arrive as the channel's next message
 * and returns the question record read with the owner's device token.
 */
async function nextQuestion(r: Run): Promise<any> {
  const list = () => t.request('GET', `/application/${appid}/message`, { token: dev });
  await expect
    .poll(async () => {
      // A script that died before asking would leave this poll waiting for nothing: show why.
      if (r.child.exitCode !== null) throw new Error(`the script exited ${r.child.exitCode}: ${r.stderr()}`);
      return (await list()).body.messages.length;
    })
    .toBe(seenMessages + 1);
  seenMessages++;
  const [message] = (await list()).body.messages;
  const qid = message.extras['service::question'].id;
  const rec = await t.request('GET', `/ask-question/${qid}`, { token: dev });
  expect(rec.status).toBe(200);
  expect(rec.body).toMatchObject({ id: qid, appid, messageId: message.id, status: 'pending' });
  return rec.body;
}

async function answer(qid: number, value: unknown): Promise<void> {
  const res = await t.request('POST', `/ask-question/${qid}/answer`, { token: dev, json: { answer: value } });
  expect(res.status).toBe(200);
}

it('ask.sh asks a choice question, waits, prints the chosen option and exits 0 when the owner answers', async () => {
  const r = askSh(['Deploy 4.2 to production?', 'yes', 'no'], {
    BELFRY_TITLE: 'Release',
    BELFRY_TIMEOUT_S: '600',
  });
  const q = await nextQuestion(r);
  expect(q).toMatchObject({
    type: 'choice',
    title: 'Release',
    question: 'Deploy 4.2 to production?',
    options: ['yes', 'no'],
    timeout_sec: 600,
  });
  // It keeps polling while nobody has answered.
  await expect.poll(() => r.stderr()).toContain(`question ${q.id} asked; waiting for an answer`);
  expect(r.child.exitCode).toBeNull();
  await answer(q.id, 'no');
  expect(await r.exit).toBe(0);
  expect(r.stdout()).toBe('no\n');
});

it('ask.sh prints a free-text answer as plain text, quotes and line breaks decoded', async () => {
  const r = askSh(['What went wrong with "4.2"?']);
  const q = await nextQuestion(r);
  expect(q).toMatchObject({ type: 'text', question: 'What went wrong with "4.2"?', options: [] });
  await answer(q.id, 'rolled back to "4.1"\nsee C:\\logs\tnow');
  expect(await r.exit).toBe(0);
  expect(r.stdout()).toBe('rolled back to "4.1"\nsee C:\\logs\tnow\n');
});

it('ask.sh prints nothing and exits 2 when the question is cancelled', async () => {
  const r = askSh(['Restart the database?', 'yes', 'no']);
  const q = await nextQuestion(r);
  const del = await t.request('DELETE', `/ask-question/${q.id}`, { token: dev });
  expect(del.status).toBe(200);
  expect(await r.exit).toBe(2);
  expect(r.stdout()).toBe('');
  expect(r.stderr()).toContain('question cancelled');
});

it('ask.sh exits 1 with the server error when the key is refused', async () => {
  const r = askSh(['Anyone there?', 'yes'], { BELFRY_KEY: 'AnotAkeyOfThisServer00' });
  expect(await r.exit).toBe(1);
  expect(r.stdout()).toBe('');
  expect(r.stderr()).toMatch(/POST \/ask failed: HTTP 401: /);
});

it('ask.mjs gets the answer on its signed callback, refuses a forged one and exits 0', async () => {
  // Polling every 10 minutes: within this test only the callback can bring the answer.
  const r = askMjs(['Scale the workers to 8?', 'yes', 'no'], { BELFRY_POLL_S: '600' });
  const q = await nextQuestion(r);
  expect(q).toMatchObject({ type: 'choice', options: ['yes', 'no'] });
  await expect.poll(() => r.stderr()).toMatch(/waiting for the callback on (http:\/\/127\.0\.0\.1:\d+\/\S+)/);
  const callbackUrl = /waiting for the callback on (\S+)/.exec(r.stderr())![1]!;

  // Someone without the secret cannot end the wait.
  const forged = JSON.stringify({
    id: q.id,
    status: 'answered',
    answer: 'yes',
    answeredAt: null,
    clientMessageId: null,
  });
  const ts = String(Math.floor(Date.now() / 1000));
  const refused = await fetch(callbackUrl, {
    method: 'POST',
    headers: { 'X-Belfry-Timestamp': ts, 'X-Belfry-Signature': `sha256=${'0'.repeat(64)}` },
    body: forged,
  });
  expect(refused.status).toBe(401);
  expect(r.child.exitCode).toBeNull();

  await answer(q.id, 'no');
  await expect
    .poll(async () => {
      await t.server.scheduler.tick();
      return r.child.exitCode;
    })
    .toBe(0);
  await r.exit;
  expect(r.stdout()).toBe('no\n');
  expect(r.stderr()).toContain(`question ${q.id} answered (learnt by callback)`);
  const log = await t.request('GET', `/application/${appid}/deliveries?status=sent`, { token: dev });
  expect(log.body.deliveries).toContainEqual(
    expect.objectContaining({ kind: 'callback', adapter: 'callback', status: 'sent', attempts: 1 }),
  );
});

it('ask.mjs falls back to polling when the callback cannot reach it', async () => {
  // A port nothing listens on: the server's callback fails (and waits for its retry), polling answers.
  const closed = createServer();
  await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((done) => closed.close(() => done()));
  const r = askMjs(['Rotate the logs?', 'yes', 'no'], {
    BELFRY_POLL_S: FAST_POLL_S,
    BELFRY_CALLBACK_URL: `http://127.0.0.1:${port}/belfry-callback`,
  });
  const q = await nextQuestion(r);
  await answer(q.id, 'yes');
  expect(await r.exit).toBe(0);
  expect(r.stdout()).toBe('yes\n');
  expect(r.stderr()).toContain(`question ${q.id} answered (learnt by polling)`);
});

// Last: it moves the server's clock ahead of real time (ask.mjs above checks callback timestamps against it).
it('ask.sh prints nothing and exits 2 when the question expires', async () => {
  const r = askSh(['Renew the certificate?', 'yes', 'no'], { BELFRY_TIMEOUT_S: '60' });
  const q = await nextQuestion(r);
  expect(q.expiresAt).toBe(new Date(t.clock.now() + 60_000).toISOString());
  t.clock.advance(60_000);
  await t.server.scheduler.tick();
  expect(await r.exit).toBe(2);
  expect(r.stdout()).toBe('');
  expect(r.stderr()).toContain('question expired');
});

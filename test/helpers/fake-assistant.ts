import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback OpenAI-compatible server for the assistant's provider (`BELFRY_ASSISTANT_URL`): it checks
 * what a real one would refuse (path `/v1/chat/completions`, the bearer key, the model, the messages'
 * shape, the temperature), records every request and answers what the test says.
 */
export interface ChatRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body as sent (the leak tests search it). */
  raw: string;
  body: { model: string; messages: { role: string; content: string }[]; temperature: number };
}

export type FakeAnswer =
  | { content: string }
  | { status: number; body?: unknown }
  /** Never answer (timeouts). */
  | { hang: true };

export interface FakeAssistant {
  /** Base URL to give as BELFRY_ASSISTANT_URL (ends in /v1). */
  url: string;
  model: string;
  key: string | undefined;
  requests: ChatRequest[];
  /** Refused requests with the reason (wrong path, key, model, shape). */
  refused: string[];
  /** How to answer the next requests (the last one set answers all later ones too). */
  answer(a: FakeAnswer | ((r: ChatRequest) => FakeAnswer)): void;
  close(): Promise<void>;
}

function shapeError(body: unknown, model: string): string | undefined {
  const b = body as ChatRequest['body'];
  if (!b || typeof b !== 'object') return 'body is not an object';
  if (b.model !== model) return `model ${JSON.stringify(b.model)} not found`;
  if (b.temperature !== 0.2) return `temperature ${b.temperature}`;
  if (!Array.isArray(b.messages) || b.messages.length < 2)
    return 'messages: at least a system and a user message';
  for (const m of b.messages)
    if (!m || typeof m.content !== 'string' || !['system', 'user', 'assistant'].includes(m.role))
      return `messages: bad entry ${JSON.stringify(m)}`;
  if (b.messages[0]!.role !== 'system') return 'messages[0] must be the system prompt';
  if (b.messages.slice(1).some((m) => m.role === 'system')) return 'one system message only';
  if (b.messages.at(-1)!.role !== 'user') return 'the last message must be the user';
  return undefined;
}

export async function startFakeAssistant(
  opts: { model?: string; key?: string } = {},
): Promise<FakeAssistant> {
  const model = opts.model ?? 'fake-llama';
  const requests: ChatRequest[] = [];
  const refused: string[] = [];
  let answer: FakeAnswer | ((r: ChatRequest) => FakeAnswer) = { content: 'fake reply' };
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const refuse = (status: number, why: string) => {
        refused.push(why);
        send(status, { error: { message: why } });
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
        return refuse(404, `no route ${req.method} ${req.url}`);
      if (opts.key !== undefined && req.headers.authorization !== `Bearer ${opts.key}`)
        return refuse(401, `bad authorization ${req.headers.authorization ?? '(none)'}`);
      if (opts.key === undefined && req.headers.authorization !== undefined)
        return refuse(400, 'unexpected authorization header');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return refuse(400, 'body is not JSON');
      }
      const bad = shapeError(body, model);
      if (bad) return refuse(400, bad);
      const rec: ChatRequest = {
        path: req.url,
        headers: req.headers,
        raw,
        body: body as ChatRequest['body'],
      };
      requests.push(rec);
      const a = typeof answer === 'function' ? answer(rec) : answer;
      if ('hang' in a) {
        hanging.add(res);
        return;
      }
      if ('status' in a) return send(a.status, a.body ?? { error: { message: 'fake failure' } });
      send(200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: a.content }, finish_reason: 'stop' }],
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    model,
    key: opts.key,
    requests,
    refused,
    answer(a) {
      answer = a;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

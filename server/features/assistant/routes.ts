import type { Request } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { parseBody, parseQuery } from '../../http/validate';
import { rfc3339 } from '../../lib/clock';
import { chat, insights, messagesOf, removeThread, threadsOf } from './service';
import type { AssistantMessageRow, ThreadRow } from './store';

const LANG = z.enum(['en', 'ru'], { message: 'must be en or ru' });
const chatBody = z.object({
  threadId: z.number({ message: 'must be a thread id' }).int().positive().optional(),
  message: z
    .string({ message: 'required, 1-4,000 characters' })
    .max(4_000, 'at most 4,000 characters')
    .refine((s) => s.trim() !== '', 'required, 1-4,000 characters'),
  lang: LANG.optional(),
});
const FLAG = z.enum(['0', '1', 'true', 'false'], { message: 'must be 1 or 0' }).optional();
const insightsQuery = z.object({ refresh: FLAG, polish: FLAG, lang: LANG.optional() });

/** User-level class (§0.2): device token or unscoped API token (`read` for GET, `write` otherwise). */
const WRITE = { ...TOK, access: 'write' } as const;

/** A thread id in the path; anything but a positive integer names no thread. */
function threadParam(req: Request): number {
  const raw = req.params.id;
  const n = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw errors.notFound('thread');
  return n;
}

const presentThread = (t: ThreadRow) => ({
  id: t.id,
  title: t.title,
  createdAt: rfc3339(t.created_at),
  updatedAt: rfc3339(t.updated_at),
});
const presentMessage = (m: AssistantMessageRow) => ({
  id: m.id,
  role: m.role,
  content: m.content,
  createdAt: rfc3339(m.created_at),
});
const on = (v: string | undefined) => v === '1' || v === 'true';

export function assistantRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'assistant');
  t.get('/assistant/threads', TOK, (req) => threadsOf(ctx, principalOf(req)).map(presentThread));
  t.get('/assistant/threads/:id/messages', TOK, (req) =>
    messagesOf(ctx, principalOf(req), threadParam(req)).map(presentMessage),
  );
  t.delete('/assistant/threads/:id', WRITE, (req) => {
    removeThread(ctx, principalOf(req), threadParam(req));
    return {};
  });
  t.post('/assistant/chat', WRITE, (req) => chat(ctx, principalOf(req), parseBody(req, chatBody)));
  t.get('/assistant/insights', TOK, (req) => {
    const q = parseQuery(req, insightsQuery);
    return insights(ctx, principalOf(req), {
      refresh: on(q.refresh),
      polish: on(q.polish),
      lang: q.lang ?? 'en',
    });
  });
  return t;
}

import { z } from 'zod';
import { errors } from '../../http/errors';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import type { QuestionType } from './store';

/** Limits of POST /ask (wire rules §7.1). */
export const QUESTION_MAX_CHARS = 4_000;
export const QUESTION_TITLE_MAX = 1_000;
export const OPTIONS_MAX = 10;
export const OPTION_MAX_CHARS = 100;
export const FIELDS_MAX = 20;
export const TIMEOUT_MAX_SEC = 86_400;
export const DEFAULT_TIMEOUT_SEC = 3_600;
export const NEXT_DEPTH_MAX = 5;
export const CLIENT_ID_MAX = 200;
export const CALLBACK_SECRET_MAX = 200;
export const CALLBACK_URL_MAX = 2_000;
export const TEXT_ANSWER_MAX = 10_000;
export const DEFAULT_TITLE = 'Question';

export const FIELD_TYPES = [
  'text',
  'textarea',
  'number',
  'boolean',
  'select',
  'multiselect',
  'date',
  'email',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FormField {
  name: string;
  label: string;
  type: FieldType;
  required: boolean;
  options?: string[];
  default?: unknown;
  placeholder?: string;
}

/** What an answer is checked against (a stored question or one being asked). */
export interface AnswerShape {
  type: QuestionType;
  options: string[];
  fields: FormField[];
  format: 'text' | 'json';
}

/** A validated POST /ask body; `title`, `priority` and the callback are undefined when absent (inherited). */
export interface AskSpec extends AnswerShape {
  question: string;
  title: string | undefined;
  defaultOption: string | null;
  multiSelect: boolean;
  timeoutSec: number;
  /** Absent (null in the body) when undefined. */
  defaultAnswer: unknown;
  next: Record<string, AskSpec>;
  clientMessageId: string | null;
  callbackUrl: string | null | undefined;
  callbackSecret: string | null | undefined;
  priority: number | undefined;
}

const chars = (n: number) => `at most ${n} characters`;

const fieldSchema = z.object({
  name: z
    .string({ error: 'required' })
    .regex(/^[A-Za-z0-9_]{1,40}$/, '1-40 characters of A-Z, a-z, 0-9 and _'),
  label: z.string({ error: 'must be a string' }).max(200, chars(200)).nullish(),
  type: z.enum(FIELD_TYPES, { error: `must be one of ${FIELD_TYPES.join(', ')}` }),
  required: z.boolean({ error: 'must be a boolean' }).nullish(),
  options: z
    .array(z.string({ error: 'must be a string' }).min(1, 'required').max(OPTION_MAX_CHARS, chars(100)), {
      error: 'must be an array of strings',
    })
    .max(50, 'at most 50 options')
    .nullish(),
  default: z.unknown().optional(),
  placeholder: z.string({ error: 'must be a string' }).max(200, chars(200)).nullish(),
});

const askSchema = z.object({
  question: z
    .string({ error: 'required' })
    .min(1, 'required')
    .max(QUESTION_MAX_CHARS, chars(QUESTION_MAX_CHARS)),
  title: z.string({ error: 'must be a string' }).max(QUESTION_TITLE_MAX, chars(QUESTION_TITLE_MAX)).nullish(),
  options: z
    .array(
      z
        .string({ error: 'must be a string' })
        .min(1, 'required')
        .max(OPTION_MAX_CHARS, chars(OPTION_MAX_CHARS)),
      { error: 'must be an array of strings' },
    )
    .max(OPTIONS_MAX, `at most ${OPTIONS_MAX} options`)
    .nullish(),
  defaultOption: z.string({ error: 'must be a string' }).nullish(),
  multiSelect: z.boolean({ error: 'must be a boolean' }).nullish(),
  fields: z
    .array(fieldSchema, { error: 'must be an array of fields' })
    .max(FIELDS_MAX, `at most ${FIELDS_MAX} fields`)
    .nullish(),
  format: z.enum(['text', 'json'], { error: 'must be text or json' }).nullish(),
  timeout_sec: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, `must be 1-${TIMEOUT_MAX_SEC}`)
    .max(TIMEOUT_MAX_SEC, `must be 1-${TIMEOUT_MAX_SEC}`)
    .nullish(),
  defaultAnswer: z.unknown().optional(),
  next: z.record(z.string(), z.unknown(), { error: 'must be an object' }).nullish(),
  clientMessageId: z
    .string({ error: 'must be a string' })
    .min(1, `must be 1-${CLIENT_ID_MAX} characters`)
    .max(CLIENT_ID_MAX, `must be 1-${CLIENT_ID_MAX} characters`)
    .nullish(),
  callbackUrl: z
    .string({ error: 'must be an http(s) URL' })
    .max(CALLBACK_URL_MAX, chars(CALLBACK_URL_MAX))
    .nullish(),
  callbackSecret: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(CALLBACK_SECRET_MAX, chars(CALLBACK_SECRET_MAX))
    .nullish(),
  priority: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(PRIORITY_MIN, `must be ${PRIORITY_MIN}-${PRIORITY_MAX}`)
    .max(PRIORITY_MAX, `must be ${PRIORITY_MIN}-${PRIORITY_MAX}`)
    .nullish(),
});

/** `fields[2].name`, `next.yes.question`: the nested field names of §0.1. */
function pathText(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function bad(field: string, problem: string) {
  return errors.badRequest(`${field}: ${problem}`);
}

/** `fields: cannot be combined with options` style checks, with `prefix` for follow-ups (`next.yes.`). */
export function parseAsk(body: unknown, prefix = '', depth = 0): AskSpec {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw errors.badRequest(prefix === '' ? 'body: must be a JSON object' : `${prefix}: must be an object`);
  const r = askSchema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw errors.badRequest(`${pathText(prefix, issue.path)}: ${issue.message}`);
  }
  const b = r.data;
  const at = (f: string) => (prefix === '' ? f : `${prefix}.${f}`);
  const options = b.options ?? [];
  if (new Set(options).size !== options.length) throw bad(at('options'), 'must be distinct');
  const rawFields = b.fields ?? [];
  if (rawFields.length > 0 && options.length > 0) throw bad(at('fields'), 'cannot be combined with options');
  const names = new Set<string>();
  const fields: FormField[] = rawFields.map((f, i) => {
    const where = `${at('fields')}[${i}]`;
    if (names.has(f.name)) throw bad(`${where}.name`, 'must be distinct');
    names.add(f.name);
    const field: FormField = {
      name: f.name,
      label: f.label ?? f.name,
      type: f.type,
      required: f.required ?? false,
    };
    if (f.type === 'select' || f.type === 'multiselect') {
      if (!f.options || f.options.length === 0) throw bad(`${where}.options`, 'required for select fields');
      if (new Set(f.options).size !== f.options.length) throw bad(`${where}.options`, 'must be distinct');
      field.options = f.options;
    }
    if (f.placeholder !== undefined && f.placeholder !== null) field.placeholder = f.placeholder;
    if (f.default !== undefined && f.default !== null)
      field.default = checkFieldValue(field, f.default, `${where}.default`);
    return field;
  });
  const multiSelect = b.multiSelect ?? false;
  if (multiSelect && options.length === 0) throw bad(at('multiSelect'), 'needs options');
  const defaultOption = b.defaultOption ?? null;
  if (defaultOption !== null && !options.includes(defaultOption))
    throw bad(at('defaultOption'), 'must be one of options');
  const type: QuestionType =
    options.length > 0 ? (multiSelect ? 'multi' : 'choice') : fields.length > 0 ? 'form' : 'text';
  const format = b.format ?? 'text';
  if (format === 'json' && type !== 'text') throw bad(at('format'), 'json is only for free-text questions');
  if (b.callbackUrl !== undefined && b.callbackUrl !== null && !isHttpUrl(b.callbackUrl))
    throw bad(at('callbackUrl'), 'must be an http(s) URL');
  if (b.callbackSecret && !b.callbackUrl) throw bad(at('callbackSecret'), 'needs callbackUrl');
  const shape: AnswerShape = { type, options, fields, format };
  const defaultAnswer =
    b.defaultAnswer === undefined || b.defaultAnswer === null
      ? null
      : checkAnswer(shape, b.defaultAnswer, at('defaultAnswer'));
  const next: Record<string, AskSpec> = {};
  const rawNext = b.next ?? {};
  const keys = Object.keys(rawNext);
  if (keys.length > 0) {
    if (type !== 'choice') throw bad(at('next'), 'only for single-choice questions (options)');
    if (depth >= NEXT_DEPTH_MAX)
      throw bad(at('next'), `follow-ups nest at most ${NEXT_DEPTH_MAX} levels deep`);
    for (const k of keys) {
      if (!options.includes(k)) throw bad(`${at('next')}.${k}`, 'not one of options');
      next[k] = parseAsk(rawNext[k], `${at('next')}.${k}`, depth + 1);
    }
  }
  return {
    ...shape,
    question: b.question,
    title: b.title ?? undefined,
    defaultOption,
    multiSelect,
    timeoutSec: b.timeout_sec ?? DEFAULT_TIMEOUT_SEC,
    defaultAnswer,
    next,
    clientMessageId: b.clientMessageId ?? null,
    callbackUrl: b.callbackUrl,
    callbackSecret: b.callbackSecret,
    priority: b.priority ?? undefined,
  };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const quoteList = (xs: readonly string[]) => xs.join(', ');

/**
 * Checks an answer against the question (§7.3) and returns the value stored: the option, the options, the
 * form's known fields (numbers as numbers), the text, or the parsed JSON. Throws 400 `<field>: <problem>`.
 */
export function checkAnswer(q: AnswerShape, value: unknown, field = 'answer'): unknown {
  if (value === undefined || value === null) throw bad(field, 'required');
  switch (q.type) {
    case 'choice':
      if (typeof value !== 'string' || !q.options.includes(value))
        throw bad(field, `must be one of ${quoteList(q.options)}`);
      return value;
    case 'multi': {
      const ok =
        Array.isArray(value) &&
        value.length > 0 &&
        value.every((v) => typeof v === 'string' && q.options.includes(v)) &&
        new Set(value).size === value.length;
      if (!ok) throw bad(field, 'must be an array of options');
      return value;
    }
    case 'form': {
      if (typeof value !== 'object' || Array.isArray(value)) throw bad(field, 'must be an object');
      const given = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of q.fields) {
        const v = given[f.name];
        const empty = v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
        if (empty) {
          if (f.required) throw bad(`${field}.${f.name}`, 'required');
          continue;
        }
        out[f.name] = checkFieldValue(f, v, `${field}.${f.name}`);
      }
      return out;
    }
    case 'text':
      if (q.format === 'json') {
        if (typeof value !== 'string') return value;
        try {
          return JSON.parse(value) as unknown;
        } catch {
          throw bad(field, 'not valid JSON');
        }
      }
      if (typeof value !== 'string' || value.length === 0 || value.length > TEXT_ANSWER_MAX)
        throw bad(field, `must be a string of 1-${TEXT_ANSWER_MAX} characters`);
      return value;
  }
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** One form value by its field's type; numbers may come as numeric strings (HTML forms). */
function checkFieldValue(f: FormField, v: unknown, where: string): unknown {
  switch (f.type) {
    case 'text':
    case 'textarea':
      if (typeof v !== 'string' || v.length > TEXT_ANSWER_MAX)
        throw bad(where, `must be a string of at most ${TEXT_ANSWER_MAX} characters`);
      return v;
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
      if (!Number.isFinite(n)) throw bad(where, 'must be a number');
      return n;
    }
    case 'boolean':
      if (typeof v !== 'boolean') throw bad(where, 'must be a boolean');
      return v;
    case 'select':
      if (typeof v !== 'string' || !f.options?.includes(v))
        throw bad(where, `must be one of ${quoteList(f.options ?? [])}`);
      return v;
    case 'multiselect': {
      const ok =
        Array.isArray(v) &&
        v.every((x) => typeof x === 'string' && f.options?.includes(x)) &&
        new Set(v).size === v.length;
      if (!ok) throw bad(where, 'must be an array of options');
      return v;
    }
    case 'date':
      if (typeof v !== 'string' || !DATE_RE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))
        throw bad(where, 'must be a date (YYYY-MM-DD)');
      return v;
    case 'email':
      if (typeof v !== 'string' || v.length > 320 || !EMAIL_RE.test(v))
        throw bad(where, 'must be an email address');
      return v;
  }
}

/**
 * The pure side of a question card (wire-families §7): reading `extras["service::question"]`, the form's
 * values and their validation (mirroring the server's 400 texts), the countdown and the answer as text.
 */
import type {
  QuestionExtra,
  QuestionField,
  QuestionFieldType,
  QuestionRecord,
  QuestionStatus,
  QuestionType,
} from '../../api/types';

export const QUESTION_EXTRA = 'service::question';
const TYPES: readonly QuestionType[] = ['choice', 'multi', 'form', 'text'];
const FIELD_TYPES: readonly QuestionFieldType[] = [
  'text',
  'textarea',
  'number',
  'boolean',
  'select',
  'multiselect',
  'date',
  'email',
];
export const TEXT_ANSWER_MAX = 10_000;

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/** The question a message carries, or null when its extras hold none (or a malformed one). */
export function questionOf(extras: Record<string, unknown> | undefined): QuestionExtra | null {
  const q = extras?.[QUESTION_EXTRA];
  if (typeof q !== 'object' || q === null || Array.isArray(q)) return null;
  const r = q as Record<string, unknown>;
  const type = TYPES.find((t) => t === r.type);
  if (!type || typeof r.id !== 'number' || typeof r.expiresAt !== 'string') return null;
  const fields = (Array.isArray(r.fields) ? r.fields : []).flatMap((f): QuestionField[] => {
    if (typeof f !== 'object' || f === null) return [];
    const x = f as Record<string, unknown>;
    const ftype = FIELD_TYPES.find((t) => t === x.type);
    if (typeof x.name !== 'string' || !ftype) return [];
    return [
      {
        name: x.name,
        type: ftype,
        ...(typeof x.label === 'string' && x.label ? { label: x.label } : {}),
        required: x.required === true,
        options: strings(x.options),
        ...('default' in x && x.default !== undefined && x.default !== null ? { default: x.default } : {}),
        ...(typeof x.placeholder === 'string' && x.placeholder ? { placeholder: x.placeholder } : {}),
      },
    ];
  });
  return {
    id: r.id,
    type,
    options: strings(r.options),
    defaultOption: typeof r.defaultOption === 'string' ? r.defaultOption : null,
    multiSelect: r.multiSelect === true,
    fields,
    format: r.format === 'json' ? 'json' : 'text',
    expiresAt: r.expiresAt,
  };
}

/** What a form field holds while it is edited. */
export type FieldValue = string | boolean | string[];
export type FormValues = Record<string, FieldValue>;

export const fieldLabel = (f: QuestionField): string => f.label || f.name;

/** The starting values: each field's `default` where it has one of the right kind, else empty. */
export function initialValues(fields: readonly QuestionField[]): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    const d = f.default;
    if (f.type === 'boolean') out[f.name] = d === true || d === 'true';
    else if (f.type === 'multiselect')
      out[f.name] = strings(Array.isArray(d) ? d : typeof d === 'string' ? [d] : []);
    else out[f.name] = typeof d === 'string' || typeof d === 'number' ? String(d) : '';
  }
  return out;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The form's answer `{field: value}`, or the errors per field name in the server's words
 * (`required`, `must be a number`, …). Empty optional fields are left out.
 */
export function formAnswer(
  fields: readonly QuestionField[],
  values: FormValues,
): { answer: Record<string, unknown>; errors: Record<string, string> } {
  const answer: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.type === 'boolean') {
      answer[f.name] = v === true;
      continue;
    }
    if (f.type === 'multiselect') {
      const picked = Array.isArray(v) ? v : [];
      if (picked.length === 0) {
        if (f.required) errors[f.name] = 'required';
        continue;
      }
      answer[f.name] = picked;
      continue;
    }
    const s = typeof v === 'string' ? v : '';
    if (s.trim() === '') {
      if (f.required) errors[f.name] = 'required';
      continue;
    }
    if (f.type === 'number') {
      const n = Number(s.trim());
      if (!Number.isFinite(n)) errors[f.name] = 'must be a number';
      else answer[f.name] = n;
    } else if (f.type === 'email') {
      if (!EMAIL.test(s.trim())) errors[f.name] = 'must be an email address';
      else answer[f.name] = s.trim();
    } else if (f.type === 'date') {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) errors[f.name] = 'must be a date (YYYY-MM-DD)';
      else answer[f.name] = s;
    } else if (f.type === 'select') {
      if ((f.options ?? []).length > 0 && !f.options?.includes(s))
        errors[f.name] = 'must be one of the options';
      else answer[f.name] = s;
    } else answer[f.name] = s;
  }
  return { answer, errors };
}

/** The field a server 400 names (`answer.{field}: …`), with the rest of its text; else null. */
export function fieldErrorOf(message: string): { field: string; text: string } | null {
  const m = /^answer\.([A-Za-z0-9_]+):\s*(.*)$/.exec(message);
  return m ? { field: m[1] as string, text: m[2] as string } : null;
}

/** A free-text answer's problem, or null: 1-10,000 characters, JSON when the question asks for JSON. */
export function textAnswerProblem(text: string, format: 'text' | 'json'): string | null {
  if (text.trim() === '') return 'answer: required';
  if (text.length > TEXT_ANSWER_MAX) return `answer: at most ${TEXT_ANSWER_MAX} characters`;
  if (format === 'json') {
    try {
      JSON.parse(text);
    } catch {
      return 'answer: not valid JSON';
    }
  }
  return null;
}

/** Time left as `2 d 03:04:05`, `1:02:03` or `4:05`; "expired" at or past zero. */
export function countdown(expiresAt: string, now: number): string {
  const left = Math.ceil((Date.parse(expiresAt) - now) / 1000);
  if (!Number.isFinite(left) || left <= 0) return 'expired';
  const d = Math.floor(left / 86_400);
  const h = Math.floor((left % 86_400) / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  if (d > 0) return `${d} d ${two(h)}:${two(m)}:${two(s)}`;
  if (h > 0) return `${h}:${two(m)}:${two(s)}`;
  return `${m}:${two(s)}`;
}

/** An answer as one line of text (form answers: see `answerRows`). */
export function answerText(answer: unknown): string {
  if (answer === null || answer === undefined) return '';
  if (typeof answer === 'string') return answer;
  if (Array.isArray(answer) && answer.every((a) => typeof a === 'string')) return answer.join(', ');
  if (typeof answer === 'boolean') return answer ? 'yes' : 'no';
  return JSON.stringify(answer);
}

/** A form answer as label/value rows in the form's field order (unknown keys after). */
export function answerRows(
  fields: readonly QuestionField[],
  answer: Record<string, unknown>,
): { label: string; value: string }[] {
  const known = new Set(fields.map((f) => f.name));
  return [
    ...fields
      .filter((f) => f.name in answer)
      .map((f) => ({ label: fieldLabel(f), value: answerText(answer[f.name]) })),
    ...Object.keys(answer)
      .filter((k) => !known.has(k))
      .map((k) => ({ label: k, value: answerText(answer[k]) })),
  ];
}

/** Who answered, as words after "Answered". */
export function answeredByText(by: QuestionRecord['answeredBy']): string {
  if (by === 'link') return 'through an answer link';
  if (by === 'default') return 'with the default answer when time ran out';
  if (by === 'user') return 'in Belfry';
  return '';
}

/** The status a 410's text names (`question expired` / `question cancelled`). */
export function goneStatus(message: string): QuestionStatus {
  return /cancel/i.test(message) ? 'cancelled' : 'expired';
}

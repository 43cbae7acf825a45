/** The page's preview of a rule against a mail (wire-families §0.1 patterns, §10 titles). */
import type { MailEvent, RuleMatch } from './types';

/** `/source/flags` as a RegExp; null when the text is a plain substring or the RegExp does not compile. */
export function asRegExp(pattern: string): RegExp | null | 'invalid' {
  const m = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (!m) return null;
  try {
    return new RegExp(m[1] as string, m[2]);
  } catch {
    return 'invalid';
  }
}

/** A pattern: `/re/flags` is a RegExp, anything else a case-insensitive substring. */
export function patternMatches(pattern: string, value: string): boolean {
  const re = asRegExp(pattern);
  if (re === 'invalid') return false;
  if (re) return re.test(value);
  return value.toLowerCase().includes(pattern.toLowerCase());
}

/** Which of a rule's patterns a mail fails (all present ones must match; none: every mail). */
export function failedPatterns(match: RuleMatch, mail: MailEvent): (keyof RuleMatch)[] {
  const values: Record<keyof RuleMatch, string> = { from: mail.from, subject: mail.subject, body: mail.text };
  return (Object.keys(values) as (keyof RuleMatch)[]).filter((k) => {
    const p = match[k];
    return p ? !patternMatches(p, values[k]) : false;
  });
}

/** The message title a rule makes: `{{subject}}`, `{{from}}`, `{{to}}`; empty template: the subject. */
export function renderTitle(template: string, mail: MailEvent): string {
  const subject = mail.subject || '(no subject)';
  if (!template.trim()) return subject;
  const vars: Record<string, string> = { subject, from: mail.from, to: mail.to };
  return template.replace(/\{\{\s*(subject|from|to)\s*\}\}/g, (_, k: string) => vars[k] ?? '');
}

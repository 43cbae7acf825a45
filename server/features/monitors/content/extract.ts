import { type CheerioAPI, load } from 'cheerio';
import { errors } from '../../../http/errors';

/** Longest text a content monitor keeps (`lastValue`, test answers): §2.3. */
export const CONTENT_TEXT_MAX_CHARS = 10_000;
/** Longest CSS selector a content monitor accepts. */
export const SELECTOR_MAX_CHARS = 500;

export interface Extraction {
  /** textContent of every match, whitespace collapsed, trimmed, joined by "\n", at most 10,000 characters. */
  text: string;
  /** First number of `text` (spaces, NBSP and thousands commas removed), null when there is none. */
  number: number | null;
  /** How many elements the selector matched. */
  matched: number;
}

/** Whitespace runs (NBSP included: `\s` covers it) become one space; ends trimmed. */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The first `-?\d+(\.\d+)?` after removing spaces, NBSP and the commas that separate thousands. */
export function firstNumber(text: string): number | null {
  const compact = text.replace(/[\s\u00a0]+/g, '').replace(/(?<=\d),(?=\d{3}(?!\d))/g, '');
  const m = /-?\d+(\.\d+)?/.exec(compact);
  return m ? Number(m[0]) : null;
}

/**
 * Checks a CSS selector the way extraction will run it (cheerio's selector engine), so a typo is a 400
 * `selector: …` when the monitor is saved rather than a failing check later.
 */
export function validateSelector(selector: string, field = 'selector'): string {
  const s = selector.trim();
  if (s === '') throw errors.badRequest(`${field}: required`);
  if (s.length > SELECTOR_MAX_CHARS)
    throw errors.badRequest(`${field}: at most ${SELECTOR_MAX_CHARS} characters`);
  // css-what reads a dangling combinator ("div >") as a complete selector; browsers refuse it.
  if (/(^|[^\\])[>+~,]\s*$/.test(s))
    throw errors.badRequest(`${field}: invalid CSS selector (ends with "${s.at(-1)}")`);
  try {
    load('')(s);
  } catch (e) {
    throw errors.badRequest(`${field}: invalid CSS selector (${(e as Error).message})`);
  }
  return s;
}

/** The text of the elements a selector matches in an already parsed document. */
export function extractFrom($: CheerioAPI, selector: string): Extraction {
  const matches = $(selector);
  const parts: string[] = [];
  let length = 0;
  for (const el of matches.toArray()) {
    if (length > CONTENT_TEXT_MAX_CHARS) break;
    const part = collapseWhitespace($(el).text());
    parts.push(part);
    length += part.length + 1;
  }
  const text = parts.join('\n').slice(0, CONTENT_TEXT_MAX_CHARS);
  return { text, number: firstNumber(text), matched: matches.length };
}

/** Parses `html` and extracts `selector` (validated beforehand with validateSelector). */
export function extract(html: string, selector: string): Extraction {
  return extractFrom(load(html), selector);
}

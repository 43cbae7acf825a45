import { createHash } from 'node:crypto';

/**
 * Stack frames and fingerprints of web-script events (docs/api.md "Web scripts", issues): frames parsed
 * from Chrome (`    at fn (url:line:col)`) and Firefox (`fn@url:line:col`) stacks, the normalised
 * message and the fingerprint that groups events into issues. Pure functions, no state.
 */

export interface Frame {
  /** Function name, or undefined when the engine gives none. */
  fn: string | undefined;
  file: string;
  /** 1-based line and column, as browsers print them. */
  line: number;
  col: number;
}

const CHROME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?\s*$/;
const CHROME_NO_POS = /^\s*at (?:(.+?) \()?(.+?)\)?\s*$/;
const FIREFOX = /^\s*(.*?)@(.+?):(\d+):(\d+)\s*$/;

/** Chrome's `async fn`, `new Foo`, Firefox's `fn/<` and `fn*` carry the name inside. */
function cleanName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  let n = name.trim().replace(/^async /, '');
  n = n.replace(/\/<+$/, '').replace(/<\/?$/, '');
  n = n.replace(/ \[as [^\]]+\]$/, '');
  if (n === '' || n === '<anonymous>') return undefined;
  return n;
}

/** Frames of a stack, top first; lines that are neither format (the message line) are skipped. */
export function parseStack(stack: string | undefined): Frame[] {
  if (!stack) return [];
  const out: Frame[] = [];
  for (const raw of stack.split('\n')) {
    if (raw.length > 2000) continue;
    let m = CHROME.exec(raw);
    if (m) {
      let file = m[2]!;
      // `at eval (eval at f (url:1:2), <anonymous>:1:1)`: the frame of the code that called eval.
      const inner = /\(([^()]+?):(\d+):(\d+)\)/.exec(file);
      if (file.startsWith('eval at') && inner) {
        out.push({ fn: cleanName(m[1]), file: inner[1]!, line: Number(inner[2]), col: Number(inner[3]) });
        continue;
      }
      if (file.startsWith('(')) file = file.slice(1);
      out.push({ fn: cleanName(m[1]), file, line: Number(m[3]), col: Number(m[4]) });
      continue;
    }
    m = FIREFOX.exec(raw);
    if (m && !/^\s*at /.test(raw)) {
      out.push({ fn: cleanName(m[1]), file: m[2]!, line: Number(m[3]), col: Number(m[4]) });
      continue;
    }
    // `at <anonymous>` or `at native`: no position, nothing to group by.
    if (CHROME_NO_POS.test(raw)) continue;
  }
  return out;
}

/** A URL or path without its query and hash. */
export function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut < 0 ? url : url.slice(0, cut);
}

/** The path of a frame's file: no scheme, host, query or hash (`webpack:///src/a.ts` → `/src/a.ts`). */
export function pathOf(file: string): string {
  const bare = withoutQuery(file);
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(bare);
  if (m) return m[1] ?? '/';
  return bare;
}

/** The top frame as the fingerprint sees it: `path:function`, content hashes dropped, no position. */
export function topFrameKey(frame: Frame | undefined): string {
  if (!frame) return '';
  const file = pathOf(frame.file).replace(/[.-][0-9a-f]{8,}/g, '');
  return `${file}:${frame.fn ?? '?'}`;
}

const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()]+/gi;
const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX_RE = /\b(?:0x)?[0-9a-f]{8,}\b/gi;
const DIGITS_RE = /\d+/g;
const QUOTED_RE = /'[^'\n]*'|"[^"\n]*"|`[^`\n]*`/g;

/** The message as the fingerprint sees it (§9.2): `Uncaught ` dropped, URLs, ids, numbers and strings replaced. */
export function normaliseMessage(message: string): string {
  return message
    .replace(/^Uncaught /, '')
    .replace(URL_RE, '<url>')
    .replace(UUID_RE, '<id>')
    .replace(HEX_RE, '<id>')
    .replace(DIGITS_RE, '<n>')
    .replace(QUOTED_RE, '<str>');
}

/** hex SHA-256 (first 32) of `type \n normalised message \n top frame`. */
export function fingerprint(type: string, message: string, top: Frame | undefined): string {
  return createHash('sha256')
    .update(`${type}\n${normaliseMessage(message)}\n${topFrameKey(top)}`)
    .digest('hex')
    .slice(0, 32);
}

/** `{function} ({file}:{line}:{col})` of the (resolved) top frame; '' without one. */
export function culpritOf(frame: Frame | undefined): string {
  if (!frame) return '';
  return `${frame.fn ?? '?'} (${withoutQuery(frame.file)}:${frame.line}:${frame.col})`;
}

/** The first line of the message, at most 200 characters. */
export function titleOf(message: string): string {
  const first = message.split('\n', 1)[0]!.trim();
  return (first === '' ? message.trim() : first).slice(0, 200);
}

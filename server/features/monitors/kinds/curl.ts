import { parse } from 'shell-quote';
import { METHODS, type Method } from './http';

/** What a curl command line asks for, as the request fields of a workflow step. */
export interface CurlRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  body: string;
  basicAuth: { username: string; password: string } | null;
  followRedirects: boolean;
  ignoreTlsErrors: boolean;
}

/** Options whose value is the next word (or the rest of a short option: `-XPOST`, `-H'A: b'`). */
const WITH_VALUE = new Set([
  '-X',
  '--request',
  '-H',
  '--header',
  '-d',
  '--data',
  '--data-raw',
  '--data-binary',
  '--data-ascii',
  '--data-urlencode',
  '--json',
  '-u',
  '--user',
  '-A',
  '--user-agent',
  '-e',
  '--referer',
  '-b',
  '--cookie',
  '--url',
  // Taken and ignored: they say nothing about the request a step sends.
  '-o',
  '--output',
  '-w',
  '--write-out',
  '-m',
  '--max-time',
  '--connect-timeout',
  '--retry',
  '-x',
  '--proxy',
  '--resolve',
  '--cacert',
  '--cert',
  '--key',
  '-E',
  '-c',
  '--cookie-jar',
  '-T',
  '--upload-file',
  '-F',
  '--form',
  '--max-redirs',
  '-r',
  '--range',
]);
const SHORT_WITH_VALUE = new Set([...WITH_VALUE].filter((o) => /^-[A-Za-z]$/.test(o)).map((o) => o[1]));

/**
 * Parses a curl command line (POSIX shell quoting through shell-quote; `\` line continuations; `$VAR` kept as
 * written): `-X`, the URL (`--url` or the first bare word), `-H`, `-d`/`--data*`/`--json`, `-u`, `-L`, `-k`,
 * `-I`, `-G`, `-A`, `-e`, `-b`. Returns null when there is no URL.
 */
export function parseCurl(command: string): CurlRequest | { error: string } | null {
  // Only the first command of a pipeline or list (`curl … | jq .`) is read; comments are dropped.
  const take: string[] = [];
  for (const e of parse(command.replace(/\\\r?\n/g, ' '), (key) => `$${key}`)) {
    if (typeof e === 'string') take.push(e);
    else if ('pattern' in e) take.push(e.pattern);
    else if ('op' in e) break;
  }
  let i = take[0] === 'curl' || take[0]?.endsWith('/curl') ? 1 : 0;
  let method: string | null = null;
  let url: string | null = null;
  const headers: Record<string, string> = {};
  const data: string[] = [];
  let json = false;
  let basicAuth: CurlRequest['basicAuth'] = null;
  let followRedirects = false;
  let ignoreTlsErrors = false;
  let head = false;
  let getWithData = false;
  const option = (name: string, value: string) => {
    switch (name) {
      case '-X':
      case '--request':
        method = value.toUpperCase();
        break;
      case '-H':
      case '--header': {
        const colon = value.indexOf(':');
        if (colon > 0) headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
        break;
      }
      case '-d':
      case '--data':
      case '--data-raw':
      case '--data-binary':
      case '--data-ascii':
      case '--data-urlencode':
        data.push(value);
        break;
      case '--json':
        data.push(value);
        json = true;
        break;
      case '-u':
      case '--user': {
        const colon = value.indexOf(':');
        basicAuth =
          colon === -1
            ? { username: value, password: '' }
            : { username: value.slice(0, colon), password: value.slice(colon + 1) };
        break;
      }
      case '-A':
      case '--user-agent':
        headers['User-Agent'] = value;
        break;
      case '-e':
      case '--referer':
        headers.Referer = value;
        break;
      case '-b':
      case '--cookie':
        if (value.includes('=')) headers.Cookie = value;
        break;
      case '--url':
        url ??= value;
        break;
    }
  };
  const flag = (name: string) => {
    if (name === '-L' || name === '--location') followRedirects = true;
    else if (name === '-k' || name === '--insecure') ignoreTlsErrors = true;
    else if (name === '-I' || name === '--head') head = true;
    else if (name === '-G' || name === '--get') getWithData = true;
  };
  for (; i < take.length; i++) {
    const w = take[i]!;
    if (w.startsWith('--') && w.length > 2) {
      const eq = w.indexOf('=');
      const name = eq === -1 ? w : w.slice(0, eq);
      if (WITH_VALUE.has(name)) option(name, eq === -1 ? (take[++i] ?? '') : w.slice(eq + 1));
      else flag(name);
    } else if (w.startsWith('-') && w.length > 1) {
      // Short options, possibly bundled (`-sSL`) or with the value attached (`-XPOST`).
      for (let j = 1; j < w.length; j++) {
        const c = w[j]!;
        if (SHORT_WITH_VALUE.has(c)) {
          option(`-${c}`, j + 1 < w.length ? w.slice(j + 1) : (take[++i] ?? ''));
          break;
        }
        flag(`-${c}`);
      }
    } else url ??= w;
  }
  if (url === null) return null;
  const full = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(full);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { error: `${parsed.protocol.replace(/:$/, '')} URLs are not supported (http and https only)` };
  let body = data.join('&');
  if (getWithData && body !== '') {
    parsed.search = parsed.search ? `${parsed.search}&${body}` : `?${body}`;
    body = '';
  }
  if (json) {
    if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = 'application/json';
    if (!hasHeader(headers, 'accept')) headers.Accept = 'application/json';
  }
  const chosen = (method as string | null) ?? (head ? 'HEAD' : body !== '' ? 'POST' : 'GET');
  if (!(METHODS as readonly string[]).includes(chosen))
    return { error: `-X ${chosen} is not a supported method (${METHODS.join(', ')})` };
  return {
    method: chosen as Method,
    url: getWithData ? parsed.toString() : full,
    headers,
    body,
    basicAuth,
    followRedirects,
    ignoreTlsErrors,
  };
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

/** The first http(s) URL in free text, without trailing punctuation. */
export function firstUrl(text: string): string | null {
  const m = /https?:\/\/[^\s<>"'`]+/i.exec(text);
  if (!m) return null;
  const url = m[0].replace(/[.,;:!?)\]}]+$/, '');
  try {
    new URL(url);
    return url;
  } catch {
    return null;
  }
}

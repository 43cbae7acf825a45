/**
 * The Prometheus text exposition format 0.0.4 (docs/api.md, "Metrics"): what `POST /metric/{token}`
 * reads from a `text/plain` body. Every sample line is one point of its own series (name + labels);
 * `# HELP` gives a description, `# TYPE` and other comments are ignored. A line that cannot be read is
 * reported by its line number instead of failing the whole body, like a rejected JSON point.
 */

export interface PromSample {
  /** 1-based line of the body. */
  line: number;
  name: string;
  labels: Record<string, string>;
  /** As written: NaN and ±Inf are parsed (and rejected by the caller's validation). */
  value: number;
  /** The optional timestamp, unix ms. */
  timestampMs?: number;
}

export interface PromError {
  line: number;
  error: string;
}

export interface PromParse {
  /** Samples and unreadable sample lines, in body order: each is one index of the answer. */
  entries: (PromSample | PromError)[];
  /** `# HELP` docstrings by metric name (unescaped). */
  help: Map<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;
const INT = /^[+-]?\d+$/;

export function isPromSample(e: PromSample | PromError): e is PromSample {
  return 'name' in e;
}

/** A sample value: a Go float literal, `NaN`, `+Inf`, `-Inf` (`Inf` too); undefined when unreadable. */
export function parsePromValue(s: string): number | undefined {
  const lower = s.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (!FLOAT.test(s)) return undefined;
  return Number(s);
}

/** `\\` and `\n` in a HELP docstring; any other backslash stays as written. */
function unescapeHelp(s: string): string {
  return s.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
}

class LineError extends Error {}

/** One sample line → its sample; throws LineError with the problem. */
function parseSample(text: string, line: number): PromSample {
  let i = 0;
  const m = NAME.exec(text);
  if (!m) throw new LineError('metric name expected');
  const name = m[0];
  i = name.length;
  const skipBlanks = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  skipBlanks();
  const labels: Record<string, string> = {};
  if (text[i] === '{') {
    i++;
    for (;;) {
      skipBlanks();
      if (text[i] === '}') {
        i++;
        break;
      }
      const ln = LABEL_NAME.exec(text.slice(i));
      if (!ln) throw new LineError('label name expected');
      const label = ln[0];
      i += label.length;
      skipBlanks();
      if (text[i] !== '=') throw new LineError(`"=" expected after label ${label}`);
      i++;
      skipBlanks();
      if (text[i] !== '"') throw new LineError(`quoted value expected for label ${label}`);
      i++;
      let value = '';
      for (;;) {
        if (i >= text.length) throw new LineError(`unterminated value of label ${label}`);
        const c = text[i]!;
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const next = text[i + 1];
          if (next === 'n') value += '\n';
          else if (next === '\\' || next === '"') value += next;
          else if (next === undefined) throw new LineError(`unterminated value of label ${label}`);
          else value += `\\${next}`;
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      if (Object.hasOwn(labels, label)) throw new LineError(`label ${label} given twice`);
      labels[label] = value;
      skipBlanks();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        break;
      }
      throw new LineError('"," or "}" expected');
    }
  }
  const rest = text
    .slice(i)
    .trim()
    .split(/[ \t]+/);
  if (rest.length === 0 || rest[0] === '') throw new LineError('value expected');
  if (rest.length > 2) throw new LineError('unexpected text after the timestamp');
  const value = parsePromValue(rest[0]!);
  if (value === undefined) throw new LineError(`value is not a number: ${rest[0]!.slice(0, 40)}`);
  const sample: PromSample = { line, name, labels, value };
  if (rest.length === 2) {
    if (!INT.test(rest[1]!)) throw new LineError('timestamp must be an integer of milliseconds');
    sample.timestampMs = Number(rest[1]);
  }
  return sample;
}

export function parsePrometheus(body: string): PromParse {
  const entries: (PromSample | PromError)[] = [];
  const help = new Map<string, string>();
  const lines = body.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const text = lines[n]!.replace(/\r$/, '').trim();
    if (text === '') continue;
    if (text.startsWith('#')) {
      const m = /^#[ \t]+HELP[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]+(.*))?$/.exec(text);
      if (m) help.set(m[1]!, unescapeHelp(m[2] ?? ''));
      continue;
    }
    try {
      entries.push(parseSample(text, n + 1));
    } catch (err) {
      if (!(err instanceof LineError)) throw err;
      entries.push({ line: n + 1, error: err.message });
    }
  }
  return { entries, help };
}

/**
 * The HELP text that describes a series name: its own, or its family's for the `_bucket`, `_sum`,
 * `_count` (histograms, summaries) and `_total` (counters) samples.
 */
export function helpFor(help: ReadonlyMap<string, string>, name: string): string | undefined {
  const own = help.get(name);
  if (own !== undefined) return own;
  const m = /^(.+)_(?:bucket|sum|count|total|created)$/.exec(name);
  return m ? help.get(m[1]!) : undefined;
}

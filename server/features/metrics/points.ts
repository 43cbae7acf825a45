import { isPromSample, type PromParse } from './prometheus';

/** Limits of metrics (wire rules §8, §0.7), named once for the service, the routes and the tests. */
export const METRIC_SOURCES_PER_USER = 100;
export const SERIES_PER_SOURCE = 1_000;
export const POINTS_PER_REQUEST = 1_000;
export const TAGS_PER_POINT = 10;
export const TAG_KEY_MAX_CHARS = 64;
export const TAG_VALUE_MAX_CHARS = 200;
export const INGESTS_PER_MINUTE = 600;
/** `at` more than this ahead of the server's clock, or older than AT_MAX_AGE_MS: rejected. */
export const AT_MAX_AHEAD_MS = 5 * 60_000;
export const AT_MAX_AGE_MS = 90 * 86_400_000;
export const UNIT_MAX_CHARS = 20;
export const DESCRIPTION_MAX_CHARS = 500;
export const ALERT_MESSAGE_MAX_CHARS = 1_000;
export const ALERT_FOR_MAX_SEC = 86_400;
export const ALERTS_PER_SOURCE = 100;
export const SERIES_QUERY_MAX_BUCKETS = 1_440;
export const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:.-]{0,127}$/;
export const TAG_KEY_RE = /^[a-zA-Z_][a-zA-Z0-9_.-]*$/;

/** A point ready to store: its series key parts and its time (unix ms). */
export interface Point {
  index: number;
  /** How errors name it: `metrics[3]`, `line 12`. */
  ref: string;
  name: string;
  /** Sorted by key. */
  tags: [string, string][];
  value: number;
  at: number;
}

export interface Rejection {
  index: number;
  error: string;
}

export interface ParsedBody {
  points: Point[];
  rejected: Rejection[];
  /** Descriptions from `# HELP`, by metric name (text bodies only). */
  help?: ReadonlyMap<string, string>;
}

type Problem = { field: string; problem: string };

/** RFC 3339 with a time zone (Z or ±hh:mm), seconds and fractions optional. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** `at`/`from`/`to`: RFC 3339 or unix seconds (a number) → unix ms; undefined when neither. */
export function parseTime(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.round(v * 1000) : undefined;
  if (typeof v !== 'string' || !RFC3339.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Sorted tag pairs of a tag object, or the first problem. */
function tagsOf(raw: unknown): [string, string][] | Problem {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) return { field: 'tags', problem: 'must be an object' };
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > TAGS_PER_POINT) return { field: 'tags', problem: `at most ${TAGS_PER_POINT} tags` };
  const out: [string, string][] = [];
  for (const [k, v] of entries) {
    if (!TAG_KEY_RE.test(k) || k.length > TAG_KEY_MAX_CHARS)
      return {
        field: 'tags',
        problem: `tag names are letters, digits, _ . - (not first) and at most ${TAG_KEY_MAX_CHARS} characters`,
      };
    if (typeof v !== 'string') return { field: `tags.${k}`, problem: 'must be a string' };
    if (v.length > TAG_VALUE_MAX_CHARS)
      return { field: `tags.${k}`, problem: `at most ${TAG_VALUE_MAX_CHARS} characters` };
    out.push([k, v]);
  }
  out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return out;
}

function timeProblem(at: number, now: number): Problem | undefined {
  if (at > now + AT_MAX_AHEAD_MS) return { field: 'at', problem: 'more than 5 minutes ahead' };
  if (at < now - AT_MAX_AGE_MS) return { field: 'at', problem: 'older than 90 days' };
  return undefined;
}

/** One JSON point → a Point or its first problem. */
function jsonPoint(raw: unknown, index: number, now: number): Point | Problem {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { field: '', problem: 'must be an object' };
  const r = raw as Record<string, unknown>;
  if (r.name === undefined || r.name === null || r.name === '') return { field: 'name', problem: 'required' };
  if (typeof r.name !== 'string') return { field: 'name', problem: 'must be a string' };
  if (!NAME_RE.test(r.name))
    return { field: 'name', problem: 'must match ^[a-zA-Z_:][a-zA-Z0-9_:.-]{0,127}$' };
  if (typeof r.value !== 'number') return { field: 'value', problem: 'must be a number' };
  if (!Number.isFinite(r.value)) return { field: 'value', problem: 'must be finite' };
  let at = now;
  if (r.at !== undefined && r.at !== null) {
    const t = parseTime(r.at);
    if (t === undefined) return { field: 'at', problem: 'must be an RFC 3339 time or unix seconds' };
    const p = timeProblem(t, now);
    if (p) return p;
    at = t;
  }
  const tags = tagsOf(r.tags);
  if (!Array.isArray(tags)) return tags;
  return { index, ref: `metrics[${index}]`, name: r.name, tags, value: r.value, at };
}

/**
 * A JSON body: `{metrics: [...]}` or one point. A body that is neither, or more than
 * POINTS_PER_REQUEST points, is a whole-request error (thrown by the caller as 400): returned as string.
 */
export function parseJsonBody(body: unknown, now: number): ParsedBody | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'metrics: send {metrics: [...]} or one {name, value} object';
  const b = body as Record<string, unknown>;
  let list: unknown[];
  if ('metrics' in b) {
    if (!Array.isArray(b.metrics)) return 'metrics: must be an array';
    list = b.metrics;
  } else list = [b];
  if (list.length === 0) return 'metrics: at least one point';
  if (list.length > POINTS_PER_REQUEST) return `metrics: at most ${POINTS_PER_REQUEST} points`;
  const points: Point[] = [];
  const rejected: Rejection[] = [];
  for (let i = 0; i < list.length; i++) {
    const p = jsonPoint(list[i], i, now);
    if ('problem' in p)
      rejected.push({ index: i, error: `metrics[${i}]${p.field === '' ? '' : `.${p.field}`}: ${p.problem}` });
    else points.push(p);
  }
  return { points, rejected };
}

/** A Prometheus text body; `index` counts sample lines (readable or not) from 0. */
export function pointsOfProm(parsed: PromParse, now: number): ParsedBody | string {
  if (parsed.entries.length === 0) return 'metrics: no sample lines in the body';
  if (parsed.entries.length > POINTS_PER_REQUEST) return `metrics: at most ${POINTS_PER_REQUEST} points`;
  const points: Point[] = [];
  const rejected: Rejection[] = [];
  parsed.entries.forEach((e, index) => {
    const reject = (problem: string) => rejected.push({ index, error: `line ${e.line}: ${problem}` });
    if (!isPromSample(e)) {
      reject(e.error);
      return;
    }
    if (!NAME_RE.test(e.name)) {
      reject('name: at most 128 characters');
      return;
    }
    if (!Number.isFinite(e.value)) {
      reject('value: NaN and Inf are not accepted');
      return;
    }
    let at = now;
    if (e.timestampMs !== undefined) {
      const p = timeProblem(e.timestampMs, now);
      if (p) {
        reject(`timestamp: ${p.problem}`);
        return;
      }
      at = e.timestampMs;
    }
    const tags = tagsOf(e.labels);
    if (!Array.isArray(tags)) {
      reject(
        `${tags.field === 'tags' ? 'labels' : tags.field.replace(/^tags\./, 'label ')}: ${tags.problem}`,
      );
      return;
    }
    points.push({ index, ref: `line ${e.line}`, name: e.name, tags, value: e.value, at });
  });
  return { points, rejected, help: parsed.help };
}

/** Canonical tag text (sorted keys), as stored in metric_series.tags. */
export function tagsText(tags: readonly [string, string][]): string {
  if (tags.length === 0) return '{}';
  let s = '{';
  for (let i = 0; i < tags.length; i++) {
    if (i > 0) s += ',';
    s += `${JSON.stringify(tags[i]![0])}:${JSON.stringify(tags[i]![1])}`;
  }
  return `${s}}`;
}

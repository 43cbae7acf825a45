import net from 'node:net';
import { errors } from '../../../http/errors';
import { SECRET_MASK } from '../kind';

/**
 * Field readers for the kinds' `parse` (§0.1): wrong type, range or enum is 400 `<field>: <problem>`, with
 * nested paths (`steps[2].url: required`, `headers.X-Api-Key: …`). `path` is the field's full name.
 */
export function bad(path: string, problem: string): never {
  throw errors.badRequest(`${path}: ${problem}`);
}

export type Reader<T> = (v: unknown, path: string) => T;

/**
 * One field of a create (`prev` undefined: `required` enforced, else `def`) or a partial update (absent keeps
 * `prev`). `null` clears a nullable field and is a wrong type elsewhere.
 */
export function field<T>(
  body: Record<string, unknown>,
  key: string,
  path: string,
  read: Reader<T>,
  o: { prev: T | undefined; def?: T; required?: boolean; nullable?: boolean },
): T {
  const v = body[key];
  if (v === undefined) {
    if (o.prev !== undefined) return o.prev;
    if (o.required || o.def === undefined) bad(path, 'required');
    return o.def;
  }
  if (v === null) {
    if (o.nullable) return null as T;
    bad(path, o.required ? 'required' : 'must not be null');
  }
  return read(v, path);
}

export function str(o: { max: number; min?: number; trim?: boolean }): Reader<string> {
  return (v, path) => {
    if (typeof v !== 'string') bad(path, 'must be a string');
    const s = o.trim ? v.trim() : v;
    if (s.length < (o.min ?? 0)) bad(path, o.min === 1 ? 'required' : `at least ${o.min} characters`);
    if (s.length > o.max) bad(path, `at most ${o.max} characters`);
    return s;
  };
}

export function int(min: number, max: number): Reader<number> {
  return (v, path) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) bad(path, 'must be an integer');
    if (v < min || v > max) bad(path, `must be between ${min} and ${max}`);
    return v;
  };
}

export const bool: Reader<boolean> = (v, path) => {
  if (typeof v !== 'boolean') bad(path, 'must be true or false');
  return v;
};

export function oneOf<T extends string>(values: readonly T[], o: { upper?: boolean } = {}): Reader<T> {
  return (v, path) => {
    const s = typeof v === 'string' && o.upper ? v.toUpperCase() : v;
    if (typeof s !== 'string' || !values.includes(s as T)) bad(path, `must be one of ${values.join(', ')}`);
    return s as T;
  };
}

export function obj(v: unknown, path: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(path, 'must be an object');
  return v as Record<string, unknown>;
}

export function arr(v: unknown, path: string, max: number, min = 0): unknown[] {
  if (!Array.isArray(v)) bad(path, 'must be an array');
  if (v.length < min) bad(path, min === 1 ? 'at least one item' : `at least ${min} items`);
  if (v.length > max) bad(path, `at most ${max} items`);
  return v;
}

export const URL_MAX = 2_048;

/**
 * An absolute http/https URL. With `templated`, a URL holding `{{…}}` is checked once its variables are
 * known (at check time), not here.
 */
export function httpUrl(o: { templated?: boolean } = {}): Reader<string> {
  return (v, path) => {
    const s = str({ max: URL_MAX, min: 1, trim: true })(v, path);
    if (o.templated && s.includes('{{')) return s;
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      bad(path, 'must be an http or https URL');
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '')
      bad(path, 'must be an http or https URL');
    return s;
  };
}

/** A host name (≤ 253, letters, digits, `-`, `_`, dots) or an IP literal (IPv6 with or without brackets). */
export const hostName: Reader<string> = (v, path) => {
  const s = str({ max: 253, min: 1, trim: true })(v, path);
  const bare = s.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare)) return bare;
  const label = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
  if (!new RegExp(`^${label}(?:\\.${label})*\\.?$`).test(s))
    bad(path, 'must be a host name or an IP address');
  return s.toLowerCase();
};

/** §0.3: header names, variable names and cookie names that hold secrets. */
export const SECRET_NAME = /auth|cookie|token|secret|passw|api-?key/i;

export function maskByName(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, SECRET_NAME.test(k) ? SECRET_MASK : v]),
  );
}

/**
 * A map of string values (headers, variables). `"********"` keeps the stored value of the same name (headers
 * case-insensitively), §0.3; with nothing stored under that name it is refused rather than saved as stars.
 */
export function stringMap(o: {
  max: number;
  valueMax: number;
  prev: Record<string, string> | undefined;
  caseInsensitive?: boolean;
  name: (k: string, path: string) => void;
}): Reader<Record<string, string>> {
  return (v, path) => {
    const m = obj(v, path);
    const entries = Object.entries(m);
    if (entries.length > o.max) bad(path, `at most ${o.max} entries`);
    const out: Record<string, string> = {};
    for (const [k, raw] of entries) {
      const p = `${path}.${k}`;
      o.name(k, p);
      const val = str({ max: o.valueMax })(raw, p);
      if (val === SECRET_MASK) {
        const stored = storedValue(o.prev, k, o.caseInsensitive ?? false);
        if (stored === undefined) bad(p, `"${SECRET_MASK}" keeps the stored value, and none is stored`);
        out[k] = stored;
      } else out[k] = val;
    }
    return out;
  };
}

function storedValue(prev: Record<string, string> | undefined, key: string, ci: boolean): string | undefined {
  if (!prev) return undefined;
  if (Object.hasOwn(prev, key)) return prev[key];
  if (!ci) return undefined;
  const k = Object.keys(prev).find((n) => n.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : prev[k];
}

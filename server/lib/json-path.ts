/**
 * The one JSON path of the API (monitors, workflows, router, templates): `$`, `.key`, `["key"]`, `[n]`
 * (n ≥ 0); no wildcards or filters. Templates write the same path without `$` (`a.b[0]`).
 */
export type PathStep = string | number;

export const MISSING: unique symbol = Symbol('missing');

/** Parses a path into its steps, or returns an error text (`expected …`) for a malformed one. */
export function parseJsonPath(
  path: string,
  opts: { requireRoot?: boolean } = {},
): PathStep[] | { error: string } {
  const steps: PathStep[] = [];
  let i = 0;
  const s = path.trim();
  if (s.startsWith('$')) i = 1;
  else if (opts.requireRoot) return { error: 'must start with $' };
  else {
    // Template form: a leading key without a dot.
    const m = /^[^.[\]"\s]+/.exec(s);
    if (m) {
      steps.push(m[0]);
      i = m[0].length;
    } else if (s === '') return { error: 'empty path' };
  }
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      const m = /^[^.[\]"\s]+/.exec(s.slice(i + 1));
      if (!m) return { error: `expected a key after "." at ${i + 1}` };
      steps.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === '[') {
      const rest = s.slice(i);
      const index = /^\[(\d+)\]/.exec(rest);
      const quoted = /^\["((?:[^"\\]|\\.)*)"\]/.exec(rest);
      if (index) {
        const n = Number(index[1]);
        if (!Number.isSafeInteger(n)) return { error: `index too large at ${i}` };
        steps.push(n);
        i += index[0].length;
      } else if (quoted) {
        let key: string;
        try {
          key = JSON.parse(`"${quoted[1]}"`) as string;
        } catch {
          return { error: `bad quoted key at ${i}` };
        }
        steps.push(key);
        i += quoted[0].length;
      } else return { error: `expected [n] or ["key"] at ${i}` };
    } else return { error: `unexpected "${c}" at ${i}` };
  }
  return steps;
}

/** Follows parsed steps; MISSING when a step does not exist (a key on a non-object, an index past the end). */
export function followPath(value: unknown, steps: readonly PathStep[]): unknown {
  let cur: unknown = value;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(cur) || step >= cur.length) return MISSING;
      cur = cur[step];
    } else {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, step))
        return MISSING;
      cur = (cur as Record<string, unknown>)[step];
    }
  }
  return cur;
}

/** Evaluates `path` on `value`: the value found, or MISSING (a malformed path finds nothing too). */
export function evalJsonPath(value: unknown, path: string): unknown {
  const steps = parseJsonPath(path);
  return Array.isArray(steps) ? followPath(value, steps) : MISSING;
}

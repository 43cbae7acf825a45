/**
 * The generated block of docs/benchmarks.md read back, and a partial run's figures merged into it
 * (run.ts): `npm run bench -- monitors` replaces the monitors sections and keeps every other one.
 */
import type { Result } from './lib';

export interface SuiteOutput {
  node: string;
  results: { name: string; result?: Result; error?: string; seconds: number; measuredAt?: string }[];
}

/** The suites of a generated block, read back (figures that look like numbers become numbers again). */
export function parseBlock(block: string): { measured: string | null; outputs: SuiteOutput[] } {
  let measured: string | null = null;
  const outputs: SuiteOutput[] = [];
  let current: SuiteOutput['results'][number] | undefined;
  for (const line of block.split('\n')) {
    if (line.startsWith('Measured ')) measured = line;
    const node = /^### Node (\S+)$/.exec(line);
    if (node) {
      outputs.push({ node: node[1]!, results: [] });
      current = undefined;
      continue;
    }
    const bench = /^#### (\S+) \((\d+) s(?:, measured (.+))?\)$/.exec(line);
    if (bench && outputs.length > 0) {
      current = { name: bench[1]!, seconds: Number(bench[2]), result: {} };
      if (bench[3]) current.measuredAt = bench[3];
      outputs.at(-1)!.results.push(current);
      continue;
    }
    if (!current) continue;
    const failed = /^failed: `(.*)`$/.exec(line);
    if (failed) {
      current.error = failed[1]!;
      delete current.result;
      continue;
    }
    if (!line.startsWith('| ') || line === '| figure | value |') continue;
    const cells = line.slice(2, -2);
    const sep = cells.lastIndexOf(' | ');
    if (sep < 0) continue;
    const value = cells.slice(sep + 3);
    // A number renders back to the same text; anything else stays the string it was.
    current.result![cells.slice(0, sep)] =
      value !== '' && String(Number(value)) === value ? Number(value) : value;
  }
  return { measured, outputs };
}

/**
 * The new figures over the old block's: a bench that ran replaces its section (marked with the time it
 * ran), every other section and Node version stays as it was. Sections go by major version: a run under
 * a newer Node 24 takes over the Node 24 section, and the figures it did not replace say which version
 * measured them.
 */
export function mergeOutputs(
  old: SuiteOutput[],
  fresh: SuiteOutput[],
  measuredAt: string | undefined,
): SuiteOutput[] {
  const major = (v: string) => v.split('.')[0];
  const merged = old.map((o) => ({ ...o, results: [...o.results] }));
  for (const f of fresh) {
    // A result read back from the block keeps its own time; one fresh from a suite gets this run's.
    const stamped = f.results.map((r) => {
      const at = r.measuredAt ?? measuredAt;
      return at === undefined ? { ...r } : { ...r, measuredAt: at };
    });
    const into = merged.find((o) => major(o.node) === major(f.node));
    if (!into) {
      merged.push({ ...f, results: stamped });
      continue;
    }
    if (into.node !== f.node) {
      const kept = new Set(into.results.map((r) => r.name));
      for (const r of stamped) kept.delete(r.name);
      into.results = into.results.map((r) =>
        kept.has(r.name) && !r.measuredAt?.includes(' under Node ')
          ? { ...r, measuredAt: `${r.measuredAt ?? 'in the full run'} under Node ${into.node}` }
          : r,
      );
      into.node = f.node;
    }
    for (const r of stamped) {
      const i = into.results.findIndex((x) => x.name === r.name);
      if (i >= 0) into.results[i] = r;
      else into.results.push(r);
    }
    into.results.sort((x, y) => x.name.localeCompare(y.name));
  }
  return merged;
}

/** A word of `npm run bench -- <words>` picks the bench it names, or (naming none) every bench whose name contains it. */
export function pickedBy(word: string, name: string, names: ReadonlySet<string>): boolean {
  return names.has(word) ? name === word : name.includes(word);
}

/**
 * A suite that runs longer than this is killed (a bench that hangs). The memory bench's hour of load
 * (BENCH_MEMORY_LOAD_S) comes on top: the first hour-long run was killed a minute before its end.
 */
export function suiteTimeoutMs(env: Record<string, string | undefined>): number {
  const load = Number(env.BENCH_MEMORY_LOAD_S);
  return 60 * 60_000 + (Number.isFinite(load) && load > 0 ? load * 1000 : 0);
}

/** One section per major Node version: a block written before sections went by major folds into that shape. */
export function foldMajors(outputs: SuiteOutput[]): SuiteOutput[] {
  return outputs.reduce<SuiteOutput[]>((acc, o) => mergeOutputs(acc, [o], undefined), []);
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './renderer-build';

type Version = [number, number, number];

function parse(v: string): Version {
  const [a = 0, b = 0, c = 0] = v.replace(/^v/, '').split('.').map(Number);
  return [a, b, c];
}
function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The subset of npm's range syntax `engines.node` fields use: `||`, `>=`, `>`, `<`, `<=`, `^`, exact. */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alt) =>
    alt
      .trim()
      .replace(/(>=|<=|>|<)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
      .every((c) => {
        const m = /^(>=|<=|>|<|\^)?(.+)$/.exec(c)!;
        const v = parse(m[2]!);
        const d = cmp(version, v);
        switch (m[1]) {
          case '>=':
            return d >= 0;
          case '>':
            return d > 0;
          case '<':
            return d < 0;
          case '<=':
            return d <= 0;
          case '^':
            return d >= 0 && version[0] === v[0];
          default:
            return d === 0;
        }
      }),
  );
}

describe('package.json engines', () => {
  it('admits no Node version that a direct dependency refuses (every major 18-26, minor 0-30)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const ours: string = pkg.engines.node;
    const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
    const refused: string[] = [];
    for (const dep of deps) {
      const file = join(ROOT, 'node_modules', dep, 'package.json');
      if (!existsSync(file)) continue;
      const theirs: string | undefined = JSON.parse(readFileSync(file, 'utf8')).engines?.node;
      if (!theirs) continue;
      for (let major = 18; major <= 26; major++)
        for (let minor = 0; minor <= 30; minor++) {
          const v: Version = [major, minor, 0];
          if (satisfies(v, ours) && !satisfies(v, theirs))
            refused.push(`${dep} (${theirs}) refuses ${v.join('.')}`);
        }
    }
    expect(refused).toEqual([]);
    expect(satisfies(parse(process.versions.node), ours)).toBe(true);
  });

  it('the range reader knows the forms dependencies use', () => {
    expect(satisfies([20, 19, 0], '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies([22, 11, 0], '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies([21, 0, 0], '^20.0.0 || ^22.0.0 || >=24.0.0')).toBe(false);
    expect(satisfies([18, 0, 0], '>= 18')).toBe(true);
    expect(satisfies([16, 9, 0], '>=16.20.0')).toBe(false);
  });
});

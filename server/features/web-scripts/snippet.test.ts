import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SNIPPET_SOURCE } from './snippet/source';

const file = readFileSync(new URL('./snippet/belfry-snippet.js', import.meta.url), 'utf8');

describe('the web-script snippet', () => {
  it('source.ts carries snippet/belfry-snippet.js as it is (run snippet/sync.ts after editing it)', () => {
    expect(SNIPPET_SOURCE).toBe(file);
  });

  it('is at most 4 kB gzipped', () => {
    expect(gzipSync(file, { level: 9 }).length).toBeLessThanOrEqual(4096);
  });

  it('needs nothing newer than ES2017 and has no imports', () => {
    // esbuild lowers what a target lacks: the same output for es2017 and esnext means nothing needed lowering.
    const at = (target: string) => transformSync(file, { target, minifyWhitespace: true, loader: 'js' }).code;
    expect(at('es2017')).toBe(at('esnext'));
    expect(file).not.toMatch(/\bimport\s*[({'"a-z]|\brequire\(/);
  });

  it('has the endpoint placeholder the server replaces', () => {
    expect(file.match(/__BELFRY_ENDPOINT__/g)).toHaveLength(1);
  });
});

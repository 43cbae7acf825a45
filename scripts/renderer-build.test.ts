import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRendererBuilt, newestMtime, rendererBuildReason } from './renderer-build';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repo-shaped temp dir: renderer/src/app.tsx and vite.config.ts at `srcAt`, dist/renderer/index.html at `builtAt` (s). */
function repo(srcAt: number, builtAt?: number): string {
  const root = mkdtempSync(join(tmpdir(), 'belfry-uibuild-'));
  dirs.push(root);
  mkdirSync(join(root, 'renderer', 'src'), { recursive: true });
  for (const f of [join(root, 'renderer', 'src', 'app.tsx'), join(root, 'vite.config.ts')]) {
    writeFileSync(f, 'x');
    utimesSync(f, srcAt, srcAt);
  }
  if (builtAt !== undefined) {
    mkdirSync(join(root, 'dist', 'renderer'), { recursive: true });
    writeFileSync(join(root, 'dist', 'renderer', 'index.html'), '<!doctype html>');
    utimesSync(join(root, 'dist', 'renderer', 'index.html'), builtAt, builtAt);
  }
  return root;
}

describe('building the web UI when stale', () => {
  it('rendererBuildReason says missing, older than renderer/, or null when the build is newer', () => {
    expect(rendererBuildReason(repo(1_000))).toBe('dist/renderer is missing');
    expect(rendererBuildReason(repo(2_000, 1_000))).toBe('dist/renderer is older than renderer/');
    expect(rendererBuildReason(repo(1_000, 2_000))).toBeNull();
    expect(rendererBuildReason(repo(1_000, 1_000))).toBeNull();
  });

  it('a newer vite.config.ts or a newer nested source makes the build stale', () => {
    const root = repo(1_000, 2_000);
    utimesSync(join(root, 'vite.config.ts'), 3_000, 3_000);
    expect(rendererBuildReason(root)).toBe('dist/renderer is older than renderer/');
    const nested = repo(1_000, 2_000);
    mkdirSync(join(nested, 'renderer', 'src', 'deep'));
    writeFileSync(join(nested, 'renderer', 'src', 'deep', 'x.css'), 'a{}');
    utimesSync(join(nested, 'renderer', 'src', 'deep', 'x.css'), 2_500, 2_500);
    expect(newestMtime(join(nested, 'renderer'))).toBe(2_500_000);
    expect(rendererBuildReason(nested)).not.toBeNull();
  });

  it('ensureRendererBuilt builds (after one line) only when stale', () => {
    const lines: string[] = [];
    const built: string[] = [];
    const opts = (root: string) => ({
      root,
      log: (l: string) => lines.push(l),
      build: (r: string) => built.push(r),
    });
    const fresh = repo(1_000, 2_000);
    expect(ensureRendererBuilt(opts(fresh))).toBe(false);
    expect(lines).toEqual([]);
    expect(built).toEqual([]);
    const stale = repo(2_000, 1_000);
    expect(ensureRendererBuilt(opts(stale))).toBe(true);
    expect(built).toEqual([stale]);
    expect(lines).toEqual([
      'Belfry: building the web interface (dist/renderer is older than renderer/); this takes a few seconds…',
    ]);
  });

  it('a build that fails reaches the caller', () => {
    const root = repo(1_000);
    expect(() =>
      ensureRendererBuilt({
        root,
        build: () => {
          throw new Error('vite failed');
        },
      }),
    ).toThrow('vite failed');
  });
});

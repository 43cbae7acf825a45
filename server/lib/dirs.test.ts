import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirs } from './dirs';

const base = mkdtempSync(join(tmpdir(), 'belfry-dirs-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('makeDirs', () => {
  it('creates every missing level with the mode, and is a no-op when the dir exists', () => {
    const dir = join(base, 'a', 'b', 'c');
    makeDirs(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    if (process.platform !== 'win32') expect(statSync(join(base, 'a')).mode & 0o777).toBe(0o700);
    makeDirs(dir, 0o700);
  });

  it('throws (instead of spinning as recursive mkdir does) under /proc', () => {
    if (process.platform !== 'linux') return;
    expect(() => makeDirs('/proc/belfry-nope/data', 0o700)).toThrow(/ENOENT/);
    expect(existsSync('/proc/belfry-nope')).toBe(false);
  });

  it('throws ENOTDIR when a level is a file', () => {
    const file = join(base, 'file');
    writeFileSync(file, 'x');
    expect(() => makeDirs(join(file, 'sub'), 0o700)).toThrow(/ENOTDIR/);
  });
});

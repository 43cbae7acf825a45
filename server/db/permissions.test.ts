import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../lib/log';
import { secureDataDir } from './permissions';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'belfry-perm-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.platform === 'win32')('secureDataDir', () => {
  it('creates a missing data dir 0700', () => {
    const dir = join(root, 'a', 'data');
    secureDataDir(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it('makes nested dirs 0700 and files 0600, and never follows a symlink out of the dir', () => {
    const dir = join(root, 'data');
    mkdirSync(join(dir, 'uploads', 'avatars'), { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'uploads', 'avatars', 'u1.png'), 'x', { mode: 0o644 });
    writeFileSync(join(dir, 'secret.key'), 'x', { mode: 0o666 });
    const outside = join(root, 'outside.txt');
    writeFileSync(outside, 'x', { mode: 0o644 });
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dir, 'link.txt'));
    const log = memoryLogger();
    secureDataDir(dir, log);
    expect([dir, join(dir, 'uploads'), join(dir, 'uploads', 'avatars')].map(mode)).toEqual([
      0o700, 0o700, 0o700,
    ]);
    expect([join(dir, 'uploads', 'avatars', 'u1.png'), join(dir, 'secret.key')].map(mode)).toEqual([
      0o600, 0o600,
    ]);
    expect(mode(outside)).toBe(0o644);
    expect(log.lines.filter((l) => l.includes(' WARN '))).toEqual([]);
  });
});

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, fileSink, teeSink } from './log';

describe('log file sink', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('appends lines to a 0600 file in a 0700 folder it creates', () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-log-'));
    const file = join(dir, 'logs', 'belfry.log');
    const sink = fileSink(file);
    const log = createLogger('info', sink);
    log.debug('not at this level');
    log.info('server started', { port: 7878 });
    log.warn('second line');
    sink.close();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\S+Z INFO server started {"port":7878}$/);
    expect(lines[1]).toMatch(/ WARN second line$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'logs')).mode & 0o777).toBe(0o700);
  });

  it('tightens the mode of an existing log file and keeps what it held', () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-log-'));
    mkdirSync(join(dir, 'logs'), { mode: 0o755 });
    const file = join(dir, 'logs', 'belfry.log');
    writeFileSync(file, 'old line\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const sink = fileSink(file);
    sink('new line');
    sink.close();
    expect(readFileSync(file, 'utf8')).toBe('old line\nnew line\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'logs')).mode & 0o777).toBe(0o700);
  });

  it('rotates to one .1 file when the next line would pass the cap, so at most two files exist', () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-log-'));
    const file = join(dir, 'belfry.log');
    const sink = fileSink(file, { maxBytes: 20 });
    for (const l of ['aaaaaaaa', 'bbbbbbbb', 'cccccccc', 'dddddddd', 'eeeeeeeeeeeeeeeeeeeeeeeee']) sink(l);
    sink.close();
    // 9 bytes a line: two fit in 20 bytes; a line longer than the cap still gets a file of its own.
    expect(readFileSync(file, 'utf8')).toBe('eeeeeeeeeeeeeeeeeeeeeeeee\n');
    expect(readFileSync(`${file}.1`, 'utf8')).toBe('cccccccc\ndddddddd\n');
    expect(statSync(`${file}.1`).mode & 0o777).toBe(0o600);
  });

  it('never throws when the file cannot be written: the line goes to the fallback, once with a notice', () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-log-'));
    writeFileSync(join(dir, 'not-a-dir'), '');
    const fallback: string[] = [];
    const sink = fileSink(join(dir, 'not-a-dir', 'belfry.log'), { fallback: (l) => fallback.push(l) });
    const log = createLogger('info', teeSink(sink));
    expect(() => {
      log.error('first');
      log.error('second');
    }).not.toThrow();
    expect(fallback).toHaveLength(3);
    expect(fallback[0]).toMatch(/log file .*belfry\.log unusable/);
    expect(fallback[1]).toMatch(/ERROR first$/);
    expect(fallback[2]).toMatch(/ERROR second$/);
  });

  it('teeSink writes every line to each sink', () => {
    const a: string[] = [];
    const b: string[] = [];
    teeSink(
      (l) => a.push(l),
      (l) => b.push(l),
    )('x');
    expect([a, b]).toEqual([['x'], ['x']]);
  });
});

import { chmodSync, closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirs } from './dirs';

/**
 * A tiny structured logger: one JSON-ish line per event to stderr, so stdout stays for the listening line.
 * The desktop app also writes the lines to a file in the data dir (fileSink below).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, ctx?: Record<string, unknown>): void;
  info(msg: string, ctx?: Record<string, unknown>): void;
  warn(msg: string, ctx?: Record<string, unknown>): void;
  error(msg: string, ctx?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(level: LogLevel = 'info', write: LogSink = stderrSink): Logger {
  const emit = (lvl: LogLevel, msg: string, ctx?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const extra = ctx && Object.keys(ctx).length > 0 ? ` ${safeJson(ctx)}` : '';
    write(`${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}${extra}`);
  };
  return {
    debug: (m, c) => emit('debug', m, c),
    info: (m, c) => emit('info', m, c),
    warn: (m, c) => emit('warn', m, c),
    error: (m, c) => emit('error', m, c),
  };
}

/** Where log lines go: `createLogger(level, sink)`. */
export type LogSink = (line: string) => void;

export const stderrSink: LogSink = (l) => process.stderr.write(`${l}\n`);

/** Every line to each sink in turn (the desktop app: the log file and stderr). */
export function teeSink(...sinks: LogSink[]): LogSink {
  return (line) => {
    for (const sink of sinks) sink(line);
  };
}

/** 2 MiB per file: with the one rotated file, at most 4 MiB of logs in the data dir. */
export const LOG_FILE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Appends lines to `file` (mode 0600, its folder 0700: logs name users and addresses), synchronously
 * so that the line before a crash is on disk. When the next line would take the file past `maxBytes`
 * it is renamed to `<file>.1` (replacing the previous one) and a new file is started: at most two files.
 * The file is opened on the first line. A failing disk (full, removed) never throws out of a log call:
 * the line goes to `fallback` (stderr) instead, and the next line tries the file again.
 */
export function fileSink(
  file: string,
  opts: { maxBytes?: number; fallback?: LogSink } = {},
): LogSink & { close(): void } {
  const maxBytes = opts.maxBytes ?? LOG_FILE_MAX_BYTES;
  const fallback = opts.fallback ?? stderrSink;
  let fd: number | null = null;
  let size = 0;
  let failing = false;
  const open = () => {
    makeDirs(dirname(file), 0o700);
    chmodSync(dirname(file), 0o700);
    fd = openSync(file, 'a', 0o600);
    chmodSync(file, 0o600); // a file left by an older version or another umask
    size = fstatSync(fd).size;
    return fd;
  };
  const close = () => {
    if (fd !== null) closeSync(fd);
    fd = null;
  };
  const sink = (line: string) => {
    const bytes = Buffer.from(`${line}\n`);
    try {
      if (fd === null) open();
      if (size > 0 && size + bytes.length > maxBytes) {
        close();
        renameSync(file, `${file}.1`);
        open();
      }
      size += writeSync(fd!, bytes);
      failing = false;
    } catch (err) {
      close();
      if (!failing)
        fallback(`log file ${file} unusable (lines go here until it works): ${(err as Error).message}`);
      failing = true;
      fallback(line);
    }
  };
  return Object.assign(sink, { close });
}

/** A logger that keeps lines in memory: tests assert on warnings (torn journal tail, 500s). */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(
    createLogger('debug', (l) => lines.push(l)),
    { lines },
  );
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, val) =>
      val instanceof Error ? { message: val.message, stack: val.stack } : val,
    );
  } catch {
    return '[unserialisable]';
  }
}

/** A tiny structured logger: one JSON-ish line per event to stderr, so stdout stays for the listening line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, ctx?: Record<string, unknown>): void;
  info(msg: string, ctx?: Record<string, unknown>): void;
  warn(msg: string, ctx?: Record<string, unknown>): void;
  error(msg: string, ctx?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Logger {
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

import vm from 'node:vm';

/**
 * User-supplied regular expressions (monitor assertions, extracts, content rules) run over response bodies of
 * up to 2 MiB on the main thread. A catastrophic pattern such as `/(a+)+$/` would backtrack for minutes and
 * stall the event loop for every user, so each match runs inside `vm` with a hard time limit: V8's watchdog
 * interrupts irregexp's backtracking and the match answers a timeout instead.
 *
 * One precompiled Script in one context made once: a match costs about 45 µs more than a bare `exec`
 * (the vm call itself; a new context and script per call measured ~330 µs). A worker thread would copy the body
 * per match and make every caller async; a linear-time engine (re2) would need a new dependency and drop
 * backreferences and lookarounds that users' patterns may rely on.
 */

/** How long one match may run. */
export const REGEX_TIMEOUT_MS = 50;
/** Runs of one match cut off by the wall-clock watchdog while using little CPU, before it counts as a timeout. */
const DESCHEDULED_RETRIES = 4;
/** How much of a pattern an error text quotes. */
const SHOWN_PATTERN_MAX_CHARS = 100;

interface Slot {
  re: RegExp | null;
  text: string;
}

const slot: Slot = { re: null, text: '' };
const context = vm.createContext({ slot });
const script = new vm.Script('slot.re.exec(slot.text)', { filename: 'belfry:safe-regex' });

export type SafeMatch =
  | { ok: true; match: RegExpExecArray | null }
  | { ok: false; error: string; timedOut?: true };

/** `pattern /…/ took longer than 50 ms`: the error of a match that was cut off. */
export function regexTimeoutText(re: RegExp, timeoutMs = REGEX_TIMEOUT_MS): string {
  return `pattern ${shortPattern(re)} took longer than ${timeoutMs} ms`;
}

function shortPattern(re: RegExp): string {
  const shown = String(re);
  return shown.length > SHOWN_PATTERN_MAX_CHARS ? `${shown.slice(0, SHOWN_PATTERN_MAX_CHARS - 1)}…` : shown;
}

/**
 * `re.exec(text)` that gives up after `timeoutMs`. `re` should have neither `g` nor `y` (its lastIndex
 * would make matches stateful); callers strip them when compiling.
 */
export function safeExec(re: RegExp, text: string, timeoutMs = REGEX_TIMEOUT_MS): SafeMatch {
  slot.re = re;
  slot.text = text;
  try {
    for (let attempt = 1; ; attempt++) {
      const cpu0 = process.cpuUsage();
      try {
        return {
          ok: true,
          match: script.runInContext(context, { timeout: timeoutMs }) as RegExpExecArray | null,
        };
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
        // The watchdog counts wall time. On a busy machine (a laptop compiling, a loaded CI box) the
        // process may have been off the CPU for most of it: a match that used well under the limit in CPU
        // time was descheduled, not backtracking, and is run again rather than reported as a timeout.
        const { user, system } = process.cpuUsage(cpu0);
        if ((user + system) / 1000 >= timeoutMs / 2 || attempt >= DESCHEDULED_RETRIES)
          return { ok: false, error: regexTimeoutText(re, timeoutMs), timedOut: true };
      }
    }
  } catch (err) {
    // e.g. a RangeError of a pattern whose backtracking outgrew its stack: the check's error, never a throw
    return {
      ok: false,
      error: `pattern ${shortPattern(re)} failed: ${(err as Error).message ?? String(err)}`,
    };
  } finally {
    // never keep a 2 MiB body alive between checks
    slot.re = null;
    slot.text = '';
  }
}

/**
 * A user's pattern: `/source/flags` or, taken whole, a bare source. `g` and `y` are dropped (they would make
 * matches stateful). Throws the SyntaxError of a pattern that does not compile.
 */
export function compileUserRegex(pattern: string): RegExp {
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  return literal ? new RegExp(literal[1]!, literal[2]!.replace(/[gy]/g, '')) : new RegExp(pattern);
}

export type SafeTest = { ok: true; match: boolean } | { ok: false; error: string };

/** `re.test(text)` with the same limit: `{ ok: true, match: boolean }` or the timeout error. */
export function safeTest(re: RegExp, text: string, timeoutMs = REGEX_TIMEOUT_MS): SafeTest {
  const r = safeExec(re, text, timeoutMs);
  return r.ok ? { ok: true, match: r.match !== null } : { ok: false, error: r.error };
}

/**
 * One limit shared by the matches that run back to back without yielding (the 20 json assertions of one
 * response, a workflow step's assertions and extracts): together they hold the loop at most `totalMs`.
 * Once spent, every further match fails at once with the same `took longer than {totalMs} ms` text.
 */
export class RegexBudget {
  private leftMs: number;

  constructor(readonly totalMs = REGEX_TIMEOUT_MS) {
    this.leftMs = totalMs;
  }

  exec(re: RegExp, text: string): SafeMatch {
    if (this.leftMs < 1) return { ok: false, error: regexTimeoutText(re, this.totalMs), timedOut: true };
    const started = performance.now();
    const r = safeExec(re, text, Math.ceil(this.leftMs));
    this.leftMs -= performance.now() - started;
    return r.ok || !r.timedOut ? r : { ok: false, error: regexTimeoutText(re, this.totalMs), timedOut: true };
  }

  test(re: RegExp, text: string): SafeTest {
    const r = this.exec(re, text);
    return r.ok ? { ok: true, match: r.match !== null } : { ok: false, error: r.error };
  }
}

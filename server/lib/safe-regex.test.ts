import { describe, expect, it, vi } from 'vitest';
import { REGEX_TIMEOUT_MS, RegexBudget, regexTimeoutText, safeExec, safeTest } from './safe-regex';

const CATASTROPHIC = /(a+)+$/;
const EVIL_TEXT = `${'a'.repeat(30)}b`;

describe('safeExec', () => {
  it('answers like RegExp.exec for ordinary patterns, captures included', () => {
    const r = safeExec(/token":"([^"]+)"/, '{"token":"abc"}');
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.match?.[1]).toBe('abc');
    expect(safeExec(/x/, 'abc')).toEqual({ ok: true, match: null });
    expect(safeTest(/B/i, 'abc')).toEqual({ ok: true, match: true });
    expect(safeTest(/^b/, 'abc')).toEqual({ ok: true, match: false });
  });

  it('cuts a catastrophic pattern off at the limit with a clear error, and keeps working afterwards', () => {
    const started = performance.now();
    const r = safeExec(CATASTROPHIC, EVIL_TEXT);
    const took = performance.now() - started;
    expect(r).toEqual({
      ok: false,
      error: `pattern /(a+)+$/ took longer than ${REGEX_TIMEOUT_MS} ms`,
      timedOut: true,
    });
    expect(took).toBeLessThan(1_000); // unbounded, this pattern backtracks for minutes
    expect(safeTest(CATASTROPHIC, 'aaa')).toEqual({ ok: true, match: true });
  });

  it('runs a match again when the watchdog fired while the process was off the CPU (a loaded machine)', () => {
    // As if every run had used no CPU time: each timeout is taken for descheduling, up to 4 runs.
    const cpu = vi.spyOn(process, 'cpuUsage').mockReturnValue({ user: 0, system: 0 });
    try {
      const r = safeExec(CATASTROPHIC, EVIL_TEXT, 5);
      expect(r).toEqual({ ok: false, error: 'pattern /(a+)+$/ took longer than 5 ms', timedOut: true });
      // one cpuUsage() before and one after each of the 4 runs
      expect(cpu).toHaveBeenCalledTimes(8);
    } finally {
      cpu.mockRestore();
    }
  });

  it('lets a timer due during the match fire right after it (the event loop is not held)', async () => {
    const due = performance.now();
    const fired = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - due), 0));
    expect(safeTest(CATASTROPHIC, EVIL_TEXT).ok).toBe(false);
    expect(await fired).toBeLessThan(400);
  });

  it('quotes at most 100 characters of a long pattern', () => {
    const text = regexTimeoutText(new RegExp('x'.repeat(300)));
    expect(text).toMatch(/^pattern \/x{98}… took longer than 50 ms$/);
  });

  it('keeps overhead per match small (one context, one script, reused)', () => {
    const re = /token":"([^"]+)"/;
    const body = `${'x'.repeat(2_000)}token":"abc"`;
    const n = 2_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) safeExec(re, body);
    const perMatchMs = (performance.now() - started) / n;
    expect(perMatchMs).toBeLessThan(1); // measured ≈ 0.05 ms on a 2-core machine
  });
});

describe('RegexBudget', () => {
  it('shares one limit between matches run back to back: the loop is held ~50 ms, not 50 ms per pattern', () => {
    const budget = new RegexBudget();
    const started = performance.now();
    const results = Array.from({ length: 10 }, () => budget.test(CATASTROPHIC, EVIL_TEXT));
    const took = performance.now() - started;
    for (const r of results)
      expect(r).toEqual({ ok: false, error: 'pattern /(a+)+$/ took longer than 50 ms' });
    expect(took).toBeLessThan(400); // ten separate limits would hold it ≥ 500 ms
  });

  it('answers ordinary matches while time is left', () => {
    const budget = new RegexBudget();
    const r = budget.exec(/b(c)/, 'abc');
    expect(r.ok && r.match?.[1]).toBe('c');
    expect(budget.test(/x/, 'abc')).toEqual({ ok: true, match: false });
  });
});

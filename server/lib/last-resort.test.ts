import { describe, expect, it } from 'vitest';
import { installLastResortHandlers } from './last-resort';
import { memoryLogger } from './log';

type Listener = (...args: unknown[]) => void;

/** The listeners installLastResortHandlers added (called directly: emitting would reach vitest's own). */
function added(now: readonly unknown[], before: readonly unknown[]): Listener[] {
  return now.filter((l) => !before.includes(l)) as Listener[];
}

describe('installLastResortHandlers', () => {
  it('logs an uncaught exception and an unhandled rejection at error level, and uninstalls', () => {
    const log = memoryLogger();
    const beforeEx = process.listeners('uncaughtException');
    const beforeRej = process.listeners('unhandledRejection');
    const uninstall = installLastResortHandlers(log);
    try {
      const [onEx] = added(process.listeners('uncaughtException'), beforeEx);
      const [onRej] = added(process.listeners('unhandledRejection'), beforeRej);
      expect(onEx).toBeTypeOf('function');
      expect(onRej).toBeTypeOf('function');
      onEx!(new Error('boom in a listener'), 'uncaughtException');
      onRej!(new Error('lost promise'), Promise.resolve());
      expect(log.lines).toHaveLength(2);
      expect(log.lines[0]).toMatch(/ERROR uncaught exception; kept running .*boom in a listener/);
      expect(log.lines[1]).toMatch(/ERROR unhandled promise rejection; kept running .*lost promise/);
    } finally {
      uninstall();
    }
    expect(process.listeners('uncaughtException')).toEqual(beforeEx);
    expect(process.listeners('unhandledRejection')).toEqual(beforeRej);
  });
});

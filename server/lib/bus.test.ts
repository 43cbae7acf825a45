import { describe, expect, it } from 'vitest';
import { EventBus } from './bus';
import { memoryLogger } from './log';

const PAYLOAD = { onBattery: true };

describe('EventBus', () => {
  it('runs listeners in the order they subscribed, and not after they unsubscribed', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.on('power:changed', () => seen.push('a'));
    const off = bus.on('power:changed', () => seen.push('b'));
    bus.on('power:changed', () => seen.push('c'));
    bus.emit('power:changed', PAYLOAD);
    off();
    off(); // twice is harmless
    bus.emit('power:changed', PAYLOAD);
    expect(seen).toEqual(['a', 'b', 'c', 'a', 'c']);
  });

  it('a listener added or removed during an emit takes effect from the next emit', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    let offB: () => void = () => {};
    bus.on('power:changed', () => {
      seen.push('a');
      offB();
      bus.on('power:changed', () => seen.push('late'));
    });
    offB = bus.on('power:changed', () => seen.push('b'));
    bus.emit('power:changed', PAYLOAD);
    expect(seen).toEqual(['a', 'b']);
  });

  /** A bus whose first listener throws and whose second records that it ran. */
  const brokenFirst = (inTransaction: boolean) => {
    const log = memoryLogger();
    const bus = new EventBus({ log, inTransaction: () => inTransaction });
    const seen: string[] = [];
    bus.on('power:changed', () => {
      throw new Error('listener broke');
    });
    bus.on('power:changed', () => seen.push('after'));
    return { log, bus, seen };
  };

  it('outside a transaction a throwing listener is logged and the others still run', () => {
    const { log, bus, seen } = brokenFirst(false);
    expect(() => bus.emit('power:changed', PAYLOAD)).not.toThrow();
    expect(seen).toEqual(['after']);
    expect(log.lines.filter((l) => l.includes('an event listener failed'))).toHaveLength(1);
    expect(log.lines.some((l) => l.includes('power:changed') && l.includes('listener broke'))).toBe(true);
  });

  it('inside a transaction the first throw propagates at once (the transaction rolls back with it)', () => {
    const { log, bus, seen } = brokenFirst(true);
    expect(() => bus.emit('power:changed', PAYLOAD)).toThrow('listener broke');
    expect(seen).toEqual([]);
    expect(log.lines).toEqual([]);
  });

  it('without a logger every listener runs, then the first error is thrown', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.on('power:changed', () => {
      throw new Error('first');
    });
    bus.on('power:changed', () => {
      seen.push('middle');
      throw new Error('second');
    });
    bus.on('power:changed', () => seen.push('last'));
    expect(() => bus.emit('power:changed', PAYLOAD)).toThrow('first');
    expect(seen).toEqual(['middle', 'last']);
  });
});

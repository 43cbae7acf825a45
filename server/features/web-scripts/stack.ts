import type { AppContext } from '../../context';
import { type Frame, parseStack, pathOf } from './frames';
import { originalsOf } from './sourcemaps';
import type { EventRow } from './store';

/**
 * The whole stack of an issue's latest event for the issue view (docs/api.md "Web scripts", the `frames`
 * extension of …/breadcrumbs): every frame as the browser printed it, and its original position where a
 * source map of the script covers it, resolved with the maps stored now.
 */

/** Frames answered at most (a 16 KiB stack holds a few hundred; nobody reads past the first hundred). */
export const FRAMES_MAX = 100;

export interface FrameView {
  fn: string | null;
  file: string;
  line: number;
  col: number;
  /** The page's own code (false: a library, a browser extension, another host's script). */
  inApp: boolean;
  /** A source map gave the original position. */
  resolved: boolean;
  original?: { file: string; line: number; col: number; name: string | null };
}

/** Paths that are someone else's code, whatever the map says. */
const LIBRARY =
  /(?:^|\/)(?:node_modules|bower_components|vendor|jspm_packages)\/|webpack\/bootstrap|^webpack\/runtime/;
const EXTENSION = /^(?:chrome|moz|safari(?:-web)?)-extension:\/\//i;

function originOf(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const o = new URL(url).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/**
 * In-app: not a browser extension, not under node_modules (or the like) in its original or printed path,
 * and, when no map covers it, served from the page's own origin (a CDN library is not the page's code).
 */
export function inAppOf(frame: Frame, original: Frame | null, pageUrl: string | null): boolean {
  if (EXTENSION.test(frame.file)) return false;
  if (LIBRARY.test(pathOf(frame.file))) return false;
  if (original) return !LIBRARY.test(pathOf(original.file));
  const page = originOf(pageUrl);
  const file = originOf(frame.file);
  return page === undefined || file === undefined || page === file;
}

/** The latest event's frames, top first, at most FRAMES_MAX; [] for an event without a stack. */
export async function framesOfEvent(
  ctx: AppContext,
  scriptId: number,
  e: EventRow | undefined,
): Promise<FrameView[]> {
  const frames = parseStack(e?.stack ?? undefined).slice(0, FRAMES_MAX);
  if (!e || frames.length === 0) return [];
  const originals = await originalsOf(ctx, scriptId, frames, e.release ?? undefined);
  return frames.map((f, i) => {
    const o = originals[i] ?? null;
    const view: FrameView = {
      fn: f.fn ?? null,
      file: f.file,
      line: f.line,
      col: f.col,
      inApp: inAppOf(f, o, e.url),
      resolved: o !== null,
    };
    if (o) view.original = { file: o.file, line: o.line, col: o.col, name: o.fn ?? null };
    return view;
  });
}

import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { ownScript } from './service';
import { forgetMap, parseSourceMap } from './sourcemaps';
import { deleteMap, findMap, mapsOfScript, putMap, type SourceMapRow } from './store';

/** Source-map records (§9.3). */

export const SOURCE_MAP_MAX_BYTES = 20 * 1024 * 1024;
export const SOURCE_MAPS_PER_SCRIPT = 200;

function present(m: SourceMapRow) {
  return {
    id: m.id,
    scriptId: m.script_id,
    url: m.url,
    release: m.release === '' ? null : m.release,
    size: m.size,
    sources: JSON.parse(m.sources) as string[],
    createdAt: rfc3339(m.created_at),
  };
}

export function listMaps(ctx: AppContext, p: Principal, id: number) {
  return mapsOfScript(ctx.db, ownScript(ctx, p, id).id).map(present);
}

/** `url`: an absolute http(s) URL (query and hash dropped) or `~/path`. */
function mapUrl(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw errors.badRequest('url: required');
  const s = v.trim();
  if (s.length > 2000) throw errors.badRequest('url: at most 2000 characters');
  if (s.startsWith('~/')) return s.replace(/[?#].*$/, '');
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw errors.badRequest('url: must be an absolute URL or ~/path');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw errors.badRequest('url: must be an absolute URL or ~/path');
  return `${u.origin}${u.pathname}`;
}

export function uploadMap(
  ctx: AppContext,
  p: Principal,
  id: number,
  file: { buffer: Buffer } | undefined,
  fields: Record<string, unknown>,
) {
  const script = ownScript(ctx, p, id);
  if (!file) throw errors.notASourceMap(': the form has no file field');
  const url = mapUrl(fields.url);
  const release = fields.release === undefined ? '' : fields.release;
  if (typeof release !== 'string' || release.length > 200)
    throw errors.badRequest('release: must be a string of at most 200 characters');
  const text = file.buffer.toString('utf8');
  const parsed = parseSourceMap(text);
  if (!parsed) throw errors.notASourceMap();
  const { id: mapId, replaced } = ctx.db.transaction(() => {
    if (mapsOfScript(ctx.db, script.id).length >= SOURCE_MAPS_PER_SCRIPT)
      throw errors.badRequest(`file: at most ${SOURCE_MAPS_PER_SCRIPT} source maps per web script`);
    return putMap(
      ctx.db,
      {
        scriptId: script.id,
        url,
        release: release.trim(),
        size: file.buffer.length,
        sources: JSON.stringify(parsed.sources),
        content: text,
      },
      ctx.clock.now(),
    );
  });
  if (replaced !== undefined) forgetMap(ctx, replaced);
  return present(findMap(ctx.db, mapId)!);
}

export function removeMap(ctx: AppContext, p: Principal, id: number, smid: number): void {
  const script = ownScript(ctx, p, id);
  const m = findMap(ctx.db, smid);
  if (!m || m.script_id !== script.id) throw errors.notFound('source map');
  ctx.db.transaction(() => deleteMap(ctx.db, smid));
  forgetMap(ctx, smid);
}

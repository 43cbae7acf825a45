import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Stamp {
  commit: string;
  buildDate: string;
}

/**
 * The version comes from package.json; commit and build date are stamped at build time into
 * build-info.json (scripts/stamp-version.mjs), or given by BELFRY_COMMIT / BELFRY_BUILD_DATE.
 */
let cached: { version: string; stamp: Stamp | null } | null = null;

function load(): { version: string; stamp: Stamp | null } {
  if (cached) return cached;
  const root = findRoot();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  let stamp: Stamp | null = null;
  try {
    stamp = JSON.parse(readFileSync(join(root, 'build-info.json'), 'utf8')) as Stamp;
  } catch {
    stamp = null;
  }
  cached = { version: pkg.version, stamp };
  return cached;
}

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('package.json not found above server/lib');
}

export function buildInfo(config: { commit: string; buildDate: string }): {
  version: string;
  commit: string;
  buildDate: string;
} {
  const { version, stamp } = load();
  return {
    version,
    commit: config.commit !== 'unknown' ? config.commit : (stamp?.commit ?? 'unknown'),
    buildDate: config.buildDate !== 'unknown' ? config.buildDate : (stamp?.buildDate ?? 'unknown'),
  };
}

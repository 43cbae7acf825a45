// Stamps the commit and build date that GET /version reports into build-info.json (read by
// server/lib/version.ts). Runs as part of `npm run build`; without it both read "unknown".
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short=12 HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .trim();
} catch {
  // not a git checkout (a source tarball): keep "unknown"
}
writeFileSync(
  'build-info.json',
  `${JSON.stringify({ commit, buildDate: new Date().toISOString() }, null, 2)}\n`,
);
console.log(`build-info.json: ${commit}`);

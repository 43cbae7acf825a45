import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_V8_FLAGS } from './v8-flags';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

describe('the server process V8 flags', () => {
  it('npm run serve and npm start start Node with every one of them, before the script', () => {
    for (const name of ['serve', 'start']) {
      const [node, ...rest] = pkg.scripts[name]!.split(' ');
      expect(node).toBe('node');
      const script = rest.findIndex((a) => a.startsWith('scripts/'));
      expect(rest.slice(0, script)).toEqual([...SERVER_V8_FLAGS]);
    }
  });

  it('start.mjs hands them on to Electron as --js-flags', () => {
    const start = readFileSync(join(__dirname, '..', '..', 'scripts', 'start.mjs'), 'utf8');
    expect(start).toContain("await import('../server/lib/v8-flags.ts')");
    expect(start).toMatch(/`--js-flags=\$\{SERVER_V8_FLAGS\.join\(' '\)\}`/);
    // …and tells the app it gave them, so it does not relaunch itself away from the terminal.
    expect(start).toContain("const { V8_FLAGS_GIVEN_ENV } = await import('../electron/v8-relaunch.ts');");
    expect(start).toContain("process.env[V8_FLAGS_GIVEN_ENV] = '1';");
  });
});

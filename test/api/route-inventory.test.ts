import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { DOC_PATH, mountedRoutes, parseInventory } from '../../scripts/api-inventory';
import { specRoutes, toExpressPath } from '../../server/http/spec-routes';
import { startTestServer } from '../helpers/test-server';

it('docs/api.md lists every spec endpoint exactly once, built exactly when a family mounts it', async () => {
  const documented = parseInventory(readFileSync(DOC_PATH, 'utf8'));
  const spec = specRoutes().map((r) => `${r.method} ${r.path}`);
  expect(new Set(spec).size).toBe(spec.length);
  expect([...documented.keys()].sort()).toEqual([...spec].sort());
  const mounted = await mountedRoutes();
  const wrong: string[] = [];
  for (const r of specRoutes()) {
    const isMounted = mounted.has(`${r.method} ${toExpressPath(r.path)}`);
    const status = documented.get(`${r.method} ${r.path}`);
    if ((status === 'built') !== isMounted)
      wrong.push(`${r.method} ${r.path}: docs say ${status}, code ${isMounted ? 'mounts it' : 'does not'}`);
  }
  expect(wrong, 'run `npm run docs:inventory`').toEqual([]);
});

it('every spec endpoint no family builds answers 501 with the error body', async () => {
  const t = await startTestServer();
  try {
    for (const r of specRoutes()) {
      if (t.server.mounted.has(`${r.method} ${toExpressPath(r.path)}`)) continue;
      const path = r.path.replace(/\{\*\w+\}/g, 'a/b').replace(/\{\w+\}/g, '1');
      const res = await t.request(r.method, path);
      expect(res.status, `${r.method} ${path}`).toBe(501);
      expect(res.body).toMatchObject({ error: 'Not Implemented', errorCode: 501 });
    }
  } finally {
    await t.close();
  }
});

it('every route a family mounts beyond the spec is documented in docs/api.md', async () => {
  const doc = readFileSync(DOC_PATH, 'utf8');
  const spec = new Set(specRoutes().map((r) => `${r.method} ${r.expressPath}`));
  const undocumented = [...(await mountedRoutes())]
    .filter((r) => !spec.has(r))
    .map((r) => r.replace(/:(\w+)/g, '{$1}'))
    .filter((r) => !doc.includes(r.split(' ')[1]!));
  expect(undocumented).toEqual([]);
});

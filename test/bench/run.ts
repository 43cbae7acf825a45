/**
 * `npm run bench`: runs every test/bench/*.bench.ts (each exports `run()`) and prints one table each.
 * `npm run bench -- journal` runs only the benches whose file name contains "journal".
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { printTable } from './journal.bench';

type Bench = { run: () => Promise<Record<string, number | string>> };

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = false;
for (const file of files) {
  const name = file.replace(/\.bench\.ts$/, '');
  try {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as Bench;
    printTable(name, await mod.run());
  } catch (err) {
    failed = true;
    console.error(`${name}: failed`, err);
  }
}
process.exitCode = failed ? 1 : 0;

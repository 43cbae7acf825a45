import { readFileSync, writeFileSync } from 'node:fs';

/** Rewrites snippet/source.ts from snippet/belfry-snippet.js (see source.ts). */
const dir = new URL('./', import.meta.url);
const src = readFileSync(new URL('belfry-snippet.js', dir), 'utf8');
if (src.includes('`') || src.includes('${')) throw new Error('the snippet may not contain backticks or ${');
const head = readFileSync(new URL('source.ts', dir), 'utf8').split('export const')[0];
writeFileSync(new URL('source.ts', dir), `${head}export const SNIPPET_SOURCE = String.raw\`${src}\`;\n`);

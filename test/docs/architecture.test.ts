// The layer picture of docs/architecture.md is the one test/architecture/layering.test.ts enforces: the
// same layers in the same order, each with the same paths. Read from that test's text, so a layer added,
// moved or renamed there without the page fails here.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot, tablesOf } from './markdown.ts';

interface Layer {
  readonly name: string;
  readonly paths: readonly string[];
}

/** The string literals of an array literal's text. */
const stringsOf = (text: string): string[] => [...text.matchAll(/'([^']*)'/g)].map((m) => m[1] as string);

/** The LAYERS of layering.test.ts, in order: each `{ name: '…', …, paths: [...] | CONSTANT }`. */
function enforcedLayers(source: string): Layer[] {
  const constants = new Map<string, string[]>();
  for (const m of source.matchAll(/^const ([A-Z_]+)(?::[^=]*)? = \[([^\]]*)\]/gm)) constants.set(m[1] as string, stringsOf(m[2] as string));
  const block = /^const LAYERS\b[^=]*= \[([\s\S]*?)^\];/m.exec(source)?.[1] ?? '';
  const layers: Layer[] = [];
  for (const m of block.matchAll(/\{\s*name: '([^']+)'[\s\S]*?paths: (\[[^\]]*\]|[A-Z_]+)\s*,?\s*\}/g)) {
    const ref = m[2] as string;
    const paths = ref.startsWith('[') ? stringsOf(ref) : constants.get(ref);
    assert.ok(paths !== undefined, `layer ${m[1]}: paths ${ref} are read`);
    layers.push({ name: m[1] as string, paths: paths as string[] });
  }
  return layers;
}

/** The rows of the page's layer table: `| layer | paths | what lives there |`, paths in backticks. */
function documentedLayers(page: string): Layer[] {
  const table = tablesOf(page).find((rows) => rows[0]?.[0] === 'layer' && rows[0]?.[1] === 'paths');
  assert.ok(table !== undefined, 'docs/architecture.md has a table headed | layer | paths | …');
  return table.slice(1).map((cells) => ({ name: cells[0] as string, paths: [...(cells[1] as string).matchAll(/`([^`]+)`/g)].map((m) => m[1] as string) }));
}

const enforced = enforcedLayers(readFileSync(path.join(repoRoot, 'test', 'architecture', 'layering.test.ts'), 'utf8'));
const documented = documentedLayers(readFileSync(path.join(repoRoot, 'docs', 'architecture.md'), 'utf8'));

test('the layers are read from layering.test.ts (a reader that found none would pass)', () => {
  assert.ok(enforced.length >= 10, `only ${enforced.length} layers read`);
  assert.is(enforced[0]?.name, 'foundation');
  assert.ok((enforced[0]?.paths ?? []).includes('src/limits.ts'), 'the foundation\'s paths come from its constant');
  assert.ok(enforced.some((l) => l.name === 'protocol' && l.paths.includes('src/mcp/')));
});

test('docs/architecture.md shows the layers layering.test.ts enforces, in its order, each with its paths', () => {
  assert.equal(documented.map((l) => l.name), enforced.map((l) => l.name));
  for (const layer of enforced) assert.equal(documented.find((l) => l.name === layer.name)?.paths, layer.paths, layer.name);
});

test('the readers: a layer with a constant or a literal list of paths; a table ends at its last row', () => {
  const source = "const BASE: readonly string[] = ['src/a/', 'src/b.ts'];\nconst LAYERS = [\n  { name: 'base', why: 'x', paths: BASE },\n  {\n    name: 'top',\n    why: 'y',\n    paths: ['src/c/'],\n  },\n];\n";
  assert.equal(enforcedLayers(source), [{ name: 'base', paths: ['src/a/', 'src/b.ts'] }, { name: 'top', paths: ['src/c/'] }]);
  assert.equal(documentedLayers('| layer | paths | what |\n| --- | --- | --- |\n| base | `src/a/`, `src/b.ts` | x |\n| top | `src/c/` | y |\n\n| other | table |\n'), [{ name: 'base', paths: ['src/a/', 'src/b.ts'] }, { name: 'top', paths: ['src/c/'] }]);
});

test.run();

// docs/configuration.md documents the whole command line: every flag src/cli/options.ts accepts and
// every SUPERPI_* variable read anywhere in src/ has a row in its table, and no row names a flag that no
// longer exists. Both lists are read from the source, so a flag or variable added without its row fails.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot, tableRows } from './markdown.ts';

const page = readFileSync(path.join(repoRoot, 'docs', 'configuration.md'), 'utf8');

/** The keys of the `options` object given to `parseArgs` in src/cli/options.ts: every flag it accepts. */
function flagsAccepted(source: string): string[] {
  const start = source.indexOf('parseArgs({');
  const open = source.indexOf('options: {', start);
  assert.ok(start >= 0 && open > start, 'parseArgs({ … options: { … } }) is found in src/cli/options.ts');
  let depth = 0;
  let end = open + 'options: '.length;
  for (; end < source.length; end++) {
    if (source[end] === '{') depth++;
    else if (source[end] === '}' && --depth === 0) break;
  }
  const body = source.slice(open + 'options: {'.length, end);
  return [...body.matchAll(/^\s*'?([a-z][a-z0-9-]*)'?\s*:\s*\{\s*type:/gm)].map((m) => `--${m[1]}`);
}

/** Every `SUPERPI_*` name in the TypeScript of src/: the variables the server reads. */
function variablesRead(dir: string): string[] {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/\bSUPERPI_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(m[0]);
  }
  return [...names].sort();
}

const rows = tableRows(page).filter((cells) => cells.length >= 4);
/** Flags named in the first column of the table (`--flag VALUE`, `--help`, `--version`). */
const documentedFlags = new Set(rows.flatMap((cells) => [...(cells[0] as string).matchAll(/`(--[a-z][a-z0-9-]*)/g)].map((m) => m[1] as string)));
/** Variables named in the environment column of the table. */
const documentedVariables = new Set(rows.flatMap((cells) => [...(cells[1] as string).matchAll(/`(SUPERPI_[A-Z0-9_]*[A-Z0-9])/g)].map((m) => m[1] as string)));

const flags = flagsAccepted(readFileSync(path.join(repoRoot, 'src', 'cli', 'options.ts'), 'utf8'));
const variables = variablesRead(path.join(repoRoot, 'src'));

test('the lists are read from the source and the page (a reader that found none would pass)', () => {
  assert.ok(flags.length > 40, `only ${flags.length} flags read from options.ts`);
  for (const f of ['--workspace', '--stdio', '--tokens', '--no-metrics', '--unsafe-bash-without-sandbox', '--help']) assert.ok(flags.includes(f), f);
  assert.ok(variables.length > 15, `only ${variables.length} variables read from src/`);
  for (const v of ['SUPERPI_MODEL_URL', 'SUPERPI_ANTHROPIC_API_KEY', 'SUPERPI_HOME', 'SUPERPI_TOKENS']) assert.ok(variables.includes(v), v);
  assert.ok(rows.length > 40, `only ${rows.length} rows in the table`);
});

test('every flag src/cli/options.ts accepts has a row in docs/configuration.md', () => {
  assert.equal(flags.filter((f) => !documentedFlags.has(f)), [], 'flags without a row');
});

test('every SUPERPI_* variable read in src/ has a row in docs/configuration.md', () => {
  assert.equal(variables.filter((v) => !documentedVariables.has(v)), [], 'variables without a row');
});

test('every flag the page documents is one options.ts accepts (no row for a flag that is gone)', () => {
  assert.equal([...documentedFlags].filter((f) => !flags.includes(f)), []);
});

test('the flag reader finds each key of the options object, quoted or not, and nothing outside it', () => {
  const source = "const x = { stray: { type: 'string' } };\nparseArgs({\n  args,\n  options: {\n    workspace: { type: 'string', multiple: true },\n    'log-level': { type: 'string' },\n    stdio: { type: 'boolean' },\n  },\n});\nconst y = { after: { type: 'string' } };";
  assert.equal(flagsAccepted(source), ['--workspace', '--log-level', '--stdio']);
});

test.run();

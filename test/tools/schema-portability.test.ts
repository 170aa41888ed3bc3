// Every tool's input and output schema is written the way hosts that convert schemas can take it: each
// property, item and oneOf/anyOf/allOf branch is a schema object, never a bare `true` or `false` (the MCP
// Inspector's `tools/list --strict` refuses those as errors: a host mapping schemas onto its model's
// dialect cannot tell what the value is).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolCatalog } from '../../src/tools/catalog.ts';

/** The paths, below `at`, of every property, item or branch schema that is a boolean. */
function bareBooleans(schema: unknown, at: string): string[] {
  if (typeof schema === 'boolean') return [at];
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as { properties?: Record<string, unknown>; items?: unknown; oneOf?: unknown[]; anyOf?: unknown[]; allOf?: unknown[] };
  const found: string[] = [];
  for (const [name, sub] of Object.entries(s.properties ?? {})) found.push(...bareBooleans(sub, `${at}.properties.${name}`));
  if (s.items !== undefined) found.push(...bareBooleans(s.items, `${at}.items`));
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) (s[key] ?? []).forEach((sub, i) => found.push(...bareBooleans(sub, `${at}.${key}[${i}]`)));
  return found;
}

test('no tool schema has a bare boolean where a property, item or branch schema goes', () => {
  const found = Object.values(toolCatalog).flatMap((def) => [...bareBooleans(def.inputSchema, `${def.name}.inputSchema`), ...bareBooleans(def.outputSchema, `${def.name}.outputSchema`)]);
  assert.equal(found, []);
});

test('a oneOf branch that names a property again gives it the same schema as the top level (a branch never loosens it)', () => {
  for (const def of Object.values(toolCatalog)) {
    const top = (def.outputSchema?.properties ?? {}) as Record<string, unknown>;
    const branches = (def.outputSchema?.oneOf ?? []) as { properties?: Record<string, unknown> }[];
    for (const [i, branch] of branches.entries()) {
      for (const [name, sub] of Object.entries(branch.properties ?? {})) assert.equal(sub, top[name], `${def.name}.outputSchema.oneOf[${i}].properties.${name}`);
    }
  }
});

test.run();

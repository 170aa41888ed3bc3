// The tools' input schemas are constants checked here against the JSON Schema 2020-12 meta-schema (the
// server skips that check at run time), and every validator compiles and tells good from bad arguments.

import { Ajv2020 } from 'ajv/dist/2020.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkToolArguments } from '../../src/mcp/arguments.ts';
import { toolCatalog } from '../../src/tools/catalog.ts';
import type { ToolName } from '../../src/tools/definition.ts';

test('every tool input schema is a valid draft 2020-12 schema', () => {
  const ajv = new Ajv2020({ strict: false });
  for (const [name, tool] of Object.entries(toolCatalog)) {
    assert.ok(ajv.validateSchema(tool.inputSchema), `${name}: ${ajv.errorsText(ajv.errors)}`);
  }
});

test('the validators accept good arguments and name what is wrong with bad ones', () => {
  assert.equal(checkToolArguments('read' as ToolName, { path: 'a.txt' }), { ok: true });
  const bad = checkToolArguments('read' as ToolName, { path: 42 });
  assert.is(bad.ok, false);
  assert.match(bad.ok ? '' : bad.message, /Invalid arguments for tool read/);
});

test.run();

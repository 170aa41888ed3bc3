// The tool-argument validators the server runs are generated ahead of time (Ajv standalone code, so a
// cold start neither loads nor runs Ajv): the file must be what the generator writes from today's schemas,
// and each generated validator must decide every value exactly as Ajv compiling the schema at run time does.

import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATED_FILE, generateToolValidators } from '../../scripts/generate-tool-validators.ts';
import { checkToolArguments } from '../../src/mcp/arguments.ts';
import * as generated from '../../src/mcp/tool-validators.generated.js';
import { toolCatalog } from '../../src/tools/catalog.ts';
import { type ToolName, toolNames } from '../../src/tools/definition.ts';

test('src/mcp/tool-validators.generated.js is what the generator writes from the current schemas (else: npx tsx scripts/generate-tool-validators.ts)', () => {
  assert.ok(readFileSync(GENERATED_FILE, 'utf8') === generateToolValidators(), 'the generated validators are stale: regenerate them');
});

/** Any JSON-ish value: what a caller may put anywhere. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 6 }), fc.constantFrom('', 'a.txt', '😀'), fc.integer({ min: -3, max: 5 }), fc.double(), fc.boolean(), fc.constant(null),
  fc.array(fc.record({ oldText: fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), newText: fc.string({ maxLength: 3 }), extra: fc.constant(1) }, { requiredKeys: [] }), { maxLength: 2 }),
);

type PropertySchema = { type?: string; enum?: readonly unknown[] };

/** Mostly a value of the property's own type, near its bounds, so that valid arguments are common too. */
function valueFor(prop: PropertySchema): fc.Arbitrary<unknown> {
  const typed = prop.enum ? fc.constantFrom(...prop.enum)
    : prop.type === 'string' ? fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('', '😀'))
    : prop.type === 'integer' ? fc.oneof(fc.integer({ min: -1, max: 3 }), fc.constantFrom(1.5, 2 ** 53))
    : prop.type === 'boolean' ? fc.boolean()
    : anyValue;
  return fc.oneof({ weight: 4, arbitrary: typed }, { weight: 1, arbitrary: anyValue });
}

/** Arguments for a tool: its own properties (each maybe absent), sometimes a stranger, sometimes not an object at all. */
function argumentsLike(tool: ToolName): fc.Arbitrary<unknown> {
  const properties = (toolCatalog[tool].inputSchema as { properties?: Record<string, PropertySchema> }).properties ?? {};
  const own = fc.record(Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, valueFor(prop)])), { requiredKeys: [] });
  const stranger = fc.dictionary(fc.constantFrom('constructor', '__proto__', 'extra', 'toString'), anyValue, { maxKeys: 1 });
  return fc.oneof(
    { weight: 6, arbitrary: own },
    { weight: 1, arbitrary: fc.tuple(own, stranger).map(([a, b]) => ({ ...a, ...b })) },
    { weight: 1, arbitrary: anyValue },
  );
}

test('every generated validator decides like Ajv compiling the schema at run time (same verdict, same first error)', () => {
  const ajv = new Ajv2020({ allErrors: false, strict: false, validateSchema: false });
  for (const tool of toolNames) {
    const reference = ajv.compile(toolCatalog[tool].inputSchema);
    const validate = generated[tool];
    fc.assert(fc.property(argumentsLike(tool), (args) => {
      const ok = reference(args);
      assert.is(validate(args), ok, `${tool} ${JSON.stringify(args)}`);
      assert.equal(validate.errors?.[0] ?? null, reference.errors?.[0] ?? null, `${tool} ${JSON.stringify(args)}: the same first error`);
      assert.is(checkToolArguments(tool, args).ok, ok, 'the server\'s check uses it');
    }), { numRuns: 1000 });
  }
});

test('an unknown tool name finds no validator, never an Object.prototype member', () => {
  for (const name of ['constructor', '__proto__', 'toString', 'nope']) {
    const r = checkToolArguments(name as ToolName, {});
    assert.is(r.ok, false, name);
  }
});

test.run();

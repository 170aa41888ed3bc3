// Tool-argument validation against each tool's JSON Schema (Ajv), before anything runs.
// Validators are compiled on first use: compiling all eight up front would cost every cold start.

import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { toolCatalog } from '../tools/catalog.ts';
import type { ToolName } from '../tools/definition.ts';

// Draft 2020-12, the JSON Schema dialect MCP names; strict mode off so unknown annotations pass; the
// schemas are our own constants, checked against the meta-schema by test/mcp/arguments.test.ts, not at
// run time (that quarters a thread's first compile). Made on
// the first tools/call, not at import: every scheduler thread imports this before it reports ready.
let ajv: Ajv2020 | null = null;
const compiled = new Map<ToolName, ValidateFunction>();

export type ArgumentCheck = { ok: true } | { ok: false; message: string };

/**
 * Compiles every tool's validator now (about 100 ms): a scheduler thread calls this once it is ready and
 * idle, so its first tools/call does not pay for it, while a cold start still does not wait for it.
 */
export function precompileToolValidators(): void {
  ajv ??= new Ajv2020({ allErrors: false, strict: false, validateSchema: false });
  for (const tool of Object.keys(toolCatalog) as ToolName[]) {
    if (!compiled.has(tool)) compiled.set(tool, ajv.compile(toolCatalog[tool].inputSchema));
  }
}

export function checkToolArguments(tool: ToolName, args: unknown): ArgumentCheck {
  let validate = compiled.get(tool);
  if (!validate) {
    ajv ??= new Ajv2020({ allErrors: false, strict: false, validateSchema: false });
    validate = ajv.compile(toolCatalog[tool].inputSchema);
    compiled.set(tool, validate);
  }
  if (validate(args)) return { ok: true };
  return { ok: false, message: `Invalid arguments for tool ${tool}: ${describeErrors(validate.errors ?? [])}` };
}

function describeErrors(errors: ErrorObject[]): string {
  const first = errors[0];
  if (!first) return 'arguments do not match the schema';
  const where = first.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : 'arguments';
  if (first.keyword === 'additionalProperties') {
    return `${where} has an unknown property "${String(first.params.additionalProperty)}"`;
  }
  if (first.keyword === 'required') return `${where} is missing the required property "${String(first.params.missingProperty)}"`;
  if (first.keyword === 'enum') return `${where} must be one of ${(first.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  return `${where} ${first.message ?? 'is invalid'}`;
}

// Tool-argument validation against each tool's JSON Schema, before anything runs. The validators are
// Ajv's own code for our schemas, generated ahead of time (scripts/generate-tool-validators.ts): the
// server neither loads nor runs Ajv, so the first tools/call of a cold start compiles nothing.

import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ToolName } from '../tools/definition.ts';
import * as generated from './tool-validators.generated.js';

/** Every tool has its validator (the compiler checks that none is missing). */
const byTool = {
  read: generated.read, write: generated.write, edit: generated.edit, bash: generated.bash,
  grep: generated.grep, find: generated.find, ls: generated.ls, harness_task: generated.harness_task,
} satisfies Record<ToolName, ValidateFunction>;
// A Map: the tool name is checked against the catalog before it gets here, but a lookup must never reach
// an Object.prototype member all the same.
const validators: ReadonlyMap<string, ValidateFunction> = new Map(Object.entries(byTool));

export type ArgumentCheck = { ok: true } | { ok: false; message: string };

export function checkToolArguments(tool: ToolName, args: unknown): ArgumentCheck {
  const validate = validators.get(tool);
  if (!validate) return { ok: false, message: `Invalid arguments for tool ${tool}: no schema for this tool` };
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

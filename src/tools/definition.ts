// A tool's public face: name, description, JSON Schemas and annotations. Pure data (no I/O), so the
// protocol core can list and validate tools without loading any tool body.

import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

export const toolNames = ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task'] as const;
export type ToolName = (typeof toolNames)[number];

export function isToolName(name: unknown): name is ToolName {
  return typeof name === 'string' && (toolNames as readonly string[]).includes(name);
}

/** A JSON Schema object (draft 2020-12 subset that Ajv validates). */
export type JsonSchema = { type: 'object'; properties?: Record<string, object>; required?: string[]; [k: string]: unknown };

export interface ToolDefinition {
  readonly name: ToolName;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** All four hints are set explicitly, truthfully. */
  readonly annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>> & { title?: string };
}

/** The definition as `tools/list` sends it. */
export function toListedTool(def: ToolDefinition): Tool {
  const tool: Tool = {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: def.inputSchema,
    annotations: def.annotations,
  };
  if (def.outputSchema) tool.outputSchema = def.outputSchema;
  return tool;
}

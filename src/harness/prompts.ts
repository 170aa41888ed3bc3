// One MCP prompt per harness, plus `plan_architecture` (an alias of the planner's): listing and rendering.

import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import { allHarnesses, harnessById } from './catalog.ts';
import type { Harness, PromptArgumentSpec } from './harness.ts';
import { isHarnessId } from './ids.ts';

export interface PromptEntry {
  readonly name: string;
  readonly harness: Harness;
}

/** Prompt names in listing order: each harness id, then the aliases. */
export const promptEntries: readonly PromptEntry[] = [
  ...allHarnesses.map((h) => ({ name: h.id, harness: h })),
  { name: 'plan_architecture', harness: harnessById('super-pi-planner') },
];

export function findPrompt(name: string): PromptEntry | undefined {
  return promptEntries.find((p) => p.name === name);
}

export function listedPrompt(entry: PromptEntry, withTitle: boolean): Prompt {
  const prompt: Prompt = {
    name: entry.name,
    description: entry.name === entry.harness.id ? entry.harness.prompt.description : `Alias of ${entry.harness.id}. ${entry.harness.prompt.description}`,
    arguments: entry.harness.prompt.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required })),
  };
  if (withTitle) prompt.title = entry.name === 'plan_architecture' ? 'Plan architecture' : entry.harness.title;
  return prompt;
}

export type RenderOutcome = { ok: true; result: GetPromptResult } | { ok: false; message: string };

/** Checks the arguments (all strings, required ones present, no unknown ones) and renders the messages. */
export function renderPrompt(entry: PromptEntry, args: Record<string, unknown>): RenderOutcome {
  const specs = entry.harness.prompt.arguments;
  for (const key of Object.keys(args)) {
    if (!specs.some((s) => s.name === key)) {
      return { ok: false, message: `Prompt ${entry.name} has no argument "${key}"; its arguments are: ${specs.map((s) => s.name).join(', ')}` };
    }
    if (typeof args[key] !== 'string') return { ok: false, message: `Prompt argument "${key}" must be a string` };
  }
  const missing = specs.filter((s) => s.required && !(typeof args[s.name] === 'string' && (args[s.name] as string).trim() !== ''));
  if (missing.length > 0) {
    return { ok: false, message: `Prompt ${entry.name} needs the argument${missing.length > 1 ? 's' : ''} ${missing.map((s) => `"${s.name}"`).join(', ')}` };
  }
  const value = (s: PromptArgumentSpec): string | undefined => args[s.name] as string | undefined;
  const subject = value(specs.find((s) => s.name === entry.harness.prompt.subject) as PromptArgumentSpec) as string;
  const extras = specs
    .filter((s) => s.name !== entry.harness.prompt.subject && value(s) !== undefined)
    .map((s) => extraLine(s, value(s) as string));
  const text = [
    entry.harness.systemPrompt,
    '',
    `${capitalise(entry.harness.prompt.subject)}: ${subject}`,
    ...extras,
  ].join('\n');
  return {
    ok: true,
    result: {
      description: `${entry.harness.title}: ${subject.length > 80 ? `${subject.slice(0, 77)}...` : subject}`,
      messages: [{ role: 'user', content: { type: 'text', text } }],
    },
  };
}

function extraLine(spec: PromptArgumentSpec, v: string): string {
  if (spec.completes === 'path') return `Focus on: ${v}`;
  if (spec.completes === 'harness') {
    return isHarnessId(v) ? `The plan will be carried out by the ${v} harness: write it for that harness's tools.` : `The plan will be carried out by: ${v}`;
  }
  return `${capitalise(spec.name)}: ${v}`;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

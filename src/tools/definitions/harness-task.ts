// `harness_task`: runs a task in a named harness. Listed now; the agent loop behind it lands with its own issue.

import { harnessIds } from '../../harness/ids.ts';
import type { ToolDefinition } from '../definition.ts';
import { MAX_TURNS_LIMIT } from '../../limits.ts';

export const harnessTaskDefinition: ToolDefinition = {
  name: 'harness_task',
  title: 'Run a harness task',
  description:
    'Runs a task in a Super-Pi harness: an agent loop that uses the harness\'s tools under its permission policy and returns the final answer. ' +
    'super-pi-code changes the repository, super-pi-planner plans without writing, super-pi-librarian answers from the workspace and its notes, super-pi-assistant works with the person.',
  inputSchema: {
    type: 'object',
    properties: {
      harness: { type: 'string', enum: [...harnessIds], description: 'The harness that runs the task.' },
      prompt: { type: 'string', minLength: 1, description: 'The task, in plain words.' },
      conversation_id: { type: 'string', minLength: 1, description: 'Continue this conversation (one you started) instead of starting a new one.' },
      max_turns: { type: 'integer', minimum: 1, maximum: MAX_TURNS_LIMIT, description: 'Stop after this many model turns.' },
      undo: { type: 'boolean', description: 'With conversation_id: revert the file changes that conversation made.' },
    },
    required: ['harness', 'prompt'],
    additionalProperties: false,
  },
  annotations: { title: 'Run a harness task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

// `harness_task`: runs a task in a named harness (the agent loop is in src/task) or undoes one's file changes.

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
  outputSchema: {
    type: 'object',
    description: 'A task: conversation_id, harness, status, turns, tool_calls and its answer or message. An undo: conversation_id, reverted, reverted_paths, interrupted, refused.',
    properties: {
      conversation_id: { type: 'string', description: 'The conversation: continue it (or undo it) with this id.' },
      harness: { type: 'string', description: 'The harness that ran the task.' },
      status: { type: 'string', enum: ['completed', 'failed', 'cancelled', 'interrupted', 'running'], description: "How the task ended; 'running' when another server node took it over." },
      turns: { type: 'integer', minimum: 0, description: 'Model turns taken.' },
      tool_calls: { type: 'integer', minimum: 0, description: 'Tool calls made.' },
      answer: { type: 'string', description: "When completed: the final answer, the model's last text (the same as the text output)." },
      message: { type: 'string', description: 'When not completed: why, and how to continue (the same as the text output).' },
      reverted: { type: 'integer', minimum: 0, description: 'Undo: file changes reverted.' },
      reverted_paths: { type: 'array', items: { type: 'string' }, description: 'Undo: the files restored, newest change first.' },
      interrupted: { type: 'integer', minimum: 0, description: 'Undo: reverted changes that had been interrupted before their result was recorded.' },
      refused: { type: 'array', items: { type: 'string' }, description: 'Undo: files not reverted because someone else changed them since.' },
    },
    required: ['conversation_id'],
    additionalProperties: false,
  },
  annotations: { title: 'Run a harness task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

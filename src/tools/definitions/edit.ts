// The `edit` tool's public face: exact-text replacement in one file, one edit or several at once,
// answered with a diff summary. Pure data for the protocol core; the body is ../edit.ts.

import type { ToolDefinition } from '../definition.ts';
import { pathProperty } from './common.ts';
import { EDIT_MAX_EDITS } from '../../limits.ts';

const replacement = {
  oldText: {
    type: 'string',
    minLength: 1,
    description: 'Exact text to find; it must match the file exactly (including whitespace and line breaks) and occur exactly once.',
  },
  newText: {
    type: 'string',
    description: 'Text to put in place of oldText (may be empty to delete it).',
  },
} as const;

export const editDefinition: ToolDefinition = {
  name: 'edit',
  title: 'Edit file',
  description:
    'Edit a file in the workspace by replacing exact text. Give either oldText and newText for one replacement, or ' +
    'edits, an array of {oldText, newText}, for several replacements in the same file. Each oldText must match the file ' +
    'exactly, including whitespace and indentation, and must occur exactly once; add surrounding lines to make it unique. ' +
    'All edits are matched against the original file, must not overlap, and are applied together: if any one fails, the ' +
    'file is left unchanged. Line endings (LF or CRLF) and a UTF-8 BOM are preserved. Returns a diff of the change.',
  inputSchema: {
    type: 'object',
    properties: {
      path: pathProperty('Path of the file to edit, relative to the workspace root (or absolute inside it).'),
      ...replacement,
      edits: {
        type: 'array',
        minItems: 1,
        maxItems: EDIT_MAX_EDITS,
        description: `Several replacements in this file (at most ${EDIT_MAX_EDITS}), used instead of oldText/newText. Each oldText is matched in the original file.`,
        items: {
          type: 'object',
          properties: replacement,
          required: ['oldText', 'newText'],
          additionalProperties: false,
        },
      },
    },
    required: ['path'],
    // Draft 2020-12: oldText and newText come as a pair. That exactly one of the pair and `edits` is
    // given is checked by the body, since top-level oneOf is refused by some model APIs.
    dependentRequired: { oldText: ['newText'], newText: ['oldText'] },
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'The edited file, relative to the workspace root.' },
      replacements: { type: 'integer', minimum: 1, description: 'How many replacements were applied.' },
      firstChangedLine: { type: 'integer', minimum: 1, description: 'Line number (1-indexed, in the new file) of the first change.' },
      linesAdded: { type: 'integer', minimum: 0 },
      linesRemoved: { type: 'integer', minimum: 0 },
      diff: { type: 'string', description: 'Unified diff of the change, with 3 lines of context.' },
    },
    required: ['path', 'replacements', 'firstChangedLine', 'linesAdded', 'linesRemoved', 'diff'],
    additionalProperties: false,
  },
  annotations: {
    title: 'Edit file',
    readOnlyHint: false,
    destructiveHint: true,
    // Applying the same replacement again either fails (oldText is gone) or changes the file again.
    idempotentHint: false,
    openWorldHint: false,
  },
};

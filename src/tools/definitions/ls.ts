// The `ls` tool's public face: one directory's entries, sorted, with a structured copy of the listing.
// Pure data for the protocol core; the body is ../ls.ts.

import type { ToolDefinition } from '../definition.ts';
import { DEFAULT_LS_LIMIT, DEFAULT_MAX_BYTES } from '../../limits.ts';
import { noticesProperty, positiveIntegerProperty, readOnlyLocal } from './common.ts';

export const lsDefinition: ToolDefinition = {
  name: 'ls',
  title: 'List directory',
  description:
    "List the entries of a directory in the workspace. Entries are sorted alphabetically (case-insensitive), directories " +
    `have a '/' suffix, and dotfiles are included. At most \`limit\` entries are returned (default ${DEFAULT_LS_LIMIT}); when more exist the ` +
    `output ends with "[${DEFAULT_LS_LIMIT} entries limit reached. Use limit=${DEFAULT_LS_LIMIT * 2} for more]". The text is also cut at ${DEFAULT_MAX_BYTES / 1024}KB.`,
  inputSchema: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: "Directory to list, relative to the workspace root (default: '.', the root itself).",
      },
      limit: positiveIntegerProperty(`Maximum number of entries to return (default: ${DEFAULT_LS_LIMIT}).`),
    },
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: "The listed directory, relative to the workspace root ('.' for the root)." },
      entries: {
        type: 'array',
        description: 'The entries shown, in the same order as the text output.',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', description: "The entry's name, without the '/' suffix." },
            type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'] },
          },
          required: ['name', 'type'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean', description: `True when the entry limit or the ${DEFAULT_MAX_BYTES / 1024}KB limit left entries out.` },
      notices: noticesProperty,
    },
    required: ['path', 'entries', 'truncated', 'notices'],
    additionalProperties: false,
  },
  annotations: { title: 'List directory', ...readOnlyLocal },
};

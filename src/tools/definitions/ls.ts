// The `ls` tool's public face: one directory's entries, sorted, with a structured copy of the listing.
// Pure data for the protocol core; the body is ../ls.ts.

import type { ToolDefinition } from '../definition.ts';
import { positiveIntegerProperty, readOnlyLocal } from './common.ts';

export const lsDefinition: ToolDefinition = {
  name: 'ls',
  title: 'List directory',
  description:
    "List the entries of a directory in the workspace. Entries are sorted alphabetically (case-insensitive), directories " +
    "have a '/' suffix, and dotfiles are included. At most `limit` entries are returned (default 500); when more exist the " +
    'output ends with "[500 entries limit reached. Use limit=1000 for more]". The text is also cut at 50KB.',
  inputSchema: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: "Directory to list, relative to the workspace root (default: '.', the root itself).",
      },
      limit: positiveIntegerProperty('Maximum number of entries to return (default: 500).'),
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
      truncated: { type: 'boolean', description: 'True when the entry limit or the 50KB limit left entries out.' },
    },
    required: ['path', 'entries', 'truncated'],
    additionalProperties: false,
  },
  annotations: { title: 'List directory', ...readOnlyLocal },
};

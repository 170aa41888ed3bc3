// The public face of the `find` tool: name, description for the model, input/output schemas and hints.
// Pure data; the body lives in ../find.ts.

import type { ToolDefinition } from '../definition.ts';
import { noticesProperty, pathProperty, positiveIntegerProperty, readOnlyLocal } from './common.ts';
import { DEFAULT_MAX_BYTES, FIND_DEFAULT_LIMIT } from '../../limits.ts';

export const findDefinition: ToolDefinition = {
  name: 'find',
  title: 'Find files by glob',
  description: [
    "Search for files by glob pattern. A pattern without '/' (e.g. '*.ts') matches file names at any depth;",
    "a pattern with '/' (e.g. 'src/**/*.spec.ts') matches the path relative to the search directory.",
    'Lists files, symbolic links and directories (directories end with /), sorted, as paths relative to the workspace.',
    'Respects .gitignore files (root and nested) and skips .git/ and node_modules/; hidden files are included.',
    `Output stops at \`limit\` results (default ${FIND_DEFAULT_LIMIT}) or ${DEFAULT_MAX_BYTES / 1024}KB, whichever is hit first; a notice then says`,
    'so and how to get more (raise limit, or narrow with path/pattern).',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        description: "Glob pattern to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'.",
      },
      path: pathProperty("Directory to search in, relative to the workspace (default: '.')."),
      limit: positiveIntegerProperty(`Maximum number of results (default: ${FIND_DEFAULT_LIMIT}).`),
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      paths: {
        type: 'array',
        description: 'Matching paths relative to the workspace, sorted; directories end with /.',
        items: { type: 'string' },
      },
      truncated: { type: 'boolean', description: `True when more paths matched than were returned (limit, ${DEFAULT_MAX_BYTES / 1024}KB or walk cap).` },
      notices: noticesProperty,
    },
    required: ['paths', 'truncated', 'notices'],
    additionalProperties: false,
  },
  annotations: { title: 'Find files by glob', ...readOnlyLocal },
};

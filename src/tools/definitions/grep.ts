// The public face of the `grep` tool: name, description for the model, input/output schemas and hints.
// Pure data; the body lives in ../grep.ts.

import type { ToolDefinition } from '../definition.ts';
import { noticesProperty, pathProperty, positiveIntegerProperty, readOnlyLocal } from './common.ts';
import { DEFAULT_MAX_BYTES, GREP_DEFAULT_LIMIT, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_LENGTH } from '../../limits.ts';

const contextLines = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      line: { type: 'integer', minimum: 1 },
      text: { type: 'string', description: `The line, cut at ${GREP_MAX_LINE_LENGTH} characters.` },
    },
    required: ['line', 'text'],
    additionalProperties: false,
  },
} as const;

export const grepDefinition: ToolDefinition = {
  name: 'grep',
  title: 'Search file contents',
  description: [
    'Search file contents for a regular expression in RE2 syntax (or a literal string with literal=true).',
    'RE2 matches in linear time and has no backreferences or lookaround (\\1, (?=…), (?<=…) are refused); named groups are (?P<name>…) or (?<name>…), code points \\x{2603}, inline flags (?i).',
    'Returns matching lines as `path:line: text` (context lines as `path-line- text`), paths relative to the workspace.',
    'Respects .gitignore files (root and nested) and skips .git/ and node_modules/; hidden files are searched;',
    `binary files and files over ${GREP_MAX_FILE_BYTES / (1024 * 1024)}MB are skipped and counted.`,
    'Symbolic links met while walking are not followed (neither linked files nor linked directories are searched).',
    `Output stops at \`limit\` matches (default ${GREP_DEFAULT_LIMIT}) or ${DEFAULT_MAX_BYTES / 1024}KB, whichever is hit first; a notice then says`,
    'so and how to get more (raise limit, or narrow with path/glob/pattern). Long lines are cut to',
    `${GREP_MAX_LINE_LENGTH} characters; use the read tool to see them whole.`,
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, description: 'Regular expression (RE2 syntax: no backreferences or lookaround) or, with literal=true, a plain string.' },
      path: pathProperty("Directory or file to search, relative to the workspace (default: '.')."),
      glob: {
        type: 'string',
        minLength: 1,
        description: "Only search files whose path matches this glob, e.g. '*.ts' (any depth) or 'src/**/*.spec.ts'.",
      },
      ignoreCase: { type: 'boolean', description: 'Case-insensitive search (default: false).' },
      literal: { type: 'boolean', description: 'Treat pattern as a literal string instead of a regex (default: false).' },
      context: { type: 'integer', minimum: 0, description: 'Lines to show before and after each match (default: 0).' },
      limit: positiveIntegerProperty(`Maximum number of matches to return (default: ${GREP_DEFAULT_LIMIT}).`),
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      matches: {
        type: 'array',
        description: 'Matching lines in output order, each with its own context lines when the call asked for context.',
        items: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'File path relative to the workspace, with / separators.' },
            line: { type: 'integer', minimum: 1, description: '1-based line number.' },
            text: { type: 'string', description: `The matching line, cut at ${GREP_MAX_LINE_LENGTH} characters.` },
            context: {
              type: 'object',
              description: 'Present when context > 0: the lines before and after this match (fewer at the start or end of the file).',
              properties: { before: contextLines, after: contextLines },
              required: ['before', 'after'],
              additionalProperties: false,
            },
          },
          required: ['path', 'line', 'text'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean', description: `True when more matches exist than were returned (limit, ${DEFAULT_MAX_BYTES / 1024}KB or walk cap).` },
      notices: noticesProperty,
    },
    required: ['matches', 'truncated', 'notices'],
    additionalProperties: false,
  },
  annotations: { title: 'Search file contents', ...readOnlyLocal },
};

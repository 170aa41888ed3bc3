// The `write` tool's public face: create or overwrite a file, making parent directories as needed.
// Pure data for the protocol core; the body is ../write.ts.

import type { ToolDefinition } from '../definition.ts';
import { pathProperty } from './common.ts';

export const writeDefinition: ToolDefinition = {
  name: 'write',
  title: 'Write file',
  description:
    "Write content to a file in the workspace. Creates the file if it doesn't exist and overwrites it if it does; " +
    'parent directories are created automatically. The content is written exactly as given (UTF-8). ' +
    'To change part of an existing file, prefer edit, which does not require resending the whole file.',
  inputSchema: {
    type: 'object',
    properties: {
      path: pathProperty('Path of the file to write, relative to the workspace root (or absolute inside it).'),
      content: {
        type: 'string',
        description: 'The complete new content of the file.',
      },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'The file written, as the call named it.' },
      bytes: { type: 'integer', minimum: 0, description: 'Bytes written (the UTF-8 length of content).' },
    },
    required: ['path', 'bytes'],
    additionalProperties: false,
  },
  annotations: {
    title: 'Write file',
    readOnlyHint: false,
    // Overwrites whatever the file held before.
    destructiveHint: true,
    // Writing the same content twice leaves the same file.
    idempotentHint: true,
    openWorldHint: false,
  },
};

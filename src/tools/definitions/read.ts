// The `read` tool's public face: a file's text, windowed by offset/limit and cut at 2000 lines / 50 KB.
// Pure data for the protocol core; the body is ../read.ts.

import type { ToolDefinition } from '../definition.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, IMAGE_MAX_EDGE_PX } from '../../limits.ts';
import { noticesProperty, pathProperty, positiveIntegerProperty, readOnlyLocal } from './common.ts';

/** A text read's window: which lines were shown, of how many (each one is required in a text read). */
const textWindow = {
  content: { type: 'string', description: 'The lines shown, as the text output has them before its notice (empty when one line alone is over the byte limit).' },
  offset: { type: 'integer', minimum: 1, description: 'The first line shown, 1-indexed.' },
  lines: { type: 'integer', minimum: 0, description: 'How many lines are shown.' },
  totalLines: { type: 'integer', minimum: 0, description: 'Lines in the file (a lower bound when totalLinesKnown is false).' },
  totalLinesKnown: { type: 'boolean', description: 'False when the file was too large to count to its end.' },
  truncated: { type: 'boolean', description: `True when the file goes on past what is shown (limit, ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB).` },
};

/** A truncated text read's continuation. */
const nextOffset = { type: 'integer', minimum: 1, description: 'When truncated: the offset to continue from.' };

/** An image read's sizes: what the file is and what was sent. */
const imageProperty = {
  type: 'object',
  description: 'For an image read: what the file is and what was sent (the image itself is the result\'s image content).',
  properties: {
    mimeType: { type: 'string', description: 'The image type sent.' },
    width: { type: 'integer', minimum: 1, description: 'Width sent, in pixels.' },
    height: { type: 'integer', minimum: 1, description: 'Height sent, in pixels.' },
    bytes: { type: 'integer', minimum: 0, description: 'Size of the image sent, in bytes (before base64).' },
    sourceMimeType: { type: 'string', description: 'The file\'s image type, told by its bytes.' },
    sourceWidth: { type: 'integer', minimum: 1, description: 'The file\'s width, in pixels.' },
    sourceHeight: { type: 'integer', minimum: 1, description: 'The file\'s height, in pixels.' },
    sourceBytes: { type: 'integer', minimum: 0, description: 'The file\'s size, in bytes.' },
  },
  required: ['mimeType', 'width', 'height', 'bytes', 'sourceMimeType', 'sourceWidth', 'sourceHeight', 'sourceBytes'],
  additionalProperties: false,
};

export const readDefinition: ToolDefinition = {
  name: 'read',
  title: 'Read file',
  description:
    'Read the contents of a text file in the workspace. Returns the raw text (no line numbers). ' +
    `Output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB, whichever is hit first; when that happens the output ends with a notice ` +
    `such as "[Showing lines 1-${DEFAULT_MAX_LINES} of 5120. Use offset=${DEFAULT_MAX_LINES + 1} to continue.]". ` +
    'Use offset (1-indexed line number) and limit (number of lines) to read part of a large file; ' +
    'when you need the whole file, keep calling with the offset from the notice until it is complete. ' +
    `PNG, JPEG, GIF and WebP images (told by their bytes) are returned as an image with a short note, resized to at most ${IMAGE_MAX_EDGE_PX} px on the longer side; ` +
    'offset and limit do not apply to them. Other binary files are not shown. For a directory, use ls instead.',
  inputSchema: {
    type: 'object',
    properties: {
      path: pathProperty('Path of the file to read, relative to the workspace root (or absolute inside it).'),
      offset: positiveIntegerProperty('Line number to start reading from, 1-indexed (default: 1).'),
      limit: positiveIntegerProperty(`Maximum number of lines to return (default and ceiling: ${DEFAULT_MAX_LINES}; ${DEFAULT_MAX_BYTES / 1024}KB applies as well).`),
    },
    required: ['path'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'The file read, as the call named it.' },
      ...textWindow,
      nextOffset,
      image: imageProperty,
      notices: noticesProperty,
    },
    required: ['path', 'notices'],
    // A text read carries its window, an image read its sizes: exactly one of the two shapes. Each branch
    // names its properties again, with the same schemas (never a bare `true`, which hosts that convert
    // schemas refuse), so that a strict validator knows them.
    oneOf: [
      {
        properties: textWindow,
        required: ['content', 'offset', 'lines', 'totalLines', 'totalLinesKnown', 'truncated'],
      },
      { properties: { image: imageProperty }, required: ['image'] },
    ],
    additionalProperties: false,
  },
  annotations: { title: 'Read file', ...readOnlyLocal },
};

// The stdio peer for bench/stdio.ts and bench/cold-start.ts: the official SDK's McpServer with one tool,
// `read` (the text of a file in the workspace, by fs.readFile — the same tool as
// bench/peers/sdk-http-server.ts), over StdioServerTransport, set up the way the SDK documents it.
// With --sync the tool body is readFileSync: the barest SDK server (issue 27's "bare SDK" peer), which
// pays no libuv thread-pool round trip per call.
// Plain JavaScript so `node` runs it directly: no TypeScript loader in its start-up time.
// Usage: node bench/peers/sdk-stdio-server.mjs --workspace DIR [--sync]

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/v4';

const { values } = parseArgs({ options: { workspace: { type: 'string' }, sync: { type: 'boolean' } } });
const workspace = path.resolve(values.workspace ?? process.cwd());
const textOf = values.sync === true ? async (file) => readFileSync(file, 'utf8') : (file) => readFile(file, 'utf8');

const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
server.registerTool('read', {
  title: 'Read',
  description: 'Read a text file of the workspace',
  inputSchema: { path: z.string().describe('Path relative to the workspace') },
  annotations: { readOnlyHint: true, idempotentHint: true },
}, async ({ path: file }) => {
  try {
    return { content: [{ type: 'text', text: await textOf(path.resolve(workspace, file)) }] };
  } catch (err) {
    return { content: [{ type: 'text', text: err.message }], isError: true };
  }
});

await server.connect(new StdioServerTransport());

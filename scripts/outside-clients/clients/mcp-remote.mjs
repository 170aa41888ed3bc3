// mcp-remote: the stdio-to-HTTP bridge hosts use to reach a remote server. The SDK v1 Client (installed
// beside it) speaks stdio to mcp-remote, which forwards to super-pi's Streamable HTTP endpoint.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import path from 'node:path';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const client = new Client({ name: 'outside-mcp-remote', version: '1.0.0' });
// --allow-http: the server is on 127.0.0.1 without TLS; --transport http-only: no SSE fallback.
const proxy = path.join(process.cwd(), 'node_modules', '.bin', 'mcp-remote');
await client.connect(new StdioClientTransport({ command: proxy, args: [env.http, '--allow-http', '--transport', 'http-only'], stderr: 'ignore', env: { ...process.env, MCP_REMOTE_CONFIG_DIR: path.join(process.cwd(), 'mcp-remote-config') } }));
await exercise({
  listTools: async () => (await client.listTools()).tools,
  call: async (name, args) => client.callTool({ name, arguments: args }),
  close: () => client.close(),
}, { client: 'mcp-remote (SDK v1 Client through it)', version: await packageVersion('mcp-remote'), transport: env.transport });

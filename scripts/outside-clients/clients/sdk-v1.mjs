// The official TypeScript SDK v1 Client (@modelcontextprotocol/sdk): it checks every structuredContent
// against the tool's outputSchema itself once the tools are listed, so a mismatch throws in callTool.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const client = new Client({ name: 'outside-sdk-v1', version: '1.0.0' });
await client.connect(env.transport === 'stdio'
  ? new StdioClientTransport({ ...env.stdio, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(env.http)));
await exercise({
  listTools: async () => (await client.listTools()).tools,
  call: async (name, args) => client.callTool({ name, arguments: args }),
  close: () => client.close(),
}, { client: 'MCP TypeScript SDK v1 Client', version: await packageVersion('@modelcontextprotocol/sdk'), transport: env.transport });

// The official TypeScript SDK v2 client (@modelcontextprotocol/client), installed in the project.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const client = new Client({ name: 'outside-sdk-v2', version: '1.0.0' });
await client.connect(env.transport === 'stdio'
  ? new StdioClientTransport({ ...env.stdio, stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(env.http)));
await exercise({
  listTools: async () => (await client.listTools()).tools,
  call: async (name, args) => client.callTool({ name, arguments: args }),
  close: () => client.close(),
}, { client: 'MCP TypeScript SDK v2 client', version: await packageVersion('@modelcontextprotocol/client'), transport: env.transport });

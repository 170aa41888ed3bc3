// The OpenAI Agents SDK's MCP server wrappers (@openai/agents-core: MCPServerStdio, MCPServerStreamableHttp),
// called as its agent loop does when structured output is on (callToolResult: content and structuredContent).

import { MCPServerStdio, MCPServerStreamableHttp } from '@openai/agents-core';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const server = env.transport === 'stdio'
  ? new MCPServerStdio({ name: 'superpi', command: env.stdio.command, args: env.stdio.args, cwd: env.stdio.cwd })
  : new MCPServerStreamableHttp({ name: 'superpi', url: env.http });
await server.connect();
await exercise({
  listTools: () => server.listTools(),
  call: (name, args) => server.callToolResult(name, args),
  close: () => server.close(),
}, { client: 'OpenAI Agents SDK MCP server wrapper', version: await packageVersion('@openai/agents-core'), transport: env.transport });

// Vercel AI SDK's MCP client (@ai-sdk/mcp): the tools as an app hands them to generateText, each called
// through its own execute(), which returns the server's CallToolResult.

import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const client = await createMCPClient({
  transport: env.transport === 'stdio' ? new Experimental_StdioMCPTransport({ ...env.stdio, stderr: 'ignore' }) : { type: 'http', url: env.http },
});
let tools = {};
await exercise({
  listTools: async () => {
    tools = await client.tools();
    return (await client.listTools()).tools;
  },
  call: async (name, args) => {
    const tool = tools[name];
    if (!tool) throw new Error(`the AI SDK tool set has no ${name}`);
    return tool.execute(args, { toolCallId: `call-${name}`, messages: [] });
  },
  modelView: async (name, answer) => {
    const out = await tools[name].toModelOutput({ toolCallId: `call-${name}`, input: {}, output: answer });
    if (out.type !== 'content') return [{ type: 'text', text: JSON.stringify(out.value) }];
    return out.value.map((p) => (p.type === 'image-data' ? { type: 'image', data: p.data, mimeType: p.mediaType } : { type: 'text', text: p.text }));
  },
  close: () => client.close(),
}, { client: 'Vercel AI SDK MCP client', version: await packageVersion('@ai-sdk/mcp'), transport: env.transport });

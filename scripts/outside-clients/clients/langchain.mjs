// LangChain's MCP adapters (@langchain/mcp-adapters): the tools as LangChain StructuredTools, invoked with
// a tool call as an agent would; the ToolMessage's content is what the model gets, its artifact carries
// the structuredContent.

import { MultiServerMCPClient } from '@langchain/mcp-adapters';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const server = env.transport === 'stdio' ? { transport: 'stdio', ...env.stdio, stderr: 'ignore' } : { transport: 'http', url: env.http };
const client = new MultiServerMCPClient({ mcpServers: { superpi: server }, useStandardContentBlocks: true, prefixToolNameWithServerName: false });
let tools = [];

/** LangChain's content blocks back to MCP's shape: text and base64 images. */
function blocks(content) {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((b) => (b.type === 'image' ? { type: 'image', data: b.data, mimeType: b.mime_type } : { type: b.type, text: b.text }));
}

await exercise({
  listTools: async () => {
    tools = await client.getTools();
    return tools.map((t) => ({ name: t.name, annotations: t.metadata?.annotations }));
  },
  call: async (name, args) => {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no LangChain tool ${name}`);
    const message = await tool.invoke({ type: 'tool_call', id: `call-${name}`, name, args });
    const structured = (message.artifact ?? []).find((a) => a.type === 'mcp_structured_content')?.data;
    return { content: blocks(message.content), structuredContent: structured };
  },
  // The ToolMessage's content is what LangChain puts before the model.
  modelView: async (_name, answer) => answer.content,
  close: () => client.close(),
}, { client: 'LangChain MCP adapters', version: await packageVersion('@langchain/mcp-adapters'), transport: env.transport });

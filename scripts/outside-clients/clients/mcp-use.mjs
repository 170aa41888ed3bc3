// mcp-use (npm `mcp-use` 1.x, the line whose package carries the client): an MCPClient from a config
// dict, one session, the session's listTools/callTool. What its MCPAgent puts before the model is the
// output of the LangChain tools its LangChainAdapter makes from the session's connector.
// (mcp-use 2.x moved the client to @mcp-use/client, which the registry here does not have: see docs/clients.md.)

import { MCPClient } from 'mcp-use';
import { LangChainAdapter } from 'mcp-use/adapters';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const server = env.transport === 'stdio' ? { command: env.stdio.command, args: env.stdio.args, cwd: env.stdio.cwd } : { url: env.http, transport: 'http' };
const client = new MCPClient({ mcpServers: { superpi: server } });
const session = await client.createSession('superpi');
const agentTools = await new LangChainAdapter().createToolsFromConnectors([session.connector]);
const modelCalls = new Map();

/** What the agent's LangChain tool returns for the call (a string or LangChain content blocks), as MCP blocks. */
function blocks(output) {
  const content = typeof output === 'object' && output !== null && 'content' in output ? output.content : output;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [{ type: 'text', text: JSON.stringify(content) }];
  return content.map((b) => (b.type === 'image' || b.type === 'image_url'
    ? { type: 'image', data: b.data ?? b.image_url?.url ?? b.image_url, mimeType: b.mime_type ?? b.mimeType }
    : { type: b.type, text: b.text ?? JSON.stringify(b) }));
}

await exercise({
  listTools: async () => session.listTools(),
  call: async (name, args) => {
    modelCalls.set(name, args);
    return session.callTool(name, args);
  },
  modelView: async (name) => {
    const tool = agentTools.find((t) => t.name === name);
    if (!tool) throw new Error(`no agent tool ${name}; got ${agentTools.map((t) => t.name).join(', ')}`);
    return blocks(await tool.invoke(modelCalls.get(name)));
  },
  close: () => client.closeAllSessions(),
}, { client: 'mcp-use (MCPClient)', version: await packageVersion('mcp-use'), transport: env.transport });

// Mastra's MCP client (@mastra/mcp): the tools as Mastra tools. For a tool with an outputSchema its
// execute() returns the structuredContent alone (the content blocks ride along on a hidden symbol), and
// its toModelOutput gives the model the text blocks.

import { getMcpCallToolContent, MCPClient } from '@mastra/mcp';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const server = env.transport === 'stdio' ? { command: env.stdio.command, args: env.stdio.args, cwd: env.stdio.cwd } : { url: new URL(env.http) };
const mcp = new MCPClient({ id: 'outside-clients', servers: { superpi: server } });
let tools = {};
const tool = (name) => {
  const t = tools[`superpi_${name}`];
  if (!t) throw new Error(`Mastra lists no superpi_${name}`);
  return t;
};

await exercise({
  listTools: async () => {
    tools = await mcp.listTools();
    return Object.keys(tools).map((id) => ({ name: id.replace(/^superpi_/, '') }));
  },
  call: async (name, args) => {
    const output = await tool(name).execute(args, {});
    const hidden = getMcpCallToolContent(output);
    // Without structuredContent Mastra returns the whole CallToolResult.
    if (hidden === undefined) return output;
    return { content: hidden, structuredContent: output };
  },
  modelView: async (name, answer) => {
    const output = answer.structuredContent ?? answer;
    const out = await tool(name).toModelOutput(output);
    return [{ type: 'text', text: typeof out.value === 'string' ? out.value : JSON.stringify(out.value) }];
  },
  close: () => mcp.disconnect(),
}, { client: 'Mastra MCP client', version: await packageVersion('@mastra/mcp'), transport: env.transport });

// The library: what `import … from 'super-pi'` gives. The pure protocol core (drive it in your own tests,
// or behind your own transport), the tool definitions, and the server itself (stdio, or HTTP and
// WebSocket) for embedding. The command line (`super-pi`) is built on the same functions.

import { toolCatalog } from './tools/catalog.ts';
import { type ToolDefinition, toolNames } from './tools/definition.ts';

export { handleEffectResult, handleMcpLine, type Outgoing, type Step } from './mcp/handle.ts';
export type { Effect, EffectResult } from './mcp/effects.ts';
export { type ConnectionState, initialState } from './mcp/state.ts';
export { negotiateVersion, type ProtocolVersion, supportedVersions } from './mcp/version.ts';
export type { ToolDefinition, ToolName } from './tools/definition.ts';
export { type LibraryOptions, runStdio, type RunningServer, SERVER_VERSION, startServer, type StdioEnd, type StdioServeOptions } from './cli/serve.ts';
export { DRAIN_GRACE_MS } from './limits.ts';

/** The tools super-pi serves, in listing order: name, title, description, JSON Schemas, annotations. */
export const toolDefinitions: readonly ToolDefinition[] = Object.freeze(toolNames.map((name) => toolCatalog[name]));

// The 2026-07-28 Streamable HTTP headers that repeat the body (`MCP-Protocol-Version`, `Mcp-Method`,
// `Mcp-Name`): an intermediary routes by them, so one that disagrees with the body is refused (-32020).

import { META_PROTOCOL_VERSION, metaField, metaOf } from '../mcp/era.ts';
import type { Params } from '../mcp/jsonrpc.ts';

/** The body field `Mcp-Name` repeats, by method. */
const nameField: ReadonlyMap<string, string> = new Map([['tools/call', 'name'], ['prompts/get', 'name'], ['resources/read', 'uri']]);

/** Why the headers disagree with the modern request in the body, or null when they agree (or are absent). */
export function headerMismatch(header: (name: string) => string | undefined, method: string, params: Params): string | null {
  const version = header('mcp-protocol-version');
  const declared = metaField(metaOf(params), META_PROTOCOL_VERSION);
  if (version !== undefined && declared !== undefined && version !== declared) {
    return `Header mismatch: MCP-Protocol-Version is ${JSON.stringify(version)} but the request's _meta names ${JSON.stringify(declared)}`;
  }
  const named = header('mcp-method');
  if (named !== undefined && named !== method) return `Header mismatch: Mcp-Method is ${JSON.stringify(named)} but the body's method is ${JSON.stringify(method)}`;
  const field = nameField.get(method);
  const name = header('mcp-name');
  if (field !== undefined && name !== undefined && name !== params[field]) {
    return `Header mismatch: Mcp-Name is ${JSON.stringify(name)} but the body's params.${field} is ${JSON.stringify(params[field])}`;
  }
  return null;
}

// A reply Streamable HTTP decides at once, before any session sees the request: a status, a body and
// its headers, written to the target in one go (refusals of the whole request, 400s of a body).

import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';

/** A reply decided at once: written to the target in one go. */
export class Plain {
  constructor(readonly status: number, readonly body: string | null, readonly headers: Readonly<Record<string, string>> = {}) {}
}

/** A refusal of the whole request: `status`, with a JSON-RPC error (id null) saying why. */
export function refuse(status: number, message: string, headers: Record<string, string> = {}): Plain {
  return new Plain(status, errorLine(null, ErrorCode.InvalidRequest, message), { 'Content-Type': 'application/json', ...headers });
}

/** A body the transport will not pass on: 400, with a JSON-RPC error saying why. */
export function refuseBody(message: string): Plain {
  return json(400, errorLine(null, ErrorCode.InvalidRequest, message));
}

export function json(status: number, body: string): Plain {
  return new Plain(status, body, { 'Content-Type': 'application/json' });
}

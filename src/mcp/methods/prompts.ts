// `prompts/list` and `prompts/get`: one prompt per harness, plus `plan_architecture`.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { findPrompt, listedPrompt, promptEntries, renderPrompt } from '../../harness/prompts.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { listReply } from './list-reply.ts';
import type { ConnectionState } from '../state.ts';
import { fail, reply, type Step } from '../step.ts';
import { versionFeatures } from '../version.ts';

export function listPrompts(state: ConnectionState, id: RequestId, params: Params): Step {
  const withTitle = versionFeatures(state.protocolVersion ?? '2025-06-18').titles;
  return listReply(state, id, 'prompts', promptEntries.map((p) => listedPrompt(p, withTitle)), params.cursor);
}

export function getPrompt(state: ConnectionState, id: RequestId, params: Params): Step {
  if (typeof params.name !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'prompts/get needs params.name (a string)');
  const entry = findPrompt(params.name);
  if (!entry) return fail(state, id, ErrorCode.InvalidParams, `Unknown prompt: ${params.name}`);
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return fail(state, id, ErrorCode.InvalidParams, 'prompts/get params.arguments must be an object of strings');
  }
  const rendered = renderPrompt(entry, args as Record<string, unknown>);
  if (!rendered.ok) return fail(state, id, ErrorCode.InvalidParams, rendered.message);
  return reply(state, id, rendered.result);
}

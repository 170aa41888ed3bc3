// `completion/complete`: harness ids and workspace paths for prompt arguments, conversation ids for
// the transcript template. Path and conversation completions are effects (a directory, the store).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { findPrompt } from '../../harness/prompts.ts';
import { harnessIds } from '../../harness/ids.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { TRANSCRIPT_TEMPLATE } from '../resources.ts';
import { chosenWorkspace, type ConnectionState } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { MAX_COMPLETION_VALUES } from '../../limits.ts';

export function complete(state: ConnectionState, id: RequestId, params: Params): Step {
  const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  const argument = params.argument as { name?: unknown; value?: unknown } | undefined;
  if (!ref || typeof ref !== 'object') return fail(state, id, ErrorCode.InvalidParams, 'completion/complete needs params.ref');
  if (!argument || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    return fail(state, id, ErrorCode.InvalidParams, 'completion/complete needs params.argument with a string name and value');
  }
  const value = argument.value;
  if (ref.type === 'ref/prompt') {
    if (typeof ref.name !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'ref/prompt needs a name');
    const entry = findPrompt(ref.name);
    if (!entry) return fail(state, id, ErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
    const spec = entry.harness.prompt.arguments.find((a) => a.name === argument.name);
    if (!spec) return fail(state, id, ErrorCode.InvalidParams, `Prompt ${ref.name} has no argument "${argument.name}"`);
    if (spec.completes === 'harness') return completion(state, id, harnessIds.filter((h) => h.startsWith(value)));
    if (spec.completes === 'path') {
      const added = addPending(state, { kind: 'completion', requestId: id });
      return { state: added.state, replies: [], effects: [{ kind: 'completePath', ticket: added.ticket, prefix: value, ...chosenWorkspace(state) }] };
    }
    return completion(state, id, []);
  }
  if (ref.type === 'ref/resource') {
    if (ref.uri !== TRANSCRIPT_TEMPLATE) return fail(state, id, ErrorCode.InvalidParams, `No resource template ${String(ref.uri)}`);
    if (argument.name !== 'id') return fail(state, id, ErrorCode.InvalidParams, `Template ${TRANSCRIPT_TEMPLATE} has no variable "${argument.name}"`);
    // The principal's conversations are in the store (other connections', earlier processes'): an effect.
    const added = addPending(state, { kind: 'completion', requestId: id });
    return { state: added.state, replies: [], effects: [{ kind: 'completeConversation', ticket: added.ticket, prefix: value }] };
  }
  return fail(state, id, ErrorCode.InvalidParams, 'params.ref.type must be "ref/prompt" or "ref/resource"');
}

/** `total`: how many match in all, when known to be more than `all` holds. */
export function completion(state: ConnectionState, id: RequestId, all: readonly string[], hasMoreBeyond = false, total = all.length): Step {
  const values = all.slice(0, MAX_COMPLETION_VALUES);
  return reply(state, id, { completion: { values, total: Math.max(total, all.length), hasMore: hasMoreBeyond || all.length > values.length } });
}

// `resources/list`, `resources/read`, `resources/templates/list`. Reading the workspace context is an
// effect (it needs the filesystem and git); the loadout is pure; transcripts belong to their principal:
// listed for the legacy connection that started them (for a 2026-07-28 request: all of the principal's,
// from the store), readable from any connection of the principal.

import type { RequestId, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../../harness/catalog.ts';
import { decideForCaller } from '../../harness/policy.ts';
import { toolNames } from '../../tools/definition.ts';
import type { WorkspaceContext } from '../effects.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { listStoredConversations, transcriptResource } from './conversation-list.ts';
import { listReply } from './list-reply.ts';
import { callerOf } from './tools.ts';
import { LOADOUT_URI, META_NEXT_URI, TRANSCRIPT_TEMPLATE, WORKSPACE_URI, parseTranscriptUri, transcriptPageUri } from '../resources.ts';
import { chosenWorkspace, type ConnectionState, effectiveHarness } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';

/** The resources every listing starts with: the workspace context and the loadout. */
export function staticResources(state: ConnectionState): Resource[] {
  const harness = effectiveHarness(state);
  return [
    { uri: WORKSPACE_URI, name: 'workspace', title: 'Workspace context', description: 'The workspace root, git branch and status, top-level layout and README excerpt.', mimeType: 'text/markdown' },
    { uri: LOADOUT_URI, name: 'loadout', title: `Tool loadout of ${harness}`, description: 'Which tools this connection\'s harness lets this caller use, and the rule for each.', mimeType: 'application/json' },
  ];
}

/**
 * A legacy session lists the conversations it started (its own, as before); a 2026-07-28 request has no
 * session of its own, so its listing is the principal's conversations from the store (conversation-list.ts).
 */
export function listResources(state: ConnectionState, id: RequestId, params: Params): Step {
  if (state.modern !== undefined) return listStoredConversations(state, id, params.cursor);
  return listReply(state, id, 'resources', [...staticResources(state), ...state.conversations.map(transcriptResource)], params.cursor);
}

export function listResourceTemplates(state: ConnectionState, id: RequestId, params: Params): Step {
  const templates: ResourceTemplate[] = [{
    uriTemplate: TRANSCRIPT_TEMPLATE, name: 'conversation-transcript', title: 'Conversation transcript',
    description: 'The transcript of any conversation of your principal (from any connection, before a restart too), as JSON lines: one entry per line, seq 1, 2, 3… in order. A read returns one page; when more entries follow, the content\'s _meta["superpi/nextUri"] names the next page (…/transcript?after=<seq>).',
    mimeType: 'application/jsonl',
  }];
  return listReply(state, id, 'resourceTemplates', templates, params.cursor);
}

export function readResource(state: ConnectionState, id: RequestId, params: Params): Step {
  const uri = params.uri;
  if (typeof uri !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'resources/read needs params.uri (a string)');
  if (uri === LOADOUT_URI) {
    return reply(state, id, { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(loadoutDocument(state), null, 2) }] });
  }
  if (uri === WORKSPACE_URI) {
    const added = addPending(state, { kind: 'resource', requestId: id, uri });
    return { state: added.state, replies: [], effects: [{ kind: 'readWorkspace', ticket: added.ticket, ...chosenWorkspace(state) }] };
  }
  // Any conversation of the caller's principal is readable, whichever connection (or process) started
  // it. The store answers by (principal, id) in one lookup, so another principal's conversation takes
  // the same path to the same "not found" as one that never existed.
  // One read is one page (TRANSCRIPT_READ_MAX_BYTES, TRANSCRIPT_READ_MAX_ENTRIES): `?after=<seq>` reads the
  // page after that entry, and a page with more after it names the next one (`transcriptPage`).
  const transcript = parseTranscriptUri(uri);
  if (transcript !== null && 'problem' in transcript) return fail(state, id, ErrorCode.InvalidParams, transcript.problem, { uri });
  if (transcript !== null) {
    const { conversationId } = transcript;
    const added = addPending(state, { kind: 'resource', requestId: id, uri, conversationId });
    return { state: added.state, replies: [], effects: [{ kind: 'readTranscript', ticket: added.ticket, conversationId, afterSeq: transcript.afterSeq ?? 0 }] };
  }
  return fail(state, id, ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
}

/**
 * A read transcript page as the reply's one content: JSON lines, and when more entries follow, the next
 * page's URI in `_meta[META_NEXT_URI]` (a page past the first is named by the seq it starts after).
 */
export function transcriptPage(uri: string, conversationId: string | undefined, jsonl: string, nextAfterSeq: number | undefined) {
  const next = conversationId === undefined || nextAfterSeq === undefined ? {} : { _meta: { [META_NEXT_URI]: transcriptPageUri(conversationId, nextAfterSeq) } };
  return { contents: [{ uri, mimeType: 'application/jsonl', text: jsonl, ...next }] };
}

/** The harness's tools as this caller meets them: `verdict` and `rule` are what a call of it would get. */
function loadoutDocument(state: ConnectionState) {
  const harness = harnessById(effectiveHarness(state));
  const caller = callerOf(state);
  return {
    harness: harness.id,
    description: harness.description,
    caller: caller.kind,
    tools: toolNames.map((name) => {
      const rule = harness.policy[name];
      const decision = decideForCaller(harness, name, caller);
      return {
        name,
        verdict: decision.verdict,
        rule: decision.verdict === 'deny' ? decision.refusal : decision.rule,
        ...(decision.verdict === rule.verdict ? {} : { harnessVerdict: rule.verdict }),
        ...(rule.paths ? { paths: rule.paths.map((p) => ({ under: p.under, ...(p.anyDepth === true ? { anyDepth: true } : {}), verdict: p.verdict, why: p.why })) } : {}),
      };
    }),
  };
}

export function renderWorkspace(ctx: WorkspaceContext): string {
  const lines = [`# Workspace ${ctx.root}`, ''];
  if (ctx.git) {
    lines.push(`Git branch: ${ctx.git.branch ?? '(detached or unknown)'}`);
    lines.push('', 'Git status:', '```', ctx.git.status && ctx.git.status.trim() !== '' ? ctx.git.status.trimEnd() : '(clean)', '```');
  } else {
    lines.push('Not a git repository.');
  }
  lines.push('', '## Top-level layout', '', ...(ctx.layout.length > 0 ? ctx.layout.map((e) => `- ${e}`) : ['(empty)']));
  if (ctx.readme) lines.push('', `## ${ctx.readme.path} (excerpt)`, '', ctx.readme.excerpt);
  return lines.join('\n');
}

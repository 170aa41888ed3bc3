// What the pure core asks the runtime to do (effects), and what comes back (effect results).
// Every effect that answers carries a `ticket`; its result comes back with the same ticket.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { HarnessId } from '../harness/ids.ts';
import type { ToolName } from '../tools/definition.ts';
import type { ToolOutcome, ToolProgress } from '../tools/contract.ts';
import type { LogLevel } from './logging-level.ts';

// `workspace` on an effect: the session's chosen client root (a checked real path); absent, the
// configured workspace.
export type Effect =
  /**
   * Run a tool body; answer with `toolDone` (and any number of `toolProgress` before it). `task`: a 2026-07-28
   * `harness_task` whose request declared the Tasks extension: the runtime may run it detached and answer
   * `taskCreated` at once instead (it does when the node has a model of its own).
   */
  | { kind: 'runTool'; ticket: number; requestId: RequestId; tool: ToolName; args: Record<string, unknown>; harness: HarnessId; client: ClientAbilities; workspace?: string; rounds?: TaskRounds; task?: true }
  /**
   * A 2026-07-28 retry carries the person's yes: record in the store that the confirmation sealed in its
   * `requestState` (`digest`, valid until `expiresAt`) is used, before its call starts. Answer with
   * `confirmationConsumed`: only its first use runs the call (docs/multi-round-trip.md#single-use).
   */
  | { kind: 'consumeConfirmation'; ticket: number; digest: string; expiresAt: number }
  /** The client's answer to a `clientRequest` (result, or error when it failed or cannot be asked). */
  | { kind: 'clientResponse'; ticket: number; key: number; result?: unknown; error?: { code: number; message: string } }
  /** Stop the work of a ticket: its caller cancelled. No result is expected any more. */
  | { kind: 'cancel'; ticket: number }
  /** Gather the workspace context resource; answer with `workspaceContext`. */
  | { kind: 'readWorkspace'; ticket: number; workspace?: string }
  /**
   * Read a page of a conversation's transcript (this connection's principal): its entries after `afterSeq`
   * (0: from the first), at most TRANSCRIPT_READ_MAX_ENTRIES of them and TRANSCRIPT_READ_MAX_BYTES of JSON
   * lines (one entry larger than that alone is a page of its own). Answer with `transcript`.
   */
  | { kind: 'readTranscript'; ticket: number; conversationId: string; afterSeq: number }
  /**
   * A `resources/subscribe` to a transcript: is the conversation this principal's (any connection, any
   * process before)? If so the runtime routes its updates here. Answer with `transcriptFound`.
   */
  | { kind: 'watchTranscript'; ticket: number; conversationId: string }
  /**
   * The session no longer needs the watch its 2025 subscription made (an unsubscribe, or a subscribe cancelled
   * while it was looked up): the runtime releases it; a listen stream's own watch of the transcript stays. No answer.
   */
  | { kind: 'unwatchTranscript'; conversationId: string }
  /**
   * A 2026-07-28 `subscriptions/listen` naming transcripts and (Tasks extension) task ids: which of them are
   * this principal's? Those are routed here, as for `watchTranscript`: a transcript's new entries, a task's
   * status changes. Answer with `transcriptsWatched`.
   */
  | { kind: 'watchTranscripts'; ticket: number; conversationIds: string[]; taskIds: string[] }
  /**
   * A 2026-07-28 `resources/list`: one page of this principal's conversations from the store (any connection,
   * any process before), most recently updated first, at most `limit`; `cursor`: the store's `nextCursor`
   * of the page before. Answer with `conversationList`.
   */
  | { kind: 'listConversations'; ticket: number; limit: number; cursor?: string }
  /** The principal's conversation ids starting with `prefix`, newest first; answer with `conversationCompletions`. */
  | { kind: 'completeConversation'; ticket: number; prefix: string }
  /** List workspace paths starting with `prefix` for a completion; answer with `pathCompletions`. */
  | { kind: 'completePath'; ticket: number; prefix: string; workspace?: string }
  /**
   * Look at the client's roots (file: URIs, in its order): the real path of each that names a readable
   * directory, else why not. Answer with `rootsChecked` carrying the same `round`.
   */
  | { kind: 'checkRoots'; round: number; uris: string[] }
  /** After `ms`, answer with `rootsWaitOver` of this `round` (requests held for the roots stop waiting). */
  | { kind: 'rootsDeadline'; round: number; ms: number }
  /**
   * A 2026-07-28 `tasks/get`: the harness task (its conversation) of this principal, read from the store (any
   * node). Answer with `taskRead`.
   */
  | { kind: 'readTask'; ticket: number; taskId: string; canAsk: boolean }
  /** A 2026-07-28 `tasks/cancel`: stop this principal's task if it runs on this node. Answer with `taskCancelled`. */
  | { kind: 'cancelTask'; ticket: number; taskId: string }
  /**
   * A 2026-07-28 `tasks/update`: the person's answers, by the key of the input request each answers, to this
   * principal's task; one that answers the question the task is parked at resumes it (on this node). Answer
   * with `taskUpdated`.
   */
  | { kind: 'updateTask'; ticket: number; taskId: string; answers: readonly TaskAnswer[]; canAsk: boolean }
  /** A log record for the operator (stderr); the runtime filters by its own level. */
  /** `toClient: false`: already sent to, or withheld from, the client by the request's own era rules (modern.ts). */
  | { kind: 'log'; level: LogLevel; message: string; data?: Record<string, unknown>; toClient?: false };

/**
 * A 2026-07-28 `harness_task` run in round trips (docs/multi-round-trip.md): its model may be the client's,
 * asked one turn per round trip, and the person may be asked, from inside the task, whether a call under an
 * `ask` rule may run. A first call (`resume` null), or a retry carrying the client model's answer to the
 * conversation's turn `turn`, or the person's answer to the next call of that turn (the transcript then
 * ending at `seq`). The runtime answers `toolInput` at a model turn the client's model must take, `toolAsk`
 * at a question, `toolDone` at the end, `effectFailed` (-32602) for a stale or replayed retry.
 */
export interface TaskRounds {
  /** The client declared `sampling`: its model may take the turns (when the server has none of its own). */
  readonly sample: boolean;
  /** The client declared form elicitation: a call under `ask` inside the task is put to the person. */
  readonly ask: boolean;
  readonly resume: null | TurnResume | AskResume;
}

/** The client model's answer to the conversation's model turn `turn`. */
export interface TurnResume { readonly conversationId: string; readonly turn: number; readonly seq: number; readonly answer: unknown }

/** The person's answer (read by the core: run it or not, and the refusal told to the model) to the next call of turn `turn`. */
export interface AskResume { readonly conversationId: string; readonly turn: number; readonly seq: number; readonly person: { readonly allowed: boolean; readonly refusal: string } }

/**
 * One of `tasks/update`'s `inputResponses`: the key it answers and, read by the core, the person's answer, or
 * (a `sample-…` key) the client model's `CreateMessageResult`-shaped answer to a model turn.
 */
export type TaskAnswer =
  | { readonly key: string; readonly person: { readonly allowed: boolean; readonly refusal: string } }
  | { readonly key: string; readonly sampled: unknown };

/** What the client can be asked for (declared at initialize, and spoken by the negotiated version). */
export interface ClientAbilities {
  readonly sampling: boolean;
  readonly elicitation: boolean;
}

/** A harness task just started detached: its id (the conversation's) and times, as ISO-8601 strings. */
export interface CreatedTask {
  readonly taskId: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /**
   * SEP-2663 `ttlMs`: how long after `createdAt` the task may be deleted (its retention counted from its last
   * update: store/retention.ts `shownTtlMs`); null or absent when it has none (no `--task-ttl`), as by default.
   */
  readonly ttlMs?: number | null;
}

/**
 * A harness task as the store holds it (its conversation), for `tasks/get`. `outcome`: the harness_task
 * result rebuilt from the transcript once it ended (completed, failed, cancelled), the text of why it
 * stopped when interrupted, null while it runs.
 */
export interface StoredTask extends CreatedTask {
  readonly status: 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted' | 'input_required';
  readonly outcome: ToolOutcome | null;
  /**
   * `input_required`: what the task is parked for, by the key of its input request (task-input.ts): its
   * person's yes or no to each call of the turn not answered yet (`asks`, one key each, in the turn's order),
   * or its client's model's turn (`params`; `unshown`: why they are not shown, its conversation being longer
   * than a poll reads); null when the transcript shows none.
   */
  readonly question?: { readonly asks: readonly { readonly key: string; readonly message: string }[] } | { readonly key: string; readonly params: unknown } | { readonly key: string; readonly unshown: string } | null;
}

export interface WorkspaceContext {
  root: string;
  git: { branch: string | null; status: string | null } | null;
  layout: string[];
  readme: { path: string; excerpt: string } | null;
}

export type CheckedRoot = { uri: string; path: string } | { uri: string; problem: string };

export type EffectResult =
  | { kind: 'toolDone'; ticket: number; outcome: ToolOutcome }
  | { kind: 'toolProgress'; ticket: number; progress: ToolProgress }
  /** `firstUse`: this retry recorded the confirmation's use, so its call runs; false: it was used before, and the retry is refused. */
  | { kind: 'confirmationConsumed'; ticket: number; firstUse: boolean }
  /** A task sampled by round trip (`rounds`) needs its client's model for `turn`: the call answers `input_required`. */
  | { kind: 'toolInput'; ticket: number; conversationId: string; turn: number; seq: number; params: unknown }
  /** A task round reached a call under `ask` (`rounds.ask`): the call answers `input_required` with the person's question. */
  | { kind: 'toolAsk'; ticket: number; conversationId: string; turn: number; seq: number; message: string }
  | { kind: 'workspaceContext'; ticket: number; context: WorkspaceContext }
  | { kind: 'pathCompletions'; ticket: number; values: string[]; hasMore: boolean }
  /**
   * JSON lines, one entry per line; null when the conversation is not the caller's (or gone). `nextAfterSeq`:
   * more entries follow the page, from the one after this seq (its last).
   */
  | { kind: 'transcript'; ticket: number; jsonl: string | null; nextAfterSeq?: number }
  /** false when the conversation is not the caller's, or does not exist: the two are not told apart. */
  | { kind: 'transcriptFound'; ticket: number; found: boolean }
  /**
   * The conversations of a `watchTranscripts` that are the caller's (the rest are not told apart from
   * missing ones), and its tasks that are, each as the store holds it now (absent: none were asked for).
   */
  | { kind: 'transcriptsWatched'; ticket: number; found: string[]; tasks?: StoredTask[] }
  /**
   * A page of `listConversations`: ids, newest first, and the store's cursor when more follow; `invalid-cursor`
   * when the store refused the cursor it was given (not one it made).
   */
  | { kind: 'conversationList'; ticket: number; page: { ids: string[]; nextCursor?: string } | 'invalid-cursor' }
  /** At most the completion limit of ids, newest first; `total` counts every match. */
  | { kind: 'conversationCompletions'; ticket: number; values: string[]; total: number }
  /** A resource changed (a transcript got an entry): subscribers get `notifications/resources/updated`. No ticket. */
  | { kind: 'resourceUpdated'; uri: string }
  /** A task may have changed status (as the store holds it now): listen streams naming it get `notifications/tasks` if it did. No ticket. */
  | { kind: 'taskStatus'; task: StoredTask }
  /** Work in flight (ticket) needs to ask the client: `sampling/createMessage` or `elicitation/create`. */
  | { kind: 'clientRequest'; ticket: number; key: number; method: 'sampling/createMessage' | 'elicitation/create'; params: unknown }
  /** What `checkRoots` found, per URI in its order: a real directory path, or the reason it is refused. No ticket. */
  | { kind: 'rootsChecked'; round: number; roots: CheckedRoot[] }
  /** A `rootsDeadline` passed. No ticket. */
  | { kind: 'rootsWaitOver'; round: number }
  /** A `runTool` with `task` runs detached: the call answers a `CreateTaskResult` (Tasks extension). */
  | { kind: 'taskCreated'; ticket: number; task: CreatedTask }
  /** What the store holds of a task; null when it is not the caller's, or does not exist (not told apart). */
  | { kind: 'taskRead'; ticket: number; task: StoredTask | null }
  /** `found` false: not the caller's task, or none. */
  | { kind: 'taskCancelled'; ticket: number; found: boolean }
  /** false when the task is not the caller's (or does not exist); answers to no pending request are ignored. */
  | { kind: 'taskUpdated'; ticket: number; found: boolean }
  /** The effect failed in the runtime (not a tool error): the request gets a JSON-RPC error. */
  | { kind: 'effectFailed'; ticket: number; code: number; message: string };

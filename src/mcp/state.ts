// One connection's protocol state. Plain data, replaced (never mutated) by every step of the core,
// so that a checkpoint is a snapshot and a step can be tested as a table row.

import type { ClientCapabilities, Implementation, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_HARNESS, type HarnessId } from '../harness/ids.ts';
import type { ToolName } from '../tools/definition.ts';
import type { Params } from './jsonrpc.ts';
import type { ModernRequest } from './era.ts';
import type { LogLevel } from './logging-level.ts';
import type { RoundTrip } from './request-state.ts';
import type { ProtocolVersion } from './version.ts';
import { DEFAULT_PAGE_SIZE } from '../limits.ts';

/** Who is calling: the local user (stdio), a bearer-token principal, or an anonymous remote caller. */
export type Principal = { kind: 'local' } | { kind: 'token'; name: string } | { kind: 'anonymous' };

/**
 * Whether the client's roots choose the session's workspace: `ignore` (the operator named the workspace,
 * or the default for a bare state), `follow` (a local session: its first root that is a directory), or
 * `narrow` (a remote session: only a root inside the configured workspace, so roots never widen reach).
 */
export type RootsPolicy = 'ignore' | 'follow' | 'narrow';

export interface ConnectionConfig {
  readonly server: { readonly name: string; readonly version: string };
  /** The server's configured harness (`--harness`), used when the connection names none. */
  readonly harness: HarnessId;
  /** The configured (or default) workspace root, as a real path: the session's workspace until a client root is chosen. */
  readonly workspace: string;
  /** How the client's roots are used (roots.ts). */
  readonly roots: RootsPolicy;
  readonly principal: Principal;
  readonly pageSize: number;
  /** Operator opt-in (`--allow-anonymous-writes`): anonymous remote callers may use write, edit and bash. */
  readonly allowAnonymousWrites: boolean;
  /** Operator opt-in (`--allow-anonymous-tasks`): anonymous remote callers may start harness_task. */
  readonly allowAnonymousTasks: boolean;
}

/**
 * Work in flight. `modern`: the request was a 2026-07-28 one; its eventual answer is shaped for that era
 * with the context the request carried (never the connection's).
 */
export type Pending = PendingWork & { readonly modern?: ModernRequest };

/** A task a listen stream hears about, and the status (as the wire says it) it last sent for it. */
export interface ListenedTask {
  readonly taskId: string;
  readonly sent: string | null;
}

type PendingWork =
  /** `argsDigest`: a task sampled by round trip, whose turns are sealed over its arguments' digest. */
  | { kind: 'tool'; requestId: RequestId; tool: ToolName; progressToken?: string | number; argsDigest?: string }
  /**
   * A 2026-07-28 retry carrying the person's yes, waiting for the store to record the confirmation's use
   * (`consumeConfirmation`): its call starts only on the first use.
   */
  | { kind: 'consume'; requestId: RequestId; tool: ToolName; args: Record<string, unknown>; progressToken?: string | number }
  /** A tool call waiting for the person's answer to an `elicitation/create` (policy `ask`). */
  | { kind: 'confirm'; requestId: RequestId; tool: ToolName; args: Record<string, unknown>; progressToken?: string | number; outgoingId: string }
  /** A `resources/read`; `conversationId`: of a transcript's page, which names the next page. */
  | { kind: 'resource'; requestId: RequestId; uri: string; conversationId?: string }
  /** A 2025 `resources/subscribe` waiting for the store to find the transcript's conversation the principal's. */
  | { kind: 'subscribe'; requestId: RequestId; uri: string; conversationId: string }
  | { kind: 'completion'; requestId: RequestId }
  /** A 2026-07-28 `resources/list` waiting for its page of stored conversations; `first`: the page with the static resources. */
  | { kind: 'resourceList'; requestId: RequestId; first: boolean }
  /** A 2026-07-28 `tasks/get`, `tasks/update` or `tasks/cancel` (Tasks extension) waiting for the store. */
  | { kind: 'task'; requestId: RequestId; method: 'tasks/get' | 'tasks/update' | 'tasks/cancel'; taskId: string }
  /**
   * A 2026-07-28 `subscriptions/listen`: in flight until the client cancels it. `uris`: the transcript URIs
   * it asked for, one spelling per conversation, until `acked`; then those it was acknowledged for. Each
   * update of one goes out tagged with `requestId`, naming the URI as spelled here.
   * `tasks`: the task ids it was acknowledged for (Tasks extension), each with the status last sent on it
   * (null: none yet), so a `notifications/tasks` goes out once per change of status.
   */
  | { kind: 'listen'; requestId: RequestId; uris: readonly string[]; tasks: readonly ListenedTask[]; acked: boolean }
  /** A request to the client made on behalf of work in flight (a task's sampling or question): `owner` is that work's ticket. */
  | { kind: 'outgoing'; owner: number; key: number; outgoingId: string };

export interface ConnectionState {
  readonly config: ConnectionConfig;
  readonly phase: 'awaiting-initialize' | 'ready';
  readonly protocolVersion: ProtocolVersion | null;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | null;
  /** The harness this connection chose (initialize `_meta`), overriding the configured one. */
  readonly harness: HarnessId | null;
  /** The threshold the client set with `logging/setLevel`; null: no log notifications to the client. */
  readonly logLevel: LogLevel | null;
  /** Work in flight, by ticket. */
  readonly pending: ReadonlyMap<number, Pending>;
  readonly nextTicket: number;
  /** Conversations this connection started (filled by harness tasks). */
  readonly conversations: readonly string[];
  /** Transcript URIs this connection subscribed to, as the client spelled them: one per conversation. */
  readonly subscriptions: readonly string[];
  /** The client's root this session works in (a checked real path), or null: the configured workspace. */
  readonly root: string | null;
  /** The id of the `roots/list` question awaiting its answer, or null. */
  readonly rootsAsked: string | null;
  /** How many times roots were asked: names each question and its check, so a stale answer is known. */
  readonly rootsRound: number;
  /** Roots were asked and not settled yet (nor waited for past ROOTS_WAIT_MS): workspace-bound requests are held. */
  readonly rootsWaiting: boolean;
  /** Requests held until the roots are settled, in arrival order; they count as in flight. Not checkpointed. */
  readonly rootsHeld: readonly HeldRequest[];
  /**
   * Set only on the transient view a modern request is handled in (modern.ts), never on a connection's
   * own state: replies built from that view are shaped for the modern era (step.ts).
   */
  readonly modern?: ModernRequest;
  /**
   * Beside `modern` on the same transient view, never on a connection's own state (it holds the runtime's
   * sealer, which is neither data nor checkpointed): how this request seals and opens `requestState`.
   */
  readonly roundTrip?: RoundTrip;
}

/** A request that needs the session's workspace, held while the client's roots are being settled. */
export interface HeldRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly params: Params;
}

/**
 * What a fresh state starts with and an emptied one returns to, shared by every session: states are
 * never changed in place (every change makes a new Map or array), and an idle session is most of what a
 * server holds — an empty Map of its own costs ~0.2 KB.
 */
export const NO_PENDING: ReadonlyMap<number, Pending> = new Map();
const NONE: readonly never[] = Object.freeze([]);
const NO_CAPABILITIES: ClientCapabilities = Object.freeze({});

export function initialState(config: Partial<ConnectionConfig> & Pick<ConnectionConfig, 'workspace'>): ConnectionState {
  return {
    config: {
      server: config.server ?? { name: 'super-pi', version: '0.1.0' },
      harness: config.harness ?? DEFAULT_HARNESS,
      workspace: config.workspace,
      roots: config.roots ?? 'ignore',
      principal: config.principal ?? { kind: 'local' },
      pageSize: config.pageSize ?? DEFAULT_PAGE_SIZE,
      allowAnonymousWrites: config.allowAnonymousWrites ?? false,
      allowAnonymousTasks: config.allowAnonymousTasks ?? false,
    },
    phase: 'awaiting-initialize',
    protocolVersion: null,
    clientCapabilities: NO_CAPABILITIES,
    clientInfo: null,
    harness: null,
    logLevel: null,
    pending: NO_PENDING,
    nextTicket: 1,
    conversations: NONE,
    subscriptions: NONE,
    root: null,
    rootsAsked: null,
    rootsRound: 0,
    rootsWaiting: false,
    rootsHeld: NONE,
  };
}

/** The directory this session's tools, resources and completions work in. */
export function effectiveWorkspace(state: ConnectionState): string {
  return state.root ?? state.config.workspace;
}

/** The harness a direct tool call runs under: the connection's, else the configured one. */
export function effectiveHarness(state: ConnectionState): HarnessId {
  return state.harness ?? state.config.harness;
}

/** The `workspace` field of an effect: the chosen client root, or nothing (the runtime's configured workspace). */
export function chosenWorkspace(state: ConnectionState): { workspace?: string } {
  return state.root === null ? {} : { workspace: state.root };
}

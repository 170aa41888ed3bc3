// The client's roots choose the session's workspace when the operator did not: after `initialized` (and
// on every `notifications/roots/list_changed`) the core asks `roots/list`, hands the file: URIs to the
// runtime to check (`checkRoots`), and works in the first checked directory its policy accepts. Requests
// that need the workspace wait meanwhile, at most ROOTS_WAIT_MS (the runtime's `rootsDeadline` timer).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { CheckedRoot, Effect } from './effects.ts';
import { type Classified, idKey, type Params } from './jsonrpc.ts';
import { ownQuestion, question } from './outgoing.ts';
import type { ConnectionConfig, ConnectionState, HeldRequest } from './state.ts';
import { silent, type Step } from './step.ts';
import { MAX_ROOT_URI_LENGTH, MAX_ROOTS_CONSIDERED, ROOTS_WAIT_MS } from '../limits.ts';

/** Requests whose answer depends on the session's workspace: they wait for the roots. */
const WORKSPACE_METHODS: ReadonlySet<string> = new Set(['tools/call', 'resources/read', 'completion/complete']);

/** The id of the server's `roots/list` question of a round: its own prefix, apart from the other questions' ids. */
export const rootsQuestionId = (round: number): string => `superpi-roots-${round}`;

/** The session follows the client's roots: the operator named no workspace and the client declared `roots`. */
export function followsRoots(state: ConnectionState): boolean {
  return state.config.roots !== 'ignore' && state.phase === 'ready' && state.clientCapabilities.roots !== undefined;
}

/**
 * Asks the client for its roots (a new round; an answer to an earlier round is then ignored), on behalf
 * of request `relatedTo` when one is waiting for them. Nothing when the session does not follow roots.
 */
export function askRoots(state: ConnectionState, relatedTo?: RequestId): Step {
  if (!followsRoots(state)) return silent(state);
  const round = state.rootsRound + 1;
  const id = rootsQuestionId(round);
  return {
    state: { ...state, rootsAsked: id, rootsRound: round, rootsWaiting: true },
    replies: [relatedTo === undefined ? ownQuestion(id, 'roots/list', {}) : question(id, 'roots/list', {}, relatedTo)],
    effects: [
      { kind: 'log', level: 'debug', message: 'asking the client for its roots', data: { round } },
      { kind: 'rootsDeadline', round, ms: ROOTS_WAIT_MS },
    ],
  };
}

/** Whether request `method` waits now: roots are being settled and its answer depends on the workspace. */
export function waitsForRoots(state: ConnectionState, method: string): boolean {
  return state.rootsWaiting && WORKSPACE_METHODS.has(method);
}

/**
 * Holds a request until the roots are settled (bounded with the requests in flight by the caller). In a
 * remote session the question may have had nowhere to go (an HTTP client that has not opened its GET
 * stream yet): the first request held while it is unanswered carries a fresh one, on its own stream.
 */
export function holdForRoots(state: ConnectionState, id: RequestId, method: string, params: Params): Step {
  const held: ConnectionState = { ...state, rootsHeld: [...state.rootsHeld, { id, method, params }] };
  if (state.config.roots !== 'narrow' || state.rootsAsked === null || state.rootsHeld.length > 0) return silent(held);
  return askRoots(held, id);
}

/** The held requests, once the roots no longer keep them waiting (the caller handles them in order). */
export function takeHeld(state: ConnectionState): { state: ConnectionState; held: readonly HeldRequest[] } {
  if (state.rootsWaiting || state.rootsHeld.length === 0) return { state, held: [] };
  return { state: { ...state, rootsHeld: [] }, held: state.rootsHeld };
}

/** A held request the client cancelled: dropped (a cancelled request gets no answer). Null when none is held under `id`. */
export function dropHeld(state: ConnectionState, id: RequestId): ConnectionState | null {
  const key = idKey(id);
  const kept = state.rootsHeld.filter((h) => idKey(h.id) !== key);
  return kept.length === state.rootsHeld.length ? null : { ...state, rootsHeld: kept };
}

/** The `rootsDeadline` of `round` passed: if the roots of that round are still unsettled, held requests go on. */
export function rootsWaitOver(state: ConnectionState, round: number): Step {
  if (round !== state.rootsRound || !state.rootsWaiting) return silent(state);
  return silent({ ...state, rootsWaiting: false }, [{
    kind: 'log', level: 'warning',
    message: `the client's roots were not settled within ROOTS_WAIT_MS (${ROOTS_WAIT_MS} ms); requests run in ${describe(state)} until they are`,
  }]);
}

type Response = Extract<Classified, { kind: 'response' }>;

/** The client answered `roots/list`: its file: URIs go to the runtime to be checked; anything else is refused here. */
export function rootsAnswered(state: ConnectionState, msg: Response): Step {
  const waiting: ConnectionState = { ...state, rootsAsked: null };
  const next: ConnectionState = { ...waiting, rootsWaiting: false };
  const keep = `keeping the workspace ${describe(state)}`;
  if (msg.error) {
    return silent(next, [{ kind: 'log', level: 'warning', message: `the client did not list its roots (${msg.error.message}); ${keep}` }]);
  }
  const listed = isRecord(msg.result) && Array.isArray(msg.result.roots) ? msg.result.roots : null;
  if (listed === null) {
    return silent(next, [{ kind: 'log', level: 'warning', message: `the client's roots/list answer has no roots array; ${keep}` }]);
  }
  const logs: Effect[] = [];
  const uris: string[] = [];
  for (const [i, entry] of listed.entries()) {
    if (i >= MAX_ROOTS_CONSIDERED) {
      logs.push(refused(`${listed.length - i} root(s)`, `only the first MAX_ROOTS_CONSIDERED (${MAX_ROOTS_CONSIDERED}) are considered`));
      break;
    }
    const uri = isRecord(entry) ? entry.uri : undefined;
    if (typeof uri !== 'string') logs.push(refused(`root #${i + 1}`, 'it has no uri string'));
    else if (uri.length > MAX_ROOT_URI_LENGTH) logs.push(refused(`root #${i + 1}`, `its uri is longer than MAX_ROOT_URI_LENGTH (${MAX_ROOT_URI_LENGTH})`));
    else if (!/^file:/i.test(uri)) logs.push(refused(uri, 'it is not a file:// URI'));
    else uris.push(uri);
  }
  if (uris.length === 0) return settle(next, null, logs);
  return silent(waiting, [...logs, { kind: 'checkRoots', round: state.rootsRound, uris }]);
}

/** The runtime checked the roots: the session works in the first directory its policy accepts, else the configured workspace. */
export function rootsChecked(state: ConnectionState, round: number, roots: readonly CheckedRoot[]): Step {
  if (round !== state.rootsRound) return silent(state); // a newer question is out: its answer decides
  const logs: Effect[] = [];
  for (const root of roots) {
    if ('problem' in root) {
      logs.push(refused(root.uri, root.problem));
      continue;
    }
    if (!rootAllowed(state.config, root.path)) {
      logs.push(refused(root.uri, `a remote session's root must lie inside the server's workspace ${state.config.workspace}`));
      continue;
    }
    return settle(state, { uri: root.uri, path: root.path }, logs);
  }
  return settle(state, null, logs);
}

function settle(state: ConnectionState, chosen: { uri: string; path: string } | null, logs: Effect[]): Step {
  const next: ConnectionState = { ...state, root: chosen?.path ?? null, rootsWaiting: false };
  const message = chosen
    ? `the session's workspace is the client's root ${chosen.path}`
    : `no client root is usable; the session's workspace is ${state.config.workspace}`;
  return silent(next, [...logs, { kind: 'log', level: 'info', message, data: chosen ? { uri: chosen.uri } : {} }]);
}

function describe(state: ConnectionState): string {
  return state.root ?? state.config.workspace;
}

const refused = (what: string, why: string): Effect => ({ kind: 'log', level: 'warning', message: `client root refused: ${why}`, data: { root: what } });

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a checked root may be a session's workspace under `config` (a rehydrated checkpoint's root is held to this node's). */
export function rootAllowed(config: ConnectionConfig, path: string): boolean {
  if (config.roots === 'ignore') return false;
  return config.roots === 'follow' || isInsidePath(config.workspace, path);
}

/** `candidate` is `root` or below it, compared by path components (both real, absolute POSIX paths). */
export function isInsidePath(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const base = root.endsWith('/') ? root : `${root}/`;
  return candidate.startsWith(base);
}

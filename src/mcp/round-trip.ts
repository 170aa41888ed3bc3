// One rule for "ask the person first", played per era. The core decides `input_required` (an elicitation
// to put to the person, and the call it would resume); 2026-07-28 gets it as a result with a sealed
// `requestState` and answers by retrying the call, a 2025 session gets today's `elicitation/create`.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ToolName } from '../tools/definition.ts';
import { actingQuestionId } from './acting-questions.ts';
import { confirmationRequest, describeCall, isAllowed } from './confirmation.ts';
import { META_SERVER_INFO } from './era.ts';
import { type Params } from './jsonrpc.ts';
import { answer, question } from './outgoing.ts';
import { type ConfirmationClaim, type OpenedConfirmation, openRetryState, sealConfirmation, sealWait, type TaskWait, type TurnHandle } from './request-state.ts';
import { type ConnectionState, effectiveHarness, type Principal } from './state.ts';
import { addPending, type Step } from './step.ts';

/** The key of the confirmation among a request's `inputRequests` (and of its answer among `inputResponses`). */
export const CONFIRM_INPUT = 'confirm';
/** The key of a task's model turn (`sampling/createMessage`) among `inputRequests` / `inputResponses`. */
export const SAMPLE_INPUT = 'sample';

/** The call an answer resumes. */
export interface HeldCall {
  readonly tool: ToolName;
  readonly args: Record<string, unknown>;
  readonly progressToken?: string | number;
}

/** The core's decision: this call runs only after the person answers `inputRequests`. */
export interface InputRequired {
  readonly inputRequests: Readonly<Record<string, { readonly method: 'elicitation/create'; readonly params: unknown }>>;
  readonly call: HeldCall;
}

/** The decision for a call under an `ask` rule: one yes/no question describing the call. */
export function confirmationNeeded(call: HeldCall, rule: string): InputRequired {
  const params = confirmationRequest(`Super-Pi wants to ${describeCall(call.tool, call.args)}\n(${rule})`);
  return { inputRequests: { [CONFIRM_INPUT]: { method: 'elicitation/create', params } }, call };
}

/**
 * Plays the decision on the wire of the request's era. Modern: an `input_required` result carrying the
 * questions and a state sealed over the call, nothing kept on the connection. Legacy: each question sent
 * as an `elicitation/create`, the call kept in flight until its answer (`confirmationAnswered`).
 * `refuse`: the reply when a modern state cannot be sealed (no key): the call is refused, never asked unsealed.
 */
export function playInputRequired(state: ConnectionState, id: RequestId, need: InputRequired, refuse: (why: string) => Step): Step {
  if (state.modern === undefined) return askLegacy(state, id, need);
  const roundTrip = state.roundTrip;
  if (roundTrip === undefined || roundTrip.sealer === null) {
    return refuse('this server has no state key to seal the question with, so it cannot ask over 2026-07-28');
  }
  const requestState = sealConfirmation({ ...roundTrip, sealer: roundTrip.sealer }, claimOf(state, need.call));
  const result = {
    resultType: 'input_required', inputRequests: need.inputRequests, requestState,
    _meta: { [META_SERVER_INFO]: { name: state.config.server.name, version: state.config.server.version } },
  };
  return { state, replies: [answer(id, result)], effects: [] };
}

function askLegacy(state: ConnectionState, id: RequestId, need: InputRequired): Step {
  const { call } = need;
  // The id names the tool: an answer to it needs what a call of that tool needs (acting-questions.ts).
  const outgoingId = actingQuestionId('confirm', call.tool, state.nextTicket);
  const added = addPending(state, {
    kind: 'confirm', requestId: id, tool: call.tool, args: call.args, outgoingId,
    ...(call.progressToken === undefined ? {} : { progressToken: call.progressToken }),
  });
  const ask = need.inputRequests[CONFIRM_INPUT];
  return { state: added.state, replies: ask ? [question(outgoingId, ask.method, ask.params, id)] : [], effects: [] };
}

/** The person's answer to a question, read by the one rule (`isAllowed`): run the call or not, and what they said. */
export interface PersonAnswer {
  readonly allowed: boolean;
  /** How the refusal is told (to the caller, or to a task's model): empty when allowed. */
  readonly refusal: string;
}

/**
 * What a modern retry carries, once its state opened: the person's answer to a confirmation (and what its
 * single use is recorded by), the client model's answer to a task's turn, or the person's answer to a call inside a task.
 */
export type Retry =
  | { readonly answer: unknown; readonly spend: Spend }
  | { readonly turn: TurnHandle; readonly answer: unknown }
  | { readonly ask: TurnHandle; readonly person: PersonAnswer };

/**
 * What an accepted confirmation's single use is recorded by in the store (`consumeConfirmation`): the
 * digest of its state and the state's expiry.
 */
export type Spend = Omit<OpenedConfirmation, 'kind'>;

/** Reads the person's answer to an elicitation the one way, in both eras and inside tasks. */
export function readPersonAnswer(answer: unknown, error?: { message: string }): PersonAnswer {
  if (!error && isAllowed(answer)) return { allowed: true, refusal: '' };
  const a = answer as { action?: unknown } | undefined;
  const refusal = error ? `the confirmation request failed: ${error.message}` : a?.action === 'accept' ? 'the person did not allow it' : `the person answered "${String(a?.action ?? 'nothing')}"`;
  return { allowed: false, refusal };
}

/**
 * A modern retry: the call came back with `requestState` (and the answers). `undefined`: not a retry (no
 * `requestState`). Otherwise either why it is refused (-32602: forged, altered, expired, another caller's,
 * another call's, a turn without its model's answer) or what it answers: a confirmation, or a model turn.
 */
export function readRetry(state: ConnectionState, params: Params, call: HeldCall): undefined | { problem: string } | Retry {
  if (state.modern === undefined || !Object.hasOwn(params, 'requestState')) return undefined;
  const roundTrip = state.roundTrip ?? { sealer: null, now: 0, ttlMs: 0 };
  const opened = openRetryState(roundTrip, params.requestState, claimOf(state, call));
  if (typeof opened === 'string') return { problem: `Invalid params: ${opened}` };
  const responses = params.inputResponses;
  if (responses !== undefined && (typeof responses !== 'object' || responses === null || Array.isArray(responses))) {
    return { problem: 'Invalid params: inputResponses must be an object keyed by the inputRequests this server sent' };
  }
  const answers = (responses ?? {}) as Record<string, unknown>;
  const confirmed = Object.hasOwn(answers, CONFIRM_INPUT) ? answers[CONFIRM_INPUT] : undefined;
  if (opened.kind === 'confirm') return { answer: confirmed, spend: { digest: opened.digest, expiresAt: opened.expiresAt } };
  // A question inside a task is answered by the same rule as a confirmation: no answer is a no.
  if (opened.kind === 'ask') return { ask: opened.handle, person: readPersonAnswer(confirmed) };
  const answer = Object.hasOwn(answers, SAMPLE_INPUT) ? answers[SAMPLE_INPUT] : undefined;
  if (!isSampled(answer)) {
    return { problem: `Invalid params: inputResponses.${SAMPLE_INPUT} must be the client's sampling/createMessage result (an object with "content") for turn ${opened.handle.turn}` };
  }
  return { turn: opened.handle, answer };
}

/** Shaped like a CreateMessageResult as far as the core reads it: what its content says is the task's business. */
export function isSampled(answer: unknown): boolean {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return false;
  const content = (answer as { content?: unknown }).content;
  return typeof content === 'object' && content !== null;
}

/**
 * A task sampled by round trip reached a model turn: the call answers `input_required` with the turn's
 * `sampling/createMessage` and a state sealed over the turn's handle and the call (`argsDigest` kept on
 * the pending call). Without a key (never so: `rounds` is only asked for with one) the call is refused.
 */
export function playTurn(state: ConnectionState, id: RequestId, tool: ToolName, argsDigest: string, turn: TurnHandle, params: unknown, refuse: (why: string) => Step): Step {
  return playWait(state, id, tool, argsDigest, { kind: 'turn', handle: turn }, { [SAMPLE_INPUT]: { method: 'sampling/createMessage', params } }, refuse);
}

/**
 * A task reached a call its harness's policy marks `ask`, for a client that can be asked: the call answers
 * `input_required` with the same `elicitation/create` form a top-level confirmation uses (key `confirm`)
 * and a state sealed over the task's place, so the retry carries the person's answer back to that call.
 */
export function playTaskAsk(state: ConnectionState, id: RequestId, tool: ToolName, argsDigest: string, handle: TurnHandle, message: string, refuse: (why: string) => Step): Step {
  return playWait(state, id, tool, argsDigest, { kind: 'ask', handle }, { [CONFIRM_INPUT]: { method: 'elicitation/create', params: confirmationRequest(message) } }, refuse);
}

function playWait(state: ConnectionState, id: RequestId, tool: ToolName, argsDigest: string, wait: TaskWait, inputRequests: Record<string, { method: string; params: unknown }>, refuse: (why: string) => Step): Step {
  const roundTrip = state.roundTrip;
  if (roundTrip === undefined || roundTrip.sealer === null) return refuse(`this server has no state key to seal the ${wait.kind === 'ask' ? 'question' : 'model turn'} with`);
  const claim = { tool, argsDigest, principal: principalKey(state.config.principal), harness: effectiveHarness(state) };
  const requestState = sealWait({ ...roundTrip, sealer: roundTrip.sealer }, claim, wait);
  const result = {
    resultType: 'input_required', inputRequests, requestState,
    _meta: { [META_SERVER_INFO]: { name: state.config.server.name, version: state.config.server.version } },
  };
  return { state, replies: [answer(id, result)], effects: [] };
}

function claimOf(state: ConnectionState, call: HeldCall): ConfirmationClaim {
  return { tool: call.tool, args: call.args, principal: principalKey(state.config.principal), harness: effectiveHarness(state) };
}

/** The principal as one string: a state sealed for `token:alice` never opens for `token:bob` or `anonymous`. */
export function principalKey(p: Principal): string {
  return p.kind === 'token' ? `token:${p.name}` : p.kind;
}

// What a session does with its requests when its connection actor dies (README, "Crash semantics"):
// messages the dead incarnation had not begun go to the next one in order; of the requests it had begun,
// the idempotent ones run again and the others are answered "effect unknown"; a request that was being
// handled at two crashes in a row is poison: answered, never delivered again. Pure: the Session applies it.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { messageText } from '../mcp/frame.ts';
import { ErrorCode } from '../mcp/jsonrpc.ts';
import { type Outgoing, refusal } from '../mcp/outgoing.ts';
import { toolCatalog } from '../tools/catalog.ts';
import { isToolName } from '../tools/definition.ts';
import type { ConnectionMessage } from './connection-actor.ts';

/**
 * Methods besides `* /list` that may run twice: without side effects, or whose only effect is the session's
 * own state (negotiated version, log level, subscriptions), which a crash rolls back to the checkpoint
 * taken before the request began; running one again from there answers the same and sets the same state.
 */
const SIDE_EFFECT_FREE_METHODS: ReadonlySet<string> = new Set([
  'ping', 'prompts/get', 'resources/read', 'completion/complete',
  'initialize', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe',
  // A listen stream run again acknowledges again and goes on carrying the same notifications.
  'subscriptions/listen',
]);

/**
 * Whether a request may run again after a crash: a method without side effects, or a `tools/call` of a tool
 * whose annotations say it is idempotent (read, ls, grep, find, and write — same content, same file).
 */
export function isSafeToRetry(method: string, params: unknown): boolean {
  if (SIDE_EFFECT_FREE_METHODS.has(method) || method.endsWith('/list')) return true;
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return false;
  const name = (params as { name?: unknown }).name;
  return typeof name === 'string' && isToolName(name) && toolCatalog[name].annotations.idempotentHint;
}

/** A client request the session passed on and has not seen answered. */
export interface TrackedRequest {
  readonly id: RequestId;
  /** The request alone as a line (a batch element re-serialised), for a retry. */
  readonly line: string;
  readonly retryable: boolean;
  /** The incarnation it was sent to finished the message that carried it: its work may be under way. */
  begun: boolean;
  /** Crashes in a row that happened while it was the message being handled. */
  crashes: number;
  /** The request's progress token, for a restarted actor that adopts its work. */
  readonly progressToken?: string | number;
  /** A `subscriptions/listen`: in flight until cancelled, so the session counts as idle beside it (a drain does not wait). */
  readonly stream?: true;
}

/** A message sent to the current incarnation and not yet counted as handled by it. */
export interface Delivery {
  readonly msg: ConnectionMessage;
  /** Keys of the requests the message carries (a line), or the request an effect result is for. */
  readonly keys: readonly string[];
  /**
   * A batch line's elements as its frame was read (each with its request's key, or null): after a crash the
   * elements not decided go again one by one, without the line being read a second time.
   */
  readonly batch?: readonly BatchPart[];
  /** Crashes in a row that happened while this message (one carrying no request) was being handled. */
  readonly crashes: number;
}

export interface BatchPart {
  readonly key: string | null;
  /** The element's parsed value. */
  readonly value: unknown;
}

/** How the incarnation ended: a `crash` is charged to the message it was handling; a `kill` (its worker
 * terminated from outside) is no message's fault, but the message may have been under way all the same. */
export type ExitKind = 'crash' | 'kill';

export type AnswerReason = 'effect-unknown' | 'poison';

export interface Recovery {
  /** Requests to answer now with an error; they leave the in-flight table. */
  readonly answers: { readonly key: string; readonly id: RequestId; readonly reason: AnswerReason }[];
  /** What the next incarnation is sent first, in this order: retries, then the messages never begun. */
  readonly redeliver: Delivery[];
  /** Messages dropped as poison that carried no request (a notification, an unreadable frame). */
  readonly droppedPoison: number;
}

/**
 * Decides, when an incarnation ends, the fate of each request and message it held. `inFlight` is updated in
 * place (retried requests are not begun any more, their crash counts are kept). `survives` names requests
 * whose work outlives the actor and that are left alone: harness tasks, and tool calls whose work runs on
 * the main thread (the next incarnation adopts them) — unless the message under way was theirs.
 */
export function recover(inFlight: Map<string, TrackedRequest>, unacked: readonly Delivery[], exit: ExitKind, survives: (key: string) => boolean): Recovery {
  const answers: { key: string; id: RequestId; reason: AnswerReason }[] = [];
  const retries: Delivery[] = [];
  const head = unacked[0];
  const cause = new Set(head?.msg.k === 'result' ? head.keys : head?.msg.k === 'line' ? head.keys : []);
  for (const [key, request] of inFlight) {
    const isCause = cause.has(key);
    if (!isCause && survives(key)) continue;
    if (!request.begun && !isCause) continue;
    // A kill charges nobody; a crash while a request was handled counts against it; a bystander's row is broken.
    const crashes = isCause ? (exit === 'crash' ? request.crashes + 1 : request.crashes) : 0;
    if (isCause && crashes >= 2) {
      answers.push({ key, id: request.id, reason: 'poison' });
    } else if (request.retryable) {
      request.begun = false;
      request.crashes = crashes;
      retries.push({ msg: { k: 'line', line: request.line }, keys: [key], crashes: 0 });
    } else {
      answers.push({ key, id: request.id, reason: 'effect-unknown' });
    }
  }
  for (const { key } of answers) inFlight.delete(key);
  const decided = new Set([...answers.map((a) => a.key), ...retries.flatMap((r) => r.keys)]);
  let droppedPoison = 0;
  const rest: Delivery[] = [];
  unacked.forEach((delivery, i) => {
    if (delivery.msg.k === 'batch') return;
    // An effect result goes again only to a request the next incarnation adopts; the others were decided above.
    if (delivery.msg.k === 'result') {
      if (i > 0 && delivery.keys.length > 0 && delivery.keys.every((k) => !decided.has(k) && inFlight.has(k) && survives(k))) rest.push(delivery);
      return;
    }
    if (i > 0) {
      rest.push(delivery);
      return;
    }
    // The message under way: its requests were decided above; the rest of it (notifications, answers to the
    // server's own requests, requests answered early by the session) goes again — unless it was under way
    // at the last crash too.
    const crashes = exit === 'crash' ? delivery.crashes + 1 : delivery.crashes;
    const others = delivery.msg.k === 'line' ? undecidedParts(delivery, delivery.msg.line, decided) : [delivery.msg];
    if (others.length === 0) return;
    if (crashes >= 2) {
      droppedPoison += others.length;
      return;
    }
    for (const msg of others) rest.push({ msg, keys: [], crashes });
  });
  return { answers, redeliver: [...retries, ...rest], droppedPoison };
}

/** The parts of a line not decided by a retry or an answer: the line itself, or a batch's other elements. */
function undecidedParts(delivery: Delivery, line: string, decided: ReadonlySet<string>): ConnectionMessage[] {
  if (delivery.batch === undefined) return delivery.keys.some((k) => decided.has(k)) ? [] : [{ k: 'line', line }];
  return delivery.batch
    .filter((part) => part.key === null || !decided.has(part.key))
    .map((part) => ({ k: 'line', line: messageText(part.value) }));
}

/** The answer to a request the recovery decided (`answers`): the server crashed running it, once or twice in a row. */
export function crashAnswer(id: RequestId, reason: AnswerReason, why: string): Outgoing {
  return reason === 'poison'
    ? refusal(id, ErrorCode.RequestAborted, `Request refused: the server crashed twice in a row while running this request (the session's actor ${why}), so this request is taken as the cause and is not run again.`, { reason: 'poison' })
    : refusal(id, ErrorCode.RequestAborted, `Request aborted: the server crashed while running this request (the session's actor ${why}); its effect is unknown, so it is not run again. The session resumes from its checkpoint: check before you retry.`, { reason: 'crashed' });
}

/** The answer to a request of a session given up (too many crashes): not run. */
export function givenUp(id: RequestId, why: string): Outgoing {
  return refusal(id, ErrorCode.RequestAborted, `Request aborted: the session was given up (${why}); this request was not run. Initialize a new session (stdio: the server exits; start it again).`, { reason: 'session-given-up' });
}

/** The characters of a client line a delivery carries (0 for anything else): what the session's input bound counts. */
export function lineChars(delivery: Delivery): number {
  return delivery.msg.k === 'line' ? delivery.msg.line.length : 0;
}

// Requests that died with their node (issue 14). On a PostgreSQL store a POST's stream is primed and its
// events kept in the session event log; when the node running the request dies, the client resumes the
// stream on another node, which tails the log until the stream's ending event. A harness task's ending
// event comes from the node that takes the task over; any other request (a long `bash`, a slow `grep`)
// has nobody left to end it, so it is answered here: -32010 with `data.reason: "node-died"`. Its effect
// is unknown (the command may have run, in part or whole), so it is never run again. Two places decide:
// - the node that takes a session over ends, before serving it, every unended request stream of the
//   session that no running task answers (`endOrphans`): their node is dead, nothing else will;
// - a resumed stream of a session nobody took over looks every ORPHAN_CHECK_MS (`watch`): when the
//   session's home has no fresh node lease and no running task answers the request, twice in a row, it
//   ends the stream. Twice, because a node finishing a taken-over task marks it done a moment before it
//   appends the answer: one look could fall in between and answer `node-died` over a real answer.
// Both may end the same stream at once. The duplicate is harmless: a tail stops at the stream's first
// ending event, and a stream whose last event the client saw ends at once when resumed again.

import type { Logger } from '../log/logger.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { OrphanLookup, SessionEventStore } from '../store/session-events.ts';
import type { Clock } from '../time/clock.ts';
import { ORPHAN_CHECK_MS } from '../limits.ts';

/** The message a request whose node died is answered with. */
export const NODE_DIED_MESSAGE = 'the node running this request stopped (its lease lapsed) before answering; its effect is unknown, so it is not run again: check before you retry';

/** `data.reason` of that answer. */
export const NODE_DIED_REASON = 'node-died';

/** What this needs of a PostgreSQL store: the event log, the orphan lookups, the session rows and the node registry. */
export type OrphanStore = SessionEventStore & OrphanLookup & Pick<AsyncConversationStore, 'loadCheckpoint' | 'nodeOf'>;

/**
 * The request id a request stream is named by (`requestStream(idKey(id))`: `request:n:1`, `request:s:x`),
 * or null for any other stream (the standalone GET stream never ends).
 */
export function requestOfStream(stream: string): string | number | null {
  if (stream.startsWith('request:s:')) return stream.slice('request:s:'.length);
  if (!stream.startsWith('request:n:')) return null;
  const text = stream.slice('request:n:'.length);
  const n = Number(text);
  // Only the text idKey makes of a number: anything else is no request id this server named a stream by.
  return text !== '' && Number.isFinite(n) && String(n) === text ? n : null;
}

/** The JSON-RPC error that ends the stream of a request whose node died. */
export function nodeDiedLine(request: string | number): string {
  return errorLine(request, ErrorCode.RequestAborted, NODE_DIED_MESSAGE, { reason: NODE_DIED_REASON });
}

/** A resumed stream's look-out for its request having died with its node. */
export interface OrphanWatch {
  /** Resolves when the next look is due (at once if it is); `cancel` when woken otherwise. */
  untilDue(): { readonly done: Promise<void>; cancel(): void };
  /** Looks, if a look is due: resolves true when it appended the stream's ending event (`node-died`). */
  lookIfDue(): Promise<boolean>;
}

/** The look-out of every resumed request stream of one session on this node. */
export interface SessionOrphanWatch {
  /** Resolves when the next look is due (at once if it is); `cancel` when woken otherwise. */
  untilDue(): { readonly done: Promise<void>; cancel(): void };
  /** Looks, if a look is due, at these streams (those of no request are skipped): resolves to the ones it ended `node-died`. */
  lookIfDue(streams: Iterable<string>): Promise<string[]>;
}

export interface OrphanRequestsOptions {
  readonly store: OrphanStore;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class OrphanRequests {
  readonly #o: OrphanRequestsOptions;

  constructor(options: OrphanRequestsOptions) {
    this.#o = options;
  }

  /**
   * This node just took `sessionId` over: its old home is dead, so every request stream of the session
   * still waiting for its end, that no running task answers, is ended `node-died`. Resolves to how many.
   */
  async endOrphans(sessionId: string, principal: string): Promise<number> {
    const { store, logger } = this.#o;
    let ended = 0;
    for (const stream of await store.unendedRequestStreams(sessionId, principal)) {
      const request = requestOfStream(stream);
      if (request === null || await store.taskAnswers(sessionId, principal, request)) continue;
      await store.appendSessionEvent(sessionId, principal, stream, nodeDiedLine(request), true);
      ended++;
    }
    if (ended > 0) logger.log('info', 'answered requests that died with the session\'s previous home node (node-died)', { session: sessionId, requests: ended });
    return ended;
  }

  /** A look-out for the request of `stream` alone (null for a stream that is no request's). */
  watch(sessionId: string, principal: string, stream: string): OrphanWatch | null {
    if (requestOfStream(stream) === null) return null;
    const session = this.watchSession(sessionId, principal);
    return { untilDue: () => session.untilDue(), lookIfDue: async () => (await session.lookIfDue([stream])).length > 0 };
  }

  /**
   * One look-out for every resumed request stream of a session on this node: one look per ORPHAN_CHECK_MS
   * whatever the number of streams (the session's row and its home's lease read once; whether a task
   * answers it, per request, only once the home is gone).
   */
  watchSession(sessionId: string, principal: string): SessionOrphanWatch {
    const { clock } = this.#o;
    let next = clock.now() + ORPHAN_CHECK_MS;
    /** Request streams the last look found orphaned: a second look in a row ends them. */
    let suspected = new Set<string>();
    return {
      untilDue: () => {
        let fire!: () => void;
        const done = new Promise<void>((resolve) => (fire = resolve));
        const timer = clock.setTimeout(fire, Math.max(0, next - clock.now()), { unref: true });
        return { done, cancel: () => { clock.clearTimeout(timer); fire(); } };
      },
      lookIfDue: async (streams) => {
        if (clock.now() < next) return [];
        const requests: [string, string | number][] = [];
        for (const stream of streams) {
          const request = requestOfStream(stream);
          if (request !== null) requests.push([stream, request]);
        }
        if (requests.length === 0) return [];
        next = clock.now() + ORPHAN_CHECK_MS;
        const now = new Set<string>();
        const ended: string[] = [];
        if (await this.#homeGone(sessionId, principal)) {
          for (const [stream, request] of requests) {
            if (await this.#o.store.taskAnswers(sessionId, principal, request)) continue;
            if (!suspected.has(stream)) {
              now.add(stream);
              continue;
            }
            await this.#o.store.appendSessionEvent(sessionId, principal, stream, nodeDiedLine(request), true);
            this.#o.logger.log('info', 'a resumed stream\'s request died with its node; it is answered node-died', { session: sessionId, stream });
            ended.push(stream);
          }
        }
        suspected = now;
        return ended;
      },
    };
  }

  /**
   * Nothing will end the session's request streams but this node: the session's home (its row's owner) has
   * no fresh node lease. A session with no row (ended, or another principal's) is not judged: its home
   * closed it, or the log is not this principal's.
   */
  async #homeGone(sessionId: string, principal: string): Promise<boolean> {
    const { store } = this.#o;
    const row = await store.loadCheckpoint(sessionId, principal);
    if (row === null) return false;
    const home = await store.nodeOf(row.owner);
    return home === null || !home.fresh;
  }
}

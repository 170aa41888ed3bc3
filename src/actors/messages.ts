// Every message that crosses between the main thread and a scheduler worker: a typed discriminated
// union, with correlation ids for calls and a ready handshake, as piscina does it.

import type { ActorExit, BehaviourRef } from './behaviour.ts';
import type { InlineSeries } from './inline-tally.ts';

export type ToWorker =
  | { t: 'spawn'; id: string; behaviour: BehaviourRef; args: unknown }
  | { t: 'cast'; id: string; msg: unknown }
  | { t: 'call'; id: string; ref: number; msg: unknown }
  /** `shutdown`: terminate callback, then exit shutdown; `kill`: drop at once (brutal_kill). */
  | { t: 'exit'; id: string; how: 'shutdown' | 'kill' }
  | { t: 'ping'; seq: number }
  /** Report the inline calls counted so far now, then answer `flushed` (a scrape wants exact counts). */
  | { t: 'flush'; seq: number }
  /** Fault injection and tests: make this worker hang, or exhaust its memory. */
  | { t: 'sabotage'; how: 'hang' | 'oom' | 'throw' }
  /** Several of the above, in the order they were sent, posted as one (THREAD_MESSAGES_PER_POST). */
  | { t: 'several'; messages: ToWorker[] };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'spawned'; id: string }
  | { t: 'out'; id: string; msg: unknown }
  | { t: 'reply'; ref: number; ok: true; value: unknown }
  | { t: 'reply'; ref: number; ok: false; error: string }
  | { t: 'exited'; id: string; reason: ActorExit }
  /** A message refused because the actor's mailbox was full. */
  | { t: 'rejected'; id: string; msg: unknown; why: string }
  | { t: 'pong'; seq: number; actors: number; heapUsed: number; mailboxes: MailboxDepths }
  /** Tool calls the thread's actors ran inline since its last report (inline-tally.ts). */
  | { t: 'inline'; series: InlineSeries[] }
  /** Everything counted before the `flush` with this seq has been reported. */
  | { t: 'flushed'; seq: number };

/** The deepest mailbox of a thread, and the non-empty ones (deepest first, at most MAX_REPORTED_MAILBOXES): for the observer. */
export interface MailboxDepths {
  readonly deepest: number;
  readonly busy: readonly (readonly [actor: string, depth: number])[];
}

/** Non-empty mailboxes a thread reports with each heartbeat; a thread with thousands of actors sends only its deepest. */
export const MAX_REPORTED_MAILBOXES = 32;

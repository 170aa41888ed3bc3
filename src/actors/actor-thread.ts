// What the scheduler places actors on: a scheduler worker thread (scheduler-thread.ts) or, for a server
// with one session, the main thread itself (main-thread-host.ts). Either is a supervisable child: its
// `exited` is the exit of every actor on it.

import type { ActorRef } from './actor-ref.ts';
import type { ActorExit, BehaviourRef } from './behaviour.ts';
import type { MailboxDepths } from './messages.ts';

export interface ActorThread {
  /** The scheduler slot it fills. */
  readonly index: number;
  readonly exited: Promise<ActorExit>;
  /** Resolves once it can run actors (a worker has booted). */
  readonly ready: Promise<void>;
  /** The actors it hosts, by id. */
  readonly actors: Map<string, ActorRef>;
  readonly isReady: boolean;
  /** Not yet ending: it may still be booting. */
  readonly alive: boolean;
  /** Heap in use, bytes (a worker's as of its last heartbeat). */
  readonly heapUsed: number;
  /** Mailbox depths (a worker's as of its last heartbeat), for metrics and the observer. */
  readonly mailboxes: MailboxDepths;
  spawn(id: string, behaviour: BehaviourRef, args: unknown): ActorRef;
  /** Resolves once every inline tool call it counted before now has gone to the scheduler's `onInlineCalls`. */
  flushInline(): Promise<void>;
  /** Fault injection and tests: make it hang, exhaust its memory, or throw. */
  sabotage(how: 'hang' | 'oom' | 'throw'): void;
  /** Graceful stop: its actors exit `shutdown`. */
  stop(): void;
  /** Its actors exit as if their thread had been killed. */
  kill(): void;
}

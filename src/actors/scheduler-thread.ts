// One scheduler worker thread, seen from the main thread: the ready handshake, a heartbeat that
// detects a hung thread, memory limits, and the rule that the thread's exit is the exit of every actor on it.

import { guarded } from '../log/guarded.ts';
import type { BoundedSink } from '../log/stderr-sink.ts';
import { forwardThreadOutput } from '../log/thread-output.ts';
import { Worker } from 'node:worker_threads';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, SCHEDULER_THREAD_MEMORY_MB, THREAD_MESSAGES_PER_POST } from '../limits.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { type ActorHost, ActorRef, CallTimeoutError } from './actor-ref.ts';
import type { ActorExit, BehaviourRef } from './behaviour.ts';
import { Heartbeat, type HeartbeatLimits } from './heartbeat.ts';
import type { InlineSeries } from './inline-tally.ts';
import type { FromWorker, MailboxDepths, ToWorker } from './messages.ts';
import type { ThreadEntry } from './thread-entry.ts';

export interface ThreadLimits extends HeartbeatLimits {
  /** V8 old-generation limit of a worker; past it the worker dies (and is replaced) instead of the process. */
  readonly maxOldGenerationSizeMb: number;
}

export const DEFAULT_THREAD_LIMITS: ThreadLimits = {
  heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
  maxOldGenerationSizeMb: SCHEDULER_THREAD_MEMORY_MB,
};

/** The cause name of an actor whose thread was killed on purpose (`SchedulerThread.kill`). */
export const WORKER_KILLED = 'WorkerKilled';

/** Told of the tool calls a thread's actors ran inline, a batch at a time (for the metrics). */
export type InlineCallsHook = (series: readonly InlineSeries[]) => void;

export interface SchedulerThreadOptions {
  /** Told of the tool calls the thread's actors ran inline. */
  readonly onInline?: InlineCallsHook;
  /** Times the heartbeat and call timeouts (default `systemClock`). */
  readonly clock?: Clock;
  /** Where the thread's console output goes (default: the process's bounded stderr sink). */
  readonly output?: BoundedSink;
}

export class SchedulerThread {
  readonly index: number;
  readonly exited: Promise<ActorExit>;
  readonly ready: Promise<void>;
  readonly actors = new Map<string, ActorRef>();
  readonly #worker: Worker;
  readonly #calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: unknown }>();
  readonly #clock: Clock;
  #nextRef = 1;
  #isReady = false;
  readonly #heartbeat: Heartbeat;
  /** Why the thread is ending, when the main thread decided it (hang, stop, kill). */
  #ending: ActorExit | null = null;
  #errorCause: Error | null = null;
  #heapUsed = 0;
  #mailboxes: MailboxDepths = { deepest: 0, busy: [] };
  readonly #onInline: InlineCallsHook | undefined;
  #flushSeq = 0;
  /** Flushes asked of the thread and not yet answered, by seq (answered in order; all at once when the thread ends). */
  readonly #flushes = new Map<number, () => void>();

  constructor(index: number, entry: ThreadEntry, limits: ThreadLimits, log: (msg: string, data?: Record<string, unknown>) => void, options: SchedulerThreadOptions = {}) {
    this.index = index;
    this.#onInline = options.onInline;
    this.#clock = options.clock ?? systemClock;
    this.#worker = new Worker(entry.url, {
      ...(entry.workerData ? { workerData: entry.workerData } : {}),
      execArgv: entry.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: limits.maxOldGenerationSizeMb },
      // A worker's console output must never reach stdout, which carries protocol messages only: both
      // streams go to the log's bounded stderr queue (log/thread-output.ts).
      stdout: true,
      stderr: true,
    });
    forwardThreadOutput(this.#worker, options.output);
    let markReady!: () => void;
    this.ready = new Promise((r) => (markReady = r));
    this.exited = new Promise((resolve) => {
      this.#worker.on('error', (err) => {
        this.#errorCause = err;
        log('scheduler worker error', { worker: index, error: err.message, code: (err as NodeJS.ErrnoException).code });
      });
      this.#worker.on('exit', (code) => {
        this.#heartbeat.stop();
        const reason: ActorExit = this.#ending ?? {
          kind: 'crash',
          cause: { name: this.#errorCause?.name ?? 'WorkerExit', message: this.#errorCause ? `scheduler worker ${index} died: ${this.#errorCause.message}` : `scheduler worker ${index} exited with code ${code}` },
        };
        this.#failAll(reason);
        resolve(reason);
      });
    });
    // A message this side cannot take in is a fault of the pair, not of the process: the worker is
    // terminated, and its exit fails what it held and reports the crash, as any worker death does.
    const asLogger = { log: (_level: 'error', message: string, data: Record<string, unknown>) => log(message, { worker: index, ...data }) };
    this.#worker.on('message', guarded(asLogger, 'scheduler worker message', (m: FromWorker) => {
      if (m.t === 'ready') {
        this.#isReady = true;
        this.#heartbeat.start();
        markReady();
        return;
      }
      this.#receive(m);
    }, () => void this.#worker.terminate()));
    this.#heartbeat = new Heartbeat(this.#clock, limits, {
      ping: (seq) => this.#post({ t: 'ping', seq }),
      hung: (silentForMs) => {
        log('scheduler worker missed its heartbeat; terminating it', { worker: index, silentForMs });
        this.#end({ kind: 'crash', cause: { name: 'HeartbeatTimeout', message: `scheduler worker ${index} did not answer a heartbeat for ${limits.heartbeatTimeoutMs} ms` } });
      },
    });
  }

  get isReady(): boolean {
    return this.#isReady && this.#ending === null;
  }

  /** Not yet ending: it may still be booting. */
  get alive(): boolean {
    return this.#ending === null;
  }

  get heapUsed(): number {
    return this.#heapUsed;
  }

  /** Mailbox depths as of the last heartbeat (read-only, for metrics and the observer). */
  get mailboxes(): MailboxDepths {
    return this.#mailboxes;
  }

  /** One host for all of this thread's actor handles (not three closures per actor). */
  readonly #host: ActorHost = {
    cast: (actor, msg) => this.#post({ t: 'cast', id: actor, msg }),
    call: (actor, msg, timeoutMs) => this.#call(actor, msg, timeoutMs),
    exit: (actor, how) => this.#post({ t: 'exit', id: actor, how }),
  };

  spawn(id: string, behaviour: BehaviourRef, args: unknown): ActorRef {
    const ref = new ActorRef(id, this.#host);
    this.actors.set(id, ref);
    this.#post({ t: 'spawn', id, behaviour, args });
    return ref;
  }

  /**
   * Resolves once the thread has reported every inline call it counted before now. A thread that is not
   * ready has run nothing; one that ends before answering resolves it too (its unreported calls are lost).
   */
  flushInline(): Promise<void> {
    if (!this.isReady) return Promise.resolve();
    const seq = ++this.#flushSeq;
    return new Promise((resolve) => {
      this.#flushes.set(seq, resolve);
      this.#post({ t: 'flush', seq });
    });
  }

  /** Fault injection and tests: make the thread hang, exhaust its memory, or throw. */
  sabotage(how: 'hang' | 'oom' | 'throw'): void {
    this.#post({ t: 'sabotage', how });
  }

  /** Graceful stop: the thread is terminated; its actors exit `shutdown`. */
  stop(): void {
    this.#end({ kind: 'shutdown' });
  }

  kill(): void {
    this.#end({ kind: 'killed' });
  }

  #end(reason: ActorExit): void {
    if (this.#ending !== null) return;
    this.#ending = reason;
    void this.#worker.terminate();
    // The actors are gone from this moment (nothing of theirs is delivered any more): settle their exits
    // now rather than at the thread's 'exit' event, which can come 10-150 ms later — recovery waits on it.
    this.#failAll(reason);
  }

  /** Messages for the thread not yet posted: they leave together at the end of this turn (`#post`). */
  #outbox: ToWorker[] = [];

  /**
   * What one turn of the main thread sends the thread crosses as one message, in order, at the end of the
   * turn (`setImmediate`: after the poll phase, so the requests of every socket read in it go together),
   * THREAD_MESSAGES_PER_POST at most. Posted one by one, each message to an idle thread woke it (a system
   * call here, a context switch there) and each cost the main thread 4-6 µs; gathered, the threads slept
   * 40% less often and the server spent 7-10% less CPU per HTTP call (BENCHMARKS.md, issue 27, "Streamable
   * HTTP, where a call's time goes"). A lone request waits only for the rest of its own turn.
   */
  #post(msg: ToWorker): void {
    if (this.#ending !== null) return;
    this.#outbox.push(msg);
    if (this.#outbox.length === 1) setImmediate(this.#postOutbox);
    else if (this.#outbox.length >= THREAD_MESSAGES_PER_POST) this.#postOutbox();
  }

  readonly #postOutbox = (): void => {
    const out = this.#outbox;
    if (out.length === 0) return;
    this.#outbox = [];
    // A thread being terminated takes nothing more (as `#post`).
    if (this.#ending !== null) return;
    this.#worker.postMessage(out.length === 1 ? out[0] : { t: 'several', messages: out });
  };

  #call(id: string, msg: unknown, timeoutMs: number): Promise<unknown> {
    const ref = this.#nextRef++;
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        this.#calls.delete(ref);
        reject(new CallTimeoutError(`call to actor ${id} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#calls.set(ref, { resolve, reject, timer });
      this.#post({ t: 'call', id, ref, msg });
    });
  }

  #receive(m: Exclude<FromWorker, { t: 'ready' }>): void {
    // A thread being terminated may still post; its actors have already exited.
    if (this.#ending !== null && m.t !== 'pong') return;
    switch (m.t) {
      case 'out': return this.actors.get(m.id)?.deliver(m.msg);
      case 'spawned': return this.actors.get(m.id)?.started();
      case 'reply': {
        const pending = this.#calls.get(m.ref);
        if (!pending) return;
        this.#calls.delete(m.ref);
        this.#clock.clearTimeout(pending.timer);
        if (m.ok) pending.resolve(m.value);
        else pending.reject(new Error(m.error));
        return;
      }
      case 'exited': {
        const ref = this.actors.get(m.id);
        this.actors.delete(m.id);
        ref?.settle(m.reason);
        return;
      }
      case 'rejected': return this.actors.get(m.id)?.reject(m.msg, m.why);
      case 'inline': return this.#onInline?.(m.series);
      case 'flushed':
        for (const [seq, resolve] of this.#flushes) {
          if (seq > m.seq) break;
          this.#flushes.delete(seq);
          resolve();
        }
        return;
      case 'pong':
        this.#heartbeat.pong();
        this.#heapUsed = m.heapUsed;
        this.#mailboxes = m.mailboxes;
        return;
    }
  }

  #failAll(reason: ActorExit): void {
    for (const resolve of this.#flushes.values()) resolve();
    this.#flushes.clear();
    for (const [ref, call] of this.#calls) {
      this.#clock.clearTimeout(call.timer);
      call.reject(new Error(`scheduler worker ${this.index} exited during a call`));
      this.#calls.delete(ref);
    }
    // A kill is named apart from other exits: it comes from outside (chaos, a supervisor), so no message it
    // was handling is to blame for it (crash-recovery.ts charges crashes, not kills, to that message).
    const cause = reason.kind === 'crash' ? reason : { kind: 'crash' as const, cause: { name: reason.kind === 'killed' ? WORKER_KILLED : 'WorkerExit', message: `scheduler worker ${this.index} stopped (${reason.kind})` } };
    // Every actor on the thread exits with it; a worker stopped on purpose takes its actors down as shutdown.
    for (const ref of this.actors.values()) ref.settle(reason.kind === 'shutdown' ? reason : cause);
    this.actors.clear();
  }
}

// One MCP session served by a connection actor on a scheduler worker. The session (main thread) keeps
// what must survive the actor: the transport's send, the requests in flight and the messages the actor has
// not finished — so that a crash costs one request, not a mailbox (crash-recovery.ts) — and the latest
// checkpoint that a restarted actor resumes from.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ActorRef } from '../actors/actor-ref.ts';
import type { ActorExit } from '../actors/behaviour.ts';
import { type Delivery, type ExitKind, isSafeToRetry, recover, type TrackedRequest } from './crash-recovery.ts';
import { WORKER_KILLED } from '../actors/scheduler-thread.ts';
import { type ConnectionActorArgs, connectionBehaviourRef, type ConnectionMessage, type ConnectionOutput } from './connection-actor.ts';
import type { InlineCall } from './inline-effects.ts';
import type { Scheduler } from '../actors/scheduler.ts';
import { ErrorCode, errorLine, idKey, responseIdOf } from '../mcp/jsonrpc.ts';
import type { Effect, EffectResult } from '../mcp/effects.ts';
import { handleMcpLine } from '../mcp/handle.ts';
import { MAX_BATCH_LENGTH } from '../mcp/limits.ts';
import { type ConnectionConfig, type ConnectionState, initialState, type Pending } from '../mcp/state.ts';
import type { FrameEvent } from '../transports/line-framer.ts';
import { invalidUtf8Detail, oversizedDetail } from './connection.ts';
import { type EffectDeps, EffectRunner } from './effect-runner.ts';
import type { Logger } from '../log/logger.ts';
import { SessionTasks } from '../task/session-tasks.ts';
import { runTool } from '../tools/tool-runner.ts';

/** Messages held for a session while its actor is being restarted; past this, requests are refused. */
export const MAX_BUFFERED_MESSAGES = 10_000;

/**
 * Requests a session answers itself while its first actor is still booting (a cold start): their steps
 * are pure and effect-free, and the actor is sent the same lines, so it reaches the same state and its
 * own replies to them are dropped. Anything else ends this and waits for the actor.
 */
const EARLY_METHODS: ReadonlySet<string> = new Set(['initialize', 'notifications/initialized', 'ping']);

export interface SessionDeps {
  readonly id: string;
  readonly scheduler: Scheduler;
  readonly effects: EffectDeps;
  readonly config: ConnectionConfig;
  readonly logger: Logger;
  readonly send: (line: string) => void;
  /** Fault injection: probability that the connection actor crashes on a message. */
  readonly crashProbability?: number;
  /** Tool calls the actor ran inline (small reads): the metrics count them here. */
  readonly onInlineCalls?: (calls: readonly InlineCall[]) => void;
}

export class Session {
  readonly id: string;
  readonly #deps: SessionDeps;
  #actor: ActorRef | null = null;
  #runner: EffectRunner | null = null;
  #checkpoint: ArrayBuffer | undefined;
  /** Client requests not yet answered, by id key (in arrival order). */
  readonly #inFlight = new Map<string, TrackedRequest>();
  /** Messages for the next actor, while there is none: redeliveries first, then what arrived meanwhile. */
  #buffer: Delivery[] = [];
  /** Sent to the current actor and not yet counted as handled by it (from #unackedHead on). */
  #unacked: Delivery[] = [];
  #unackedHead = 0;
  /** Messages the current actor has reported handled. */
  #handled = 0;
  /** Tool tickets to the requests they answer: an effect result names its request. */
  readonly #tickets = new Map<number, string>();
  /**
   * Tool calls running on the main thread (the effect runner outlives each actor), with what the core needs
   * to answer them: a restarted actor adopts the ones still in flight, so a crash does not run them again.
   */
  readonly #work = new Map<number, { key: string; pending: Pending }>();
  /** The ticket of each request in #work: its entry goes when the request is answered (or cancelled). */
  readonly #workTicket = new Map<string, number>();
  /** The highest ticket any incarnation issued: the next one starts above it. */
  #maxTicket = 0;
  /** Why the session's supervisor gave it up: every request, now and later, is answered with it. */
  #givenUp: string | null = null;
  #closed = false;
  /** Set by answerInFlight: every request has had its answer, and the actor's output is dropped. */
  #silenced = false;
  #restarts = 0;
  #started = false;
  #idleWaiters: (() => void)[] = [];
  /** While the first actor boots: the core's state as the actor will have it after the lines sent so far. */
  #early: ConnectionState | null = null;
  /** Requests answered here before the actor: its replies to them are dropped; the lines, in case it dies first. */
  #answeredEarly: Map<string, string> | null = null;
  /** Harness tasks started by this session (they outlive its connection actor); made on the first one. */
  #tasks: SessionTasks | null = null;

  constructor(deps: SessionDeps) {
    this.id = deps.id;
    this.#deps = deps;
  }

  /** The tasks of this session that are running (fault injection and health look at them). */
  get tasks(): SessionTasks | null {
    return this.#tasks;
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** The id of the current connection actor (null while it is being restarted). */
  get actorId(): string | null {
    return this.#actor?.alive ? this.#actor.id : null;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** The child start of this session's spec: spawns the connection actor, resuming from the checkpoint. */
  async start(): Promise<ActorRef> {
    for (const w of [...this.#work.values()]) if (!this.#inFlight.has(w.key)) this.#settleWork(w.key);
    const args: ConnectionActorArgs = {
      config: this.#deps.config,
      ...(this.#checkpoint ? { checkpoint: this.#checkpoint.slice(0) } : {}),
      ...(this.#deps.crashProbability ? { crashProbability: this.#deps.crashProbability } : {}),
      ...(this.#work.size > 0 ? { adopted: [...this.#work].map(([ticket, w]): [number, Pending] => [ticket, w.pending]) } : {}),
      ticketFloor: this.#maxTicket + 1,
    };
    const actor = await this.#deps.scheduler.spawn(connectionBehaviourRef, args, 'session');
    const first = !this.#started;
    this.#started = true;
    if (!first) this.#restarts++;
    // The first actor of a session may wait for its thread to boot: meanwhile the session answers what it can.
    if (first) {
      this.#early = initialState(this.#deps.config);
      void actor.ready.then(() => { this.#early = null; });
    } else {
      this.#early = null;
    }
    // One runner for the session's life: work it runs outlives an actor, and its results go to the current one.
    const runner = this.#runner ?? new EffectRunner(this.#deps.effects, (result) => this.#fromRunner(result));
    this.#actor = actor;
    this.#runner = runner;
    actor.onMessage((out) => this.#output(out as ConnectionOutput, actor, runner));
    actor.onRejected((msg) => this.#refuse(msg as ConnectionMessage, 'the session is overloaded (its mailbox is full); retry later'));
    // Registered before the supervisor sees the handle, so in-flight requests are answered before a restart.
    void actor.exited.then((reason) => this.#actorExited(actor, reason));
    // Redeliveries (messages the dead actor never finished, lines answered early among them) come first.
    const buffered = this.#buffer;
    this.#buffer = [];
    for (const delivery of buffered) this.#sendTo(actor, delivery);
    // What a dead actor may have lost of its tasks' answers and questions is given to this one.
    if (this.#restarts > 0) this.#tasks?.resume();
    return actor;
  }

  /** `parsed`: the line already parsed by the transport (HTTP parses to route), so it is not parsed twice here. */
  receiveFrame(frame: FrameEvent, parsed?: unknown): void {
    if (this.#givenUp !== null) {
      if (frame.kind === 'line') this.#answerGivenUp(frame.text, parsed);
      return;
    }
    if (this.#closed) return;
    let delivery: Delivery;
    if (frame.kind === 'line') {
      const { message, keys } = this.#track(frame.text, parsed);
      if (this.#early) this.#answerEarly(frame.text, message);
      delivery = { msg: { k: 'line', line: frame.text }, keys, crashes: 0 };
    } else {
      const msg: ConnectionMessage = frame.kind === 'oversized'
        ? { k: 'unreadable', problem: 'oversized', detail: oversizedDetail(frame.bytes, frame.limit) }
        : { k: 'unreadable', problem: 'invalid-utf8', detail: invalidUtf8Detail(frame.bytes) };
      delivery = { msg, keys: [], crashes: 0 };
    }
    if (this.#actor?.alive) {
      this.#sendTo(this.#actor, delivery);
    } else if (this.#buffer.length < MAX_BUFFERED_MESSAGES) {
      this.#buffer.push(delivery);
    } else {
      this.#refuse(delivery.msg, 'the session is restarting and its buffer is full; retry later');
    }
  }

  /**
   * A result for the core from outside this session (another session's task updating a transcript this
   * one subscribed to): held during a restart while the buffer has room, else dropped — a missed
   * "updated" costs the subscriber one re-read at most, and another session must not fill this one's buffer.
   */
  deliver(result: EffectResult): void {
    if (this.#closed) return;
    const delivery: Delivery = { msg: { k: 'result', result }, keys: [], crashes: 0 };
    if (this.#actor?.alive) this.#sendTo(this.#actor, delivery);
    else if (this.#buffer.length < MAX_BUFFERED_MESSAGES) this.#buffer.push(delivery);
  }

  /**
   * A result for the core from work that outlives an actor (tasks): held during a restart. One the dead
   * actor never handled is not redelivered: `SessionTasks.resume` gives the next actor every task's outcome.
   */
  #toActor(msg: ConnectionMessage): void {
    if (this.#closed) return;
    const delivery: Delivery = { msg, keys: [], crashes: 0 };
    if (this.#actor?.alive) this.#sendTo(this.#actor, delivery);
    else this.#buffer.push(delivery);
  }

  /** Casts to `actor` if it is still the session's actor, remembering the message until the actor has handled it. */
  #sendTo(actor: ActorRef, delivery: Delivery): void {
    if (actor !== this.#actor || !actor.alive) return;
    this.#unacked.push(delivery);
    actor.cast(delivery.msg);
  }

  /** The request an effect result answers, when the session saw the effect that asked for it. */
  #requestOf(result: EffectResult): string[] {
    const key = 'ticket' in result ? this.#tickets.get(result.ticket) : undefined;
    return key === undefined ? [] : [key];
  }

  /** A request is answered (or cancelled, or decided after a crash): its work is no longer adoptable. */
  #settleWork(key: string): void {
    const ticket = this.#workTicket.get(key);
    if (ticket === undefined) return;
    this.#workTicket.delete(key);
    this.#work.delete(ticket);
    this.#tickets.delete(ticket);
  }

  /** A result of the session's runner: to the current actor, or held for the next one during a restart. */
  #fromRunner(result: EffectResult): void {
    if (this.#closed) return;
    // The work stays adoptable until its request is answered: an actor that dies before handling this
    // result leaves it to the next one, with the result redelivered.
    const delivery: Delivery = { msg: { k: 'result', result }, keys: this.#requestOf(result), crashes: 0 };
    if (this.#actor?.alive) this.#sendTo(this.#actor, delivery);
    else this.#buffer.push(delivery);
  }

  /** The actor has handled `handled` messages: they leave the unacknowledged queue, their requests are begun. */
  #acknowledge(handled: number): void {
    while (this.#handled < handled && this.#unackedHead < this.#unacked.length) {
      const delivery = this.#unacked[this.#unackedHead++] as Delivery;
      this.#handled++;
      for (const key of delivery.keys) {
        const request = this.#inFlight.get(key);
        if (request) request.begun = true;
      }
    }
    // Compact once the handled prefix dominates, so the queue does not grow forever.
    if (this.#unackedHead > 1024 && this.#unackedHead * 2 > this.#unacked.length) {
      this.#unacked = this.#unacked.slice(this.#unackedHead);
      this.#unackedHead = 0;
    }
  }

  /**
   * The session's supervisor gave it up (its actor kept crashing): every request in flight, and every one
   * that arrives later, is answered at once with why. Nothing is left waiting for an actor that will not come.
   */
  giveUp(why: string): void {
    if (this.#givenUp !== null) return;
    this.#givenUp = why;
    this.#buffer = [];
    const requests = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const r of requests) this.#deps.send(givenUpLine(r.id, why));
    this.#silenced = true;
    this.#notifyIdle();
  }

  /** True once the session's supervisor gave it up. */
  get givenUp(): boolean {
    return this.#givenUp !== null;
  }

  #answerGivenUp(line: string, alreadyParsed: unknown): void {
    let parsed: unknown = alreadyParsed;
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(line);
      } catch {
        // Not JSON: no id to answer.
        return;
      }
    }
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      if (typeof m !== 'object' || m === null) continue;
      const { id, method } = m as { id?: unknown; method?: unknown };
      if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) this.#deps.send(givenUpLine(id, this.#givenUp ?? ''));
    }
  }

  /** Resolves once no request is in flight (all answered), or after `ms`. */
  drain(ms: number): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Answers every request still in flight with an error (the server is stopping): none is left unanswered.
   * The session sends nothing after this, so a late result cannot answer a request a second time.
   */
  answerInFlight(reason: string): void {
    this.#silenced = true;
    for (const [key, { id }] of this.#inFlight) {
      this.#inFlight.delete(key);
      this.#deps.send(errorLine(id, ErrorCode.RequestAborted, `Request aborted: ${reason} while this request was in flight; its outcome is unknown.`));
    }
    this.#notifyIdle();
  }

  /** Ends the session: work in flight is aborted (commands killed), the actor stops. */
  async close(): Promise<void> {
    const runner = this.#runner;
    // Tasks record that they were stopped before the session goes.
    await this.#tasks?.close('the session closed');
    this.#closed = true;
    this.#actor?.stop();
    if (runner) await runner.close('the session closed');
  }

  /**
   * A request the first actor is not up to answer yet, answered here if it is one of EARLY_METHODS. The
   * line still goes to the actor (same lines, same pure core: same state); the actor's reply is dropped.
   */
  #answerEarly(line: string, message: unknown): void {
    const method = typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as { method?: unknown }).method : undefined;
    if (typeof method !== 'string' || !EARLY_METHODS.has(method)) {
      this.#early = null;
      return;
    }
    const step = handleMcpLine(line, this.#early as ConnectionState);
    if (step.effects.some((e) => e.kind !== 'log')) {
      this.#early = null;
      return;
    }
    this.#early = step.state;
    for (const reply of step.replies) {
      const id = responseIdOf(reply);
      // Notifications (and the log effects) are left to the actor, which sends them once.
      if (id === undefined) continue;
      const key = idKey(id);
      (this.#answeredEarly ??= new Map()).set(key, line);
      this.#inFlight.delete(key);
      this.#deps.send(reply);
    }
  }

  /**
   * Notes requests (ids, and what a retry needs) and cancellations; parse errors are the actor's to answer.
   * Returns the parsed message and the keys of the requests it carries.
   */
  #track(line: string, alreadyParsed?: unknown): { message: unknown; keys: string[] } {
    let parsed: unknown = alreadyParsed;
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(line);
      } catch {
        // Not JSON: the actor answers it with -32700; there is no id to track.
        return { message: undefined, keys: [] };
      }
    }
    const keys: string[] = [];
    const batch = Array.isArray(parsed);
    // A batch past MAX_BATCH_LENGTH is refused whole (one reply, id null): none of its ids will be answered.
    for (const m of Array.isArray(parsed) ? (parsed.length > MAX_BATCH_LENGTH ? [] : parsed) : [parsed]) {
      if (typeof m !== 'object' || m === null) continue;
      const { id, method, params } = m as { id?: unknown; method?: unknown; params?: { requestId?: unknown; _meta?: { progressToken?: unknown } } };
      if (typeof method !== 'string') continue;
      if (typeof id === 'string' || typeof id === 'number') {
        const key = idKey(id);
        keys.push(key);
        const token = params?._meta?.progressToken;
        const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined;
        this.#inFlight.set(key, { id, line: batch ? JSON.stringify(m) : line, retryable: isSafeToRetry(method, params), begun: false, crashes: 0, ...(progressToken === undefined ? {} : { progressToken }) });
      } else if (method === 'notifications/cancelled') {
        const target = params?.requestId;
        if (typeof target === 'string' || typeof target === 'number') {
          this.#inFlight.delete(idKey(target));
          this.#settleWork(idKey(target));
        }
      }
    }
    return { message: parsed, keys };
  }

  #output(out: ConnectionOutput, actor: ActorRef, runner: EffectRunner): void {
    if (this.#silenced) return;
    // Output of an incarnation that has exited is dropped: its requests were decided when it exited.
    if (actor !== this.#actor) return;
    this.#acknowledge(out.handled);
    if (out.checkpoint) this.#checkpoint = out.checkpoint;
    if (out.calls) this.#deps.onInlineCalls?.(out.calls);
    for (const line of out.replies) {
      const id = responseIdOf(line);
      if (id !== undefined) {
        const key = idKey(id);
        // Answered early: this reply confirms that the actor has the line; the client has its answer.
        if (this.#answeredEarly?.delete(key)) {
          if (this.#answeredEarly.size === 0) this.#answeredEarly = null;
          continue;
        }
        this.#inFlight.delete(key);
        this.#settleWork(key);
        this.#tasks?.replied(key);
      }
      this.#deps.send(line);
    }
    if (this.#inFlight.size === 0 && this.#idleWaiters.length > 0) this.#notifyIdle();
    for (const effect of out.effects) {
      if ('ticket' in effect && effect.ticket > this.#maxTicket) this.#maxTicket = effect.ticket;
      if (effect.kind === 'runTool') this.#tickets.set(effect.ticket, idKey(effect.requestId));
      if (this.#taskEffect(effect)) continue;
      if (effect.kind === 'runTool') {
        const key = idKey(effect.requestId);
        const progressToken = this.#inFlight.get(key)?.progressToken;
        this.#workTicket.set(key, effect.ticket);
        this.#work.set(effect.ticket, { key, pending: { kind: 'tool', requestId: effect.requestId, tool: effect.tool, ...(progressToken === undefined ? {} : { progressToken }) } });
      }
      runner.run(effect);
    }
  }

  /** Effects that belong to harness tasks go to the session's task registry (made on the first task). */
  #taskEffect(effect: Effect): boolean {
    const task = this.#deps.effects.task;
    if (!this.#tasks && task && effect.kind === 'runTool' && effect.tool === 'harness_task') {
      const deps = this.#deps;
      this.#tasks = new SessionTasks({
        context: task, scheduler: deps.scheduler, workspace: deps.effects.workspace, toolTimeoutMs: deps.effects.toolTimeoutMs,
        executeTool: deps.effects.executeTool ?? runTool, logger: deps.logger,
        deliver: (result) => this.#toActor({ k: 'result', result }),
      });
    }
    return this.#tasks?.take(effect) ?? false;
  }

  /**
   * The actor is gone: the messages it never began go to the next one in order, the requests it had begun
   * are retried if that is safe and answered otherwise, a request that crashed two actors in a row is
   * answered as the cause (crash-recovery.ts). Harness tasks are actors of their own and go on.
   */
  #actorExited(actor: ActorRef, reason: ActorExit): void {
    if (actor !== this.#actor) return;
    this.#actor = null;
    const unacked = this.#unacked.slice(this.#unackedHead);
    this.#unacked = [];
    this.#unackedHead = 0;
    this.#handled = 0;
    if (this.#closed || this.#givenUp !== null) return;
    const exit: ExitKind = reason.kind === 'crash' && reason.cause.name !== WORKER_KILLED ? 'crash' : 'kill';
    const why = reason.kind === 'crash' ? `crashed (${reason.cause.message})` : `stopped (${reason.kind})`;
    const running = new Set([...this.#work.values()].map((w) => w.key));
    const recovery = recover(this.#inFlight, unacked, exit, (key) => running.has(key) || (this.#tasks?.ownsRequest(key) ?? false));
    // Work of a request retried or answered here is stopped: the retry runs it afresh, an answer ends it.
    const decided = new Set([...recovery.answers.map((a) => a.key), ...recovery.redeliver.flatMap((d) => (d.msg.k === 'line' ? d.keys : []))]);
    for (const [ticket, w] of this.#work) {
      if (!decided.has(w.key)) continue;
      this.#settleWork(w.key);
      this.#runner?.run({ kind: 'cancel', ticket });
    }
    this.#deps.logger.log('warning', 'connection actor exited; redelivering what it had not finished', {
      session: this.id, reason: why, inFlight: this.#inFlight.size + recovery.answers.length, redelivered: recovery.redeliver.length,
      answered: recovery.answers.length, droppedPoison: recovery.droppedPoison,
    });
    for (const { id, reason: answer } of recovery.answers) {
      this.#deps.send(answer === 'poison'
        ? errorLine(id, ErrorCode.RequestAborted, `Request refused: the server crashed twice in a row while running this request (the session's actor ${why}), so this request is taken as the cause and is not run again.`, { reason: 'poison' })
        : errorLine(id, ErrorCode.RequestAborted, `Request aborted: the server crashed while running this request (the session's actor ${why}); its effect is unknown, so it is not run again. The session resumes from its checkpoint: check before you retry.`, { reason: 'crashed' }));
    }
    this.#buffer = [...recovery.redeliver, ...this.#buffer];
    if (this.#inFlight.size === 0) this.#notifyIdle();
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #refuse(msg: ConnectionMessage, why: string): void {
    if (msg.k !== 'line') return;
    // A refused message will never be handled: it must not stand in the queue the actor's counts walk.
    const at = this.#unacked.findIndex((d, i) => i >= this.#unackedHead && d.msg.k === 'line' && d.msg.line === msg.line);
    if (at >= 0) this.#unacked.splice(at, 1);
    let id: unknown;
    try {
      id = (JSON.parse(msg.line) as { id?: unknown }).id;
    } catch {
      // Unparseable lines carry no id to answer.
      return;
    }
    if (typeof id !== 'string' && typeof id !== 'number') return;
    this.#inFlight.delete(idKey(id));
    this.#deps.send(errorLine(id, ErrorCode.ServerBusy, `Request refused: ${why}`));
  }
}

function givenUpLine(id: RequestId, why: string): string {
  return errorLine(id, ErrorCode.RequestAborted, `Request aborted: the session was given up (${why}); this request was not run. Initialize a new session (stdio: the server exits; start it again).`, { reason: 'session-given-up' });
}

// One MCP session served by a connection actor on a scheduler worker. The session (main thread) keeps
// what must survive the actor: the transport's send, the requests in flight and the messages the actor has
// not finished — so that a crash costs one request, not a mailbox (crash-recovery.ts) — and the latest
// checkpoint that a restarted actor resumes from. It learns what a line carries from the one reading of its
// frame (mcp/frame.ts) and what a message answers from the core's output (`inReplyTo`): it reads no JSON-RPC.

import type { ActorOwner, ActorRef } from '../actors/actor-ref.ts';
import type { ActorExit } from '../actors/behaviour.ts';
import { packCheckpoint, unpackCheckpoint } from '../actors/codec.ts';
import { crashAnswer, type Delivery, type ExitKind, givenUp, lineChars, recover, type TrackedRequest } from './crash-recovery.ts';
import { WORKER_KILLED } from '../actors/scheduler-thread.ts';
import { AdoptableWork } from './adoptable-work.ts';
import { poisonedCreation, TaskCreations } from './task-creations.ts';
import { EarlyAnswers } from './early-answers.ts';
import { lineMessage } from './parsed-lines.ts';
import { trackLine } from './request-tracking.ts';
import { type ConnectionActorArgs, connectionBehaviourRef, type ConnectionMessage, type ConnectionOutput } from './connection-actor.ts';
import type { Effect, EffectResult } from '../mcp/effects.ts';
import { type ReadFrame, readFrame } from '../mcp/frame.ts';
import { ErrorCode, idKey } from '../mcp/jsonrpc.ts';
import { refusal } from '../mcp/outgoing.ts';
import { initialState } from '../mcp/state.ts';
import type { FrameEvent } from '../transports/line-framer.ts';
import { invalidUtf8Detail, oversizedDetail } from './connection.ts';
import { EffectRunner } from './effect-runner.ts';
import type { SessionDeps } from './session-deps.ts';
import { SessionTasks } from '../task/session-tasks.ts';
import { systemClock } from '../time/clock.ts';
import { runTool } from '../tools/tool-runner.ts';
import { MAX_BUFFERED_MESSAGES } from '../limits.ts';
export type { SessionDeps } from './session-deps.ts';
const NO_DELIVERIES: readonly Delivery[] = Object.freeze([]);

export class Session implements ActorOwner {
  readonly id: string;
  readonly #deps: SessionDeps;
  #actor: ActorRef | null = null;
  #runner: EffectRunner | null = null;
  #checkpoint: string | undefined; // the latest, as a one-byte string (codec.ts)
  /** Client requests not yet answered, by id key (in arrival order); null while none is (an idle session holds no table). */
  #inFlight: Map<string, TrackedRequest> | null = null;
  // The queues, tables and helpers below are null while empty or unused: an idle session holds none (issue 27).
  /** Messages for the next actor, while there is none: redeliveries first, then what arrived meanwhile. */
  #buffer: Delivery[] | null = null;
  /** Sent to the current actor and not yet counted as handled by it (from #unackedHead on). */
  #unacked: Delivery[] | null = null;
  #unackedHead = 0;
  /** Messages the current actor has reported handled. */
  #handled = 0;
  /** Tool calls running on the main thread, which a restarted actor adopts (adoptable-work.ts). */
  #work: AdoptableWork | null = null;
  /** Detached task starts (Tasks extension) until their answer has left: an actor's exit leaves their requests to the next one. */
  #creations: TaskCreations | null = null;
  /** Why the session's supervisor gave it up: every request, now and later, is answered with it. */
  #givenUp: string | null = null;
  #closed = false;
  /** Set by answerInFlight: every request has had its answer, and the actor's output is dropped. */
  #silenced = false;
  #restarts = 0;
  #started = false;
  #idleWaiters: (() => void)[] | null = null;
  /** Answers given before the first actor is up (early-answers.ts). */
  #early: EarlyAnswers | null = null;
  /** Harness tasks started by this session (they outlive its connection actor); made on the first one. */
  #tasks: SessionTasks | null = null;
  /**
   * Characters of the client's lines sent to or held for the actor and not yet handled (#unacked from its
   * head, and #buffer): what a transport that can stop reading (WebSocket) weighs against its budget.
   * Characters, not UTF-8 bytes: O(1) to read, and what a string holds in memory (one or two bytes each).
   */
  #inputChars = 0;
  /** A transport waiting for the unhandled input to fall to `limit` (one at a time: the one transport that reads). */
  #inputWaiter: { limit: number; resolve: () => void } | null = null;

  constructor(deps: SessionDeps) {
    this.id = deps.id;
    this.#deps = deps;
    this.#checkpoint = deps.checkpoint && packCheckpoint(deps.checkpoint);
  }

  /** The tasks of this session that are running (fault injection and health look at them). */
  get tasks(): SessionTasks | null { return this.#tasks; }

  get restarts(): number { return this.#restarts; }

  /** The id of the current connection actor (null while it is being restarted). */
  get actorId(): string | null {
    return this.#actor?.alive ? this.#actor.id : null;
  }

  get inFlight(): number { return this.#inFlight?.size ?? 0; }

  /** Characters of the client's lines the actor has not handled yet (held for it, or in its mailbox). */
  get pendingInput(): number { return this.#inputChars; }

  /** Resolves once the unhandled input is at most `limit` characters (at once if it is; when the session ends). */
  whenInputBelow(limit: number): Promise<void> {
    if (this.#inputChars <= limit || this.#closed || this.#givenUp !== null) return Promise.resolve();
    this.#inputWaiter?.resolve();
    return new Promise((resolve) => (this.#inputWaiter = { limit, resolve }));
  }

  #inputChanged(): void {
    this.#deps.requests?.settleInput(this.#closed || this.#givenUp !== null ? 0 : this.#inputChars);
    const waiter = this.#inputWaiter;
    if (waiter !== null && (this.#inputChars <= waiter.limit || this.#closed || this.#givenUp !== null)) {
      this.#inputWaiter = null;
      waiter.resolve();
    }
  }

  /** The child start of this session's spec: spawns the connection actor, resuming from the checkpoint. */
  async start(): Promise<ActorRef> {
    const work = this.#work;
    for (const [, w] of work?.running() ?? []) if (!this.#inFlight?.has(w.key)) work?.settle(w.key);
    const adopted = work?.adoptable();
    const args: ConnectionActorArgs = {
      config: this.#deps.config,
      ...(this.#checkpoint !== undefined ? { checkpoint: unpackCheckpoint(this.#checkpoint) } : {}),
      ...(this.#deps.crashProbability ? { crashProbability: this.#deps.crashProbability } : {}),
      ...(adopted !== undefined ? { adopted } : {}),
      ...(work === null ? {} : { ticketFloor: work.ticketFloor }),
      ...(this.#deps.stateKey === undefined ? {} : { stateKey: this.#deps.stateKey }),
    };
    const actor = await this.#deps.scheduler.spawn(connectionBehaviourRef, args, 'session');
    const first = !this.#started;
    this.#started = true;
    if (!first) this.#restarts++;
    // The first actor of a session may wait for its thread to boot: meanwhile the session answers what it can.
    // A rehydrated session is past initialize: the early answers (of a fresh session's core) would be wrong.
    if (first && this.#deps.checkpoint === undefined) {
      this.#early = new EarlyAnswers(initialState(this.#deps.config));
      void actor.ready.then(() => this.#endEarly());
    } else {
      this.#endEarly();
    }
    this.#actor = actor;
    // Its owner (output, refusals, exit) before the supervisor sees the handle: in-flight requests are answered before a restart.
    actor.own(this);
    // Redeliveries (messages the dead actor never finished, lines answered early among them) come first.
    const buffered = this.#buffer ?? NO_DELIVERIES;
    this.#buffer = null;
    for (const delivery of buffered) this.#sendTo(actor, delivery);
    // What a dead actor may have lost of its tasks' answers and questions is given to this one.
    if (this.#restarts > 0) {
      this.#tasks?.resume();
      for (const result of this.#creations?.answers(buffered) ?? []) this.#toActor({ k: 'result', result });
    }
    return actor;
  }

  /**
   * A frame from the transport. `read`: the line already read by the transport (HTTP reads a POST to answer
   * on it) with `readFrame` or `readParsed`, so it is read once; else the session reads it here.
   */
  receiveFrame(frame: FrameEvent, read?: ReadFrame | null): void {
    const frameRead = frame.kind === 'line' ? (read === undefined ? readFrame(frame.text) : read) : null;
    if (this.#givenUp !== null) {
      this.#answerGivenUp(frameRead);
      return;
    }
    if (this.#closed) return;
    let delivery: Delivery;
    if (frame.kind === 'line') {
      const tracked = trackLine(frame.text, frameRead, this.#requests(), this.#deps, (key) => this.#settle(key), this.#deps.requests ?? null);
      if (tracked !== null && this.#early?.active) this.#early.answer(tracked.read, this.#requests(), this.#deps);
      this.#settleRequests();
      // Every request in it was refused (an id in flight, or no room for its principal): nothing is left for the core.
      if (tracked === null) return;
      // An actor on this thread reads this parse instead of its own (parsed-lines.ts); another thread's would only keep it alive.
      delivery = { msg: lineMessage(tracked.line, this.#actor?.sameThread === true ? tracked.read : null), keys: tracked.keys, crashes: 0, ...(tracked.batch ? { batch: tracked.batch } : {}) };
    } else {
      const msg: ConnectionMessage = frame.kind === 'oversized'
        ? { k: 'unreadable', problem: 'oversized', detail: oversizedDetail(frame.bytes, frame.limit) }
        : { k: 'unreadable', problem: 'invalid-utf8', detail: invalidUtf8Detail(frame.bytes) };
      delivery = { msg, keys: [], crashes: 0 };
    }
    const refused = this.#deps.requests?.refusesInput(this.#inputChars, lineChars(delivery)) ?? null;
    if (refused !== null) return this.#refuseKeys(delivery.keys, refused);
    if (this.#actor?.alive) {
      this.#inputChars += lineChars(delivery);
      this.#sendTo(this.#actor, delivery);
    } else if ((this.#buffer?.length ?? 0) < MAX_BUFFERED_MESSAGES) {
      this.#inputChars += lineChars(delivery);
      (this.#buffer ??= []).push(delivery);
    } else this.#refuseKeys(delivery.keys, 'the session is restarting and its buffer is full; retry later');
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
    else if ((this.#buffer?.length ?? 0) < MAX_BUFFERED_MESSAGES) (this.#buffer ??= []).push(delivery);
  }

  /**
   * A result for the core from work that outlives an actor (tasks): held during a restart. One the dead
   * actor never handled is not redelivered: `SessionTasks.resume` gives the next actor every task's outcome.
   */
  #toActor(msg: ConnectionMessage): void {
    if (this.#closed) return;
    const delivery: Delivery = { msg, keys: [], crashes: 0 };
    if (this.#actor?.alive) this.#sendTo(this.#actor, delivery);
    else (this.#buffer ??= []).push(delivery);
  }

  /** Casts to `actor` if it is still the session's actor, remembering the message until the actor has handled it. */
  #sendTo(actor: ActorRef, delivery: Delivery): void {
    if (actor !== this.#actor || !actor.alive) return;
    (this.#unacked ??= []).push(delivery);
    actor.cast(delivery.msg);
  }

  /** A result of the session's runner: to the current actor, or held for the next one during a restart. */
  #fromRunner(result: EffectResult): void {
    if (this.#closed) return;
    // Adoptable until its request is answered: an actor that dies first leaves it to the next, the result redelivered.
    const delivery: Delivery = { msg: { k: 'result', result }, keys: this.#work?.requestOf(result) ?? [], crashes: 0 };
    if (this.#actor?.alive) this.#sendTo(this.#actor, delivery);
    else (this.#buffer ??= []).push(delivery);
  }

  /** The actor has handled `handled` messages: they leave the unacknowledged queue, their requests are begun. */
  #acknowledge(handled: number): void {
    const unacked = this.#unacked ?? NO_DELIVERIES;
    while (this.#handled < handled && this.#unackedHead < unacked.length) {
      const delivery = unacked[this.#unackedHead++] as Delivery;
      this.#handled++;
      this.#inputChars -= lineChars(delivery);
      for (const key of delivery.keys) {
        const request = this.#inFlight?.get(key);
        if (request) request.begun = true;
      }
    }
    this.#inputChanged();
    // Everything sent was handled: the queue lets go of it (an idle session would otherwise keep its last
    // messages, its initialize among them, until a thousand more came).
    if (this.#unackedHead === unacked.length) {
      this.#unacked = null;
      this.#unackedHead = 0;
      return;
    }
    // Compact once the handled prefix dominates, so the queue does not grow forever.
    if (this.#unackedHead > 1024 && this.#unackedHead * 2 > unacked.length) {
      this.#unacked = unacked.slice(this.#unackedHead);
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
    this.#buffer = null;
    this.#inputChars = 0;
    this.#inputChanged();
    const requests = [...(this.#inFlight?.values() ?? [])];
    this.#inFlight = null;
    this.#settleRequests();
    this.#creations = null;
    for (const r of requests) this.#deps.send(givenUp(r.id, why));
    this.#silenced = true;
    this.#notifyIdle();
  }

  /** True once the session's supervisor gave it up. */
  get givenUp(): boolean { return this.#givenUp !== null; }

  #answerGivenUp(read: ReadFrame | null): void {
    for (const m of read?.messages ?? []) if (m.kind === 'request') this.#deps.send(givenUp(m.id, this.#givenUp ?? ''));
  }

  /** Resolves once no request is in flight (all answered), or after `ms`. */
  drain(ms: number): Promise<void> {
    if (!this.#inFlight?.size) return Promise.resolve();
    return new Promise((resolve) => {
      const clock = this.#deps.effects.clock ?? systemClock;
      const timer = clock.setTimeout(resolve, ms);
      void this.idle().then(() => {
        clock.clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Resolves once no request is in flight (all answered): no timer, the caller bounds the wait on its own clock. */
  idle(): Promise<void> {
    if (!this.#working()) return Promise.resolve();
    return new Promise((resolve) => (this.#idleWaiters ??= []).push(resolve));
  }

  /**
   * Answers every request still in flight with an error (the server is stopping): none is left unanswered.
   * The session sends nothing after this, so a late result cannot answer a request a second time.
   */
  answerInFlight(reason: string, data?: Readonly<Record<string, unknown>>): void {
    this.#silenced = true;
    this.#creations = null;
    for (const [key, { id }] of this.#inFlight ?? []) {
      this.#inFlight?.delete(key);
      this.#deps.send(refusal(id, ErrorCode.RequestAborted, `Request aborted: ${reason} while this request was in flight; its outcome is unknown.`, data));
    }
    this.#settleRequests();
    this.#notifyIdle();
  }

  /** Ends the session: work in flight is aborted (commands killed), the actor stops. */
  async close(): Promise<void> {
    const runner = this.#runner;
    // Tasks record that they were stopped before the session goes.
    await this.#tasks?.close('the session closed');
    this.#closed = true;
    this.#settleRequests();
    this.#inputChars = 0;
    this.#inputChanged();
    this.#actor?.stop();
    if (runner) await runner.close('the session closed');
  }

  /** One runner for the session's life, made with its first effect other than a log record (an idle session's): its work outlives an actor. */
  #effects(): EffectRunner {
    return (this.#runner ??= new EffectRunner(this.#deps.effects, (result) => this.#fromRunner(result)));
  }

  /** @internal ActorOwner: what the session's actor emitted. */
  actorMessage(msg: unknown, actor: ActorRef): void {
    const out = msg as ConnectionOutput;
    if (this.#silenced) return;
    // Output of an incarnation that has exited is dropped: its requests were decided when it exited.
    if (actor !== this.#actor) return;
    this.#acknowledge(out.handled);
    if (out.checkpoint) {
      this.#checkpoint = packCheckpoint(out.checkpoint);
      this.#deps.onCheckpoint?.(out.checkpoint);
    }
    for (const reply of out.replies) {
      if (reply.settles !== undefined) for (const id of reply.settles) this.#settle(idKey(id)); // a batch refused whole: its one error answers them
      if (reply.inReplyTo !== undefined) {
        const key = idKey(reply.inReplyTo);
        // Answered early: this reply confirms that the actor has the line; the client has its answer.
        if (this.#early?.drop(key)) {
          if (this.#early.spent) this.#early = null;
          continue;
        }
        this.#settle(key);
        this.#tasks?.replied(key);
      }
      this.#deps.send(reply);
    }
    if (this.#inFlight?.size === 0) this.#inFlight = null;
    this.#settleRequests();
    if (this.#idleWaiters !== null && !this.#working()) this.#notifyIdle();
    for (const effect of out.effects) {
      if ('ticket' in effect) (this.#work ??= new AdoptableWork()).issued(effect);
      if (this.#taskEffect(effect)) continue;
      if (effect.kind === 'runTool') (this.#work ??= new AdoptableWork()).started(effect, this.#inFlight?.get(idKey(effect.requestId))?.progressToken);
      if (effect.kind === 'log') this.#deps.effects.logger.log(effect.level, effect.message, effect.data);
      else this.#effects().run(effect);
    }
  }

  /** Effects of harness tasks go to the node's detached ones (a Tasks-extension call: detached-tasks.ts), else the session's (made on the first task). */
  #taskEffect(effect: Effect): boolean {
    // The task context is asked for only by a harness_task (a session's effects may make it on first use).
    const task = !this.#tasks && effect.kind === 'runTool' && effect.tool === 'harness_task' ? this.#deps.effects.task : undefined;
    if (task) {
      const deps = this.#deps;
      this.#tasks = new SessionTasks({
        context: task, scheduler: deps.scheduler, workspace: deps.effects.workspace, toolTimeoutMs: deps.effects.toolTimeoutMs,
        executeTool: deps.effects.executeTool ?? runTool, logger: deps.logger, ...(deps.effects.clock ? { clock: deps.effects.clock } : {}),
        deliver: (result) => this.#toActor({ k: 'result', result }),
      });
    }
    if (effect.kind === 'runTool' && effect.task === true && this.#detached(effect)) return true;
    return this.#tasks?.take(effect) ?? false;
  }

  /** A task-marked call the node's detached tasks take: the start answers later, never in `take`, and finds its creation noted (task-creations.ts). */
  #detached(effect: Extract<Effect, { kind: 'runTool' }>): boolean {
    const { ticket } = effect;
    const taken = this.#deps.effects.detached?.take(effect, this.#deps.effects, this.#deps.scheduler, (result) => {
      this.#creations?.answered(ticket, result, (key) => this.#inFlight?.has(key) === true);
      this.#toActor({ k: 'result', result });
    }) === true;
    if (taken) (this.#creations ??= new TaskCreations()).begin(ticket, idKey(effect.requestId));
    return taken;
  }

  /** @internal ActorOwner: a message the actor's full mailbox refused. */
  actorRefused(msg: unknown): void {
    this.#refuse(msg as ConnectionMessage, 'the session is overloaded (its mailbox is full); retry later');
  }

  /**
   * @internal ActorOwner. The actor is gone: the messages it never began go to the next one in order, the requests it had begun
   * are retried if that is safe and answered otherwise, a request that crashed two actors in a row is
   * answered as the cause (crash-recovery.ts). Harness tasks are actors of their own and go on.
   */
  actorExited(reason: ActorExit, actor: ActorRef): void {
    if (actor !== this.#actor) return;
    this.#actor = null;
    // Its listen streams' task watches go with it: the retried listens watch again (effect-runner.ts).
    this.#runner?.incarnationEnded();
    const unacked = this.#unacked?.slice(this.#unackedHead) ?? [];
    this.#unacked = null;
    this.#unackedHead = 0;
    this.#handled = 0;
    if (this.#closed || this.#givenUp !== null) return;
    const exit: ExitKind = reason.kind === 'crash' && reason.cause.name !== WORKER_KILLED ? 'crash' : 'kill';
    const why = reason.kind === 'crash' ? `crashed (${reason.cause.message})` : `stopped (${reason.kind})`;
    const running = this.#work?.runningKeys() ?? new Set<string>();
    this.#poisonedCreation(unacked[0], exit, why);
    // Work that outlives the actor leaves its request to the next one: adopted tool calls, tasks, task starts.
    const recovery = recover(this.#requests(), unacked, exit, (key) => running.has(key) || (this.#tasks?.ownsRequest(key) ?? false) || this.#creations?.owns(key) === true);
    for (const { key } of recovery.answers) this.#creations?.settle(key);
    // Work of a request retried or answered here is stopped: the retry runs it afresh, an answer ends it.
    const decided = new Set([...recovery.answers.map((a) => a.key), ...recovery.redeliver.flatMap((d) => (d.msg.k === 'line' ? d.keys : []))]);
    for (const [ticket, w] of this.#work?.running() ?? []) {
      if (!decided.has(w.key)) continue;
      this.#work?.settle(w.key);
      this.#runner?.run({ kind: 'cancel', ticket });
    }
    this.#deps.logger.log('warning', 'connection actor exited; redelivering what it had not finished', {
      session: this.id, reason: why, inFlight: this.#requests().size + recovery.answers.length, redelivered: recovery.redeliver.length,
      answered: recovery.answers.length, droppedPoison: recovery.droppedPoison,
    });
    for (const { id, reason: answer } of recovery.answers) this.#deps.send(crashAnswer(id, answer, why));
    this.#settleRequests();
    const buffer = [...recovery.redeliver, ...(this.#buffer ?? [])];
    this.#buffer = buffer.length > 0 ? buffer : null;
    // What is left unhandled is what the next actor gets: counted afresh (an exit is rare; the buffer is bounded).
    this.#inputChars = 0;
    for (const delivery of buffer) this.#inputChars += lineChars(delivery);
    this.#inputChanged();
    if (!this.#working()) this.#notifyIdle();
  }

  /** A crash while a detached start's answer was handled is charged to it: at the second its call is poison. */
  #poisonedCreation(head: Delivery | undefined, exit: ExitKind, why: string): void {
    if (head?.msg.k !== 'result' || exit !== 'crash') return;
    const key = this.#creations?.crashedOn(head.msg.result) ?? null;
    const request = key === null ? undefined : this.#inFlight?.get(key);
    if (key === null || request === undefined) return;
    this.#inFlight?.delete(key);
    this.#deps.send(poisonedCreation(request.id, why, head.msg.result));
  }

  /** A request left (answered, cancelled): it is not in flight, and its adoptable work and its task start are done with. */
  #settle(key: string): void { this.#inFlight?.delete(key); this.#work?.settle(key); this.#creations?.settle(key); }

  /** The first actor is up: the early answers end, and go once no reply of the actor's is left to confirm one. */
  #endEarly(): void { if (this.#early?.end()) this.#early = null; }

  #requests(): Map<string, TrackedRequest> { return (this.#inFlight ??= new Map()); }

  /** The principal's count on the node follows what this session has in flight (none once it closed): it cannot drift. */
  #settleRequests(): void { this.#deps.requests?.settle(this.#closed ? 0 : (this.#inFlight?.size ?? 0)); }

  /** Is a request in flight that will end by itself? A listen stream (`stream`) lasts until cancelled: a drain does not wait for it. */
  #working(): boolean {
    for (const r of this.#inFlight?.values() ?? []) if (r.stream !== true) return true;
    return false;
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = null;
    for (const w of waiters ?? []) w();
  }

  #refuse(msg: ConnectionMessage, why: string): void {
    if (msg.k !== 'line') return;
    // A refused message will never be handled: it must not stand in the queue the actor's counts walk.
    const at = (this.#unacked ?? NO_DELIVERIES).findIndex((d, i) => i >= this.#unackedHead && d.msg.k === 'line' && d.msg.line === msg.line);
    if (at < 0) return;
    const [delivery] = this.#unacked?.splice(at, 1) ?? [];
    if (delivery !== undefined) this.#inputChars -= lineChars(delivery);
    this.#inputChanged();
    this.#refuseKeys(delivery?.keys ?? [], why);
  }

  /** Answers server busy to the requests of a delivery no actor will handle (one refused by a mailbox, or never sent). */
  #refuseKeys(keys: readonly string[], why: string): void {
    for (const key of keys) {
      const request = this.#inFlight?.get(key);
      if (request === undefined) continue;
      this.#inFlight?.delete(key);
      this.#deps.send(refusal(request.id, ErrorCode.ServerBusy, `Request refused: ${why}`));
    }
    this.#settleRequests();
  }
}

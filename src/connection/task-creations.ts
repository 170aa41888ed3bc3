// The detached task starts of one session (Tasks extension: a `harness_task` call whose `runTool` the node's
// DetachedTasks took), from that effect until the reply carrying their answer has left. The start runs on
// the main thread and outlives the connection actor that asked for it; its call's pending entry is in that
// actor's checkpoint (a harness_task's always is). So an actor that dies between the effect and its reply
// costs the call nothing: the request is not answered "effect unknown" (its task is being created, or was)
// but left to the next incarnation, which gets the start's answer — the `CreateTaskResult`, or the tool
// error that kept it from starting — once it comes, or again if the dead actor had it and never replied.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { EffectResult } from '../mcp/effects.ts';
import { ErrorCode } from '../mcp/jsonrpc.ts';
import { type Outgoing, refusal } from '../mcp/outgoing.ts';
import type { Delivery } from './crash-recovery.ts';

interface Creation {
  readonly requestKey: string;
  /** The start's answer, once it came: kept until its reply has left, for an incarnation that lost it. */
  result: EffectResult | null;
  /** Crashes of actors that were handling that answer: a second makes it poison, as any message. */
  crashes: number;
}

export class TaskCreations {
  /** By the ticket of the call; null while none is in flight (an idle session holds no table). At most one per request in flight. */
  #byTicket: Map<number, Creation> | null = null;

  /** The start of the call `requestKey` (its `runTool`, `ticket`) was taken: its request is this registry's until answered. */
  begin(ticket: number, requestKey: string): void {
    (this.#byTicket ??= new Map()).set(ticket, { requestKey, result: null, crashes: 0 });
  }

  /** Whether a start answers this request (so the actor's exit does not answer it). */
  owns(requestKey: string): boolean {
    for (const c of this.#byTicket?.values() ?? []) if (c.requestKey === requestKey) return true;
    return false;
  }

  /**
   * The start answered `ticket`: kept while the request still waits for it (`waiting`), forgotten otherwise
   * (cancelled, or answered by the session while the start ran: the answer then goes nowhere).
   */
  answered(ticket: number, result: EffectResult, waiting: (requestKey: string) => boolean): void {
    const creation = this.#byTicket?.get(ticket);
    if (creation === undefined) return;
    if (waiting(creation.requestKey)) creation.result = result;
    else this.#delete(ticket);
  }

  /** The request got its reply (or left otherwise): its start is done with. */
  settle(requestKey: string): void {
    for (const [ticket, c] of this.#byTicket ?? []) if (c.requestKey === requestKey) this.#delete(ticket);
  }

  /**
   * An actor crashed while handling `result`: if it is a start's answer, the crash is charged to it, and at
   * the second the request is poison (given back, and forgotten here: the caller answers it). Null otherwise.
   */
  crashedOn(result: EffectResult): string | null {
    for (const [ticket, c] of this.#byTicket ?? []) {
      if (c.result !== result) continue;
      if (++c.crashes < 2) return null;
      this.#delete(ticket);
      return c.requestKey;
    }
    return null;
  }

  /**
   * A new incarnation: the answers a dead one may have had and not replied with, to be delivered again —
   * but those in `buffered`, which arrived while no actor was up and have just gone to it with the buffer.
   */
  answers(buffered: readonly Delivery[]): EffectResult[] {
    const sent = (result: EffectResult) => buffered.some((d) => d.msg.k === 'result' && d.msg.result === result);
    return [...(this.#byTicket?.values() ?? [])].flatMap((c) => (c.result === null || sent(c.result) ? [] : [c.result]));
  }

  /** The session answers no more (given up, stopping, closed). */
  clear(): void {
    this.#byTicket = null;
  }

  #delete(ticket: number): void {
    if (this.#byTicket?.delete(ticket) && this.#byTicket.size === 0) this.#byTicket = null;
  }
}

/** The answer to a call whose start's answer crashed two actors in a row (`crashedOn`): poison, naming its task if one was created. */
export function poisonedCreation(id: RequestId, why: string, result: EffectResult): Outgoing {
  const taskId = result.kind === 'taskCreated' ? result.task.taskId : undefined;
  const task = taskId === undefined ? '' : ` Its task ${taskId} was created: tasks/get finds it.`;
  return refusal(id, ErrorCode.RequestAborted,
    `Request refused: the server crashed twice in a row while answering this request (the session's actor ${why}), so its answer is taken as the cause and is not delivered again.${task}`,
    { reason: 'poison', ...(taskId === undefined ? {} : { taskId }) });
}

// Tool calls a session runs on the main thread (its effect runner outlives each connection actor), with
// what the core needs to answer them: a restarted actor adopts the ones still in flight, so a crash does
// not run them again. An entry lives from the `runTool` effect until its request is answered, cancelled
// or decided after a crash. The tables are null while empty: an idle session holds none (an empty Map is ~200 B).

import type { Effect, EffectResult } from '../mcp/effects.ts';
import { idKey } from '../mcp/jsonrpc.ts';
import type { Pending } from '../mcp/state.ts';

export interface RunningTool {
  /** The request it answers (its id key). */
  readonly key: string;
  readonly pending: Pending;
}

export class AdoptableWork {
  /** Tool tickets to the requests they answer: an effect result names its request. */
  #tickets: Map<number, string> | null = null;
  #work: Map<number, RunningTool> | null = null;
  /** The ticket of each request in #work: its entry goes when the request is answered (or cancelled). */
  #workTicket: Map<string, number> | null = null;
  /** The highest ticket any incarnation issued: the next one starts above it. */
  #maxTicket = 0;

  /** The first ticket a new actor may issue. */
  get ticketFloor(): number {
    return this.#maxTicket + 1;
  }

  /** What a new actor adopts, or undefined when nothing runs. */
  adoptable(): [number, Pending][] | undefined {
    return this.#work === null ? undefined : [...this.#work].map(([ticket, w]): [number, Pending] => [ticket, w.pending]);
  }

  /** The running tools, by ticket (a copy: the caller may settle them as it walks). */
  running(): [number, RunningTool][] {
    return [...(this.#work ?? [])];
  }

  /** The requests whose tools run now. */
  runningKeys(): Set<string> {
    return new Set([...(this.#work?.values() ?? [])].map((w) => w.key));
  }

  /** The request an effect result answers, when the session saw the effect that asked for it. */
  requestOf(result: EffectResult): string[] {
    const key = 'ticket' in result ? this.#tickets?.get(result.ticket) : undefined;
    return key === undefined ? [] : [key];
  }

  /** An effect the actor asked for: its ticket is seen, and a `runTool`'s result will name its request. */
  issued(effect: Effect): void {
    if ('ticket' in effect && effect.ticket > this.#maxTicket) this.#maxTicket = effect.ticket;
    if (effect.kind === 'runTool') (this.#tickets ??= new Map()).set(effect.ticket, idKey(effect.requestId));
  }

  /** A `runTool` the session's runner runs (not a harness task's: tasks are actors of their own), adoptable from now on. */
  started(effect: Extract<Effect, { kind: 'runTool' }>, progressToken: string | number | undefined): void {
    const key = idKey(effect.requestId);
    (this.#workTicket ??= new Map()).set(key, effect.ticket);
    (this.#work ??= new Map()).set(effect.ticket, { key, pending: { kind: 'tool', requestId: effect.requestId, tool: effect.tool, ...(progressToken === undefined ? {} : { progressToken }) } });
  }

  /** A request is answered (or cancelled, or decided after a crash): its work is no longer adoptable. */
  settle(key: string): void {
    const ticket = this.#workTicket?.get(key);
    if (ticket === undefined) return;
    if (this.#workTicket?.delete(key) && this.#workTicket.size === 0) this.#workTicket = null;
    if (this.#work?.delete(ticket) && this.#work.size === 0) this.#work = null;
    if (this.#tickets?.delete(ticket) && this.#tickets.size === 0) this.#tickets = null;
  }
}

// One MCP connection, in this thread: feeds lines to the pure core, sends its replies, runs its
// effects (tools with a deadline and cancellation, workspace reads, completions) and folds the
// results back in. The actor runtime will host exactly this loop on a scheduler worker.

import { type EffectResult, type Effect } from '../mcp/effects.ts';
import { handleEffectResult, handleMcpLine, rejectMessage, type Step } from '../mcp/handle.ts';
import { ErrorCode } from '../mcp/jsonrpc.ts';
import type { ConnectionState } from '../mcp/state.ts';
import type { FrameEvent } from '../transports/line-framer.ts';
import type { Logger } from './logger.ts';
import { completePath } from './path-completion.ts';
import { runTool } from './tool-runner.ts';
import { gatherWorkspaceContext } from './workspace-context.ts';

/** After a deadline or cancellation aborts a tool, how long it has to stop before it is answered for. */
export const ABORT_GRACE_MS = 2000;

export interface ConnectionDeps {
  /** Real path of the workspace root. */
  readonly workspace: string;
  readonly logger: Logger;
  /** Deadline of one tool call. */
  readonly toolTimeoutMs: number;
}

export class Connection {
  #state: ConnectionState;
  readonly #deps: ConnectionDeps;
  readonly #send: (line: string) => void;
  /** Work in flight by ticket: its abort controller, and a promise that settles when it has stopped. */
  readonly #work = new Map<number, { controller: AbortController; done: Promise<void> }>();

  constructor(state: ConnectionState, deps: ConnectionDeps, send: (line: string) => void) {
    this.#state = state;
    this.#deps = deps;
    this.#send = send;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get inFlight(): number {
    return this.#work.size;
  }

  receive(line: string): void {
    this.#apply(handleMcpLine(line, this.#state));
  }

  receiveFrame(frame: FrameEvent): void {
    switch (frame.kind) {
      case 'line': return this.receive(frame.text);
      case 'oversized':
        this.#deps.logger.log('warning', 'message over the size limit discarded', { bytes: frame.bytes, limit: frame.limit });
        return this.#apply(rejectMessage('oversized', `message of ${frame.bytes} bytes exceeds the limit of ${frame.limit} bytes (--max-message-bytes)`, this.#state));
      case 'invalid-utf8':
        return this.#apply(rejectMessage('invalid-utf8', `message of ${frame.bytes} bytes is not valid UTF-8`, this.#state));
    }
  }

  /** Aborts all work in flight and waits (up to `graceMs`) for it to stop: child processes are reaped. */
  async close(graceMs: number = ABORT_GRACE_MS): Promise<void> {
    const done = [...this.#work.values()].map((w) => {
      w.controller.abort(new Error('the connection closed'));
      return w.done;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(done), new Promise<void>((r) => { timer = setTimeout(r, graceMs); })]);
    clearTimeout(timer);
  }

  #apply(step: Step): void {
    this.#state = step.state;
    for (const line of step.replies) this.#send(line);
    for (const effect of step.effects) this.#run(effect);
  }

  #deliver(result: EffectResult): void {
    this.#apply(handleEffectResult(result, this.#state));
  }

  #run(effect: Effect): void {
    switch (effect.kind) {
      case 'log':
        return this.#deps.logger.log(effect.level, effect.message, effect.data);
      case 'cancel':
        this.#work.get(effect.ticket)?.controller.abort(new Error('cancelled by the client'));
        return;
      case 'runTool':
        return this.#runTool(effect);
      case 'readWorkspace':
        return this.#track(effect.ticket, async () => {
          const context = await gatherWorkspaceContext(this.#deps.workspace);
          this.#deliver({ kind: 'workspaceContext', ticket: effect.ticket, context });
        });
      case 'completePath':
        return this.#track(effect.ticket, async () => {
          const { values, hasMore } = await completePath(this.#deps.workspace, effect.prefix);
          this.#deliver({ kind: 'pathCompletions', ticket: effect.ticket, values, hasMore });
        });
    }
  }

  #runTool(effect: Extract<Effect, { kind: 'runTool' }>): void {
    const { ticket } = effect;
    this.#track(ticket, async (signal) => {
      let answered = false;
      const answer = (result: EffectResult) => {
        if (answered) return;
        answered = true;
        this.#deliver(result);
      };
      const deadline = setTimeout(() => {
        this.#work.get(ticket)?.controller.abort(new Error(`the tool call passed its deadline of ${this.#deps.toolTimeoutMs / 1000} s`));
      }, this.#deps.toolTimeoutMs);
      // A body that ignores its abort signal is answered for after a grace period; its late result is dropped.
      let graceTimer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        graceTimer = setTimeout(() => answer({ kind: 'toolDone', ticket, outcome: { text: `Stopped: ${reasonOf(signal)}`, isError: true } }), ABORT_GRACE_MS);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const outcome = await runTool(effect.tool, effect.args, effect.harness, {
          workspace: this.#deps.workspace,
          signal,
          onProgress: (progress) => { if (!answered) this.#deliver({ kind: 'toolProgress', ticket, progress }); },
        });
        answer({ kind: 'toolDone', ticket, outcome });
      } finally {
        clearTimeout(deadline);
        clearTimeout(graceTimer);
        signal.removeEventListener('abort', onAbort);
      }
    }, (err) => ({ kind: 'toolDone', ticket, outcome: { text: `Internal error in tool ${effect.tool}: ${(err as Error).message}`, isError: true } }));
  }

  /** Runs async work for a ticket with an abort controller; an unexpected throw answers the request with an error. */
  #track(ticket: number, body: (signal: AbortSignal) => Promise<void>, onError?: (err: unknown) => EffectResult): void {
    const controller = new AbortController();
    const done = body(controller.signal).catch((err: unknown) => {
      this.#deps.logger.log('error', 'effect failed', { ticket, error: (err as Error).stack ?? String(err) });
      this.#deliver(onError ? onError(err) : { kind: 'effectFailed', ticket, code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` });
    }).finally(() => this.#work.delete(ticket));
    this.#work.set(ticket, { controller, done });
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}

// The tool pool: CPU-heavy or hang-prone tool bodies (grep, find, large reads, a large edit's matching) run on piscina threads
// with a memory limit, and a deadline or cancellation stops the thread itself. Everything else — and
// `bash`, whose child processes must be killed from a thread that outlives them, and the writing tools,
// which a stopped thread could leave half-written — runs in the calling thread. Threads are shared
// fairly (./fair-share.ts): one principal cannot hold them all, whatever it submits.

import { createRequire } from 'node:module';
import type { Piscina } from 'piscina';
import type * as PiscinaModule from 'piscina';
import { defaultThreadCount } from '../actors/thread-count.ts';
import type { HarnessId } from '../harness/ids.ts';
import { type ToolBody, type ToolContext, ToolError, type ToolExecutor, type ToolOutcome } from './contract.ts';
import type { ToolName } from './definition.ts';
import { FairShare, type PoolCaller, PoolQueueFull, type Release } from './fair-share.ts';
import type { PooledResult, PooledTask } from './tool-pool-worker.ts';
import type { EditArgs, EditPlanner } from './edit-plan.ts';
import { planSmallEdit } from './edit.ts';
import type { ReadArgs } from './read.ts';
import type { ThreadEntry } from '../actors/thread-entry.ts';
import { toolPoolEntry } from './tool-pool-entry.ts';
import type { BoundedSink } from '../log/stderr-sink.ts';
import { forwardPortOutput, threadOutputHandshake } from '../log/thread-output.ts';
import { runTool } from './tool-runner.ts';
import { EDIT_INLINE_MAX_BYTES, EDIT_INLINE_MAX_TEXT_CHARS, LARGE_READ_BYTES, TOOL_THREAD_MEMORY_MB } from '../limits.ts';

/** Pool threads kept idle before they are stopped. */
export const TOOL_THREAD_IDLE_MS = 30_000;

const pooled: ReadonlySet<ToolName> = new Set(['grep', 'find']);

/** Whom `ToolPool.execute` (an executor not bound to a session) runs calls for. */
export const UNBOUND_CALLER: PoolCaller = { principal: 'unbound', session: 'unbound' };

export interface ToolPoolOptions {
  /** Default: defaultThreadCount() (one per core, at least two). */
  readonly maxThreads?: number;
  readonly memoryMb?: number;
  /** Pooled calls one principal may run at once (default: all threads but one, at least 1; see fair-share.ts). */
  readonly principalShare?: number;
  /** The code a thread runs (default: the tool-pool worker); tests give one with controllable tasks. */
  readonly entry?: ThreadEntry;
  /** Where the threads' console output goes (default: the process's bounded stderr sink). */
  readonly output?: BoundedSink;
}

export class ToolPool {
  readonly #options: ToolPoolOptions;
  readonly #maxThreads: number;
  /** Made on the first pooled call: a start (and a server whose calls never need the pool) loads no piscina. */
  #pool: Promise<Piscina<PooledTask, PooledResult>> | null = null;
  #made: Piscina<PooledTask, PooledResult> | null = null;
  readonly #share: FairShare;

  constructor(options: ToolPoolOptions = {}) {
    this.#options = options;
    this.#maxThreads = options.maxThreads ?? defaultThreadCount();
    // At most maxThreads calls are handed to piscina at once, so its own queue stays empty: who waits,
    // and in what order, is decided here.
    this.#share = new FairShare({ slots: this.#maxThreads, perPrincipal: options.principalShare });
  }

  get threads(): number {
    return this.#made?.threads.length ?? 0;
  }

  /** Pooled calls one principal may run at once. */
  get principalShare(): number {
    return this.#share.perPrincipal;
  }

  /** Runs calls for UNBOUND_CALLER; a session's calls go through `executorFor` its caller. */
  readonly execute: ToolExecutor = (tool, args, harness, ctx) => this.#execute(tool, args, harness, ctx, UNBOUND_CALLER);

  /** An executor whose pooled calls count against `caller`'s share of the threads. */
  executorFor(caller: PoolCaller): ToolExecutor {
    return (tool, args, harness, ctx) => this.#execute(tool, args, harness, ctx, caller);
  }

  async destroy(): Promise<void> {
    const pool = this.#pool;
    if (pool) await (await pool).destroy();
  }

  #piscina(): Promise<Piscina<PooledTask, PooledResult>> {
    // Loaded with require, not import(): piscina stays a file of its own package (it starts its threads
    // from there), and the command's CommonJS bundle runs from a V8 code cache, where a dynamic import()
    // of a package fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING (every pooled grep did, through
    // `super-pi`). Still on first use: a start that never pools a call never loads it.
    this.#pool ??= Promise.resolve().then(() => {
      const { Piscina } = createRequire(import.meta.url)('piscina') as typeof PiscinaModule;
      const entry = this.#options.entry ?? toolPoolEntry();
      this.#made = new Piscina<PooledTask, PooledResult>({
        filename: entry.url.href,
        execArgv: entry.execArgv,
        // No thread until the first pooled call: a start-up does not boot a thread it may never use.
        minThreads: 0,
        maxThreads: this.#maxThreads,
        idleTimeout: TOOL_THREAD_IDLE_MS,
        resourceLimits: { maxOldGenerationSizeMb: this.#options.memoryMb ?? TOOL_THREAD_MEMORY_MB },
      });
      // Each thread hands over the port its console output comes by (tool-pool-worker.ts): read into the bounded log.
      this.#made.on('message', (message: unknown) => {
        const handshake = threadOutputHandshake(message);
        if (handshake !== null) forwardPortOutput(handshake, this.#options.output);
      });
      return this.#made;
    });
    return this.#pool;
  }

  async #execute(tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: ToolContext, caller: PoolCaller): Promise<ToolOutcome> {
    if (tool === 'edit') {
      // Only the deciding half moves (edit.ts): a thread stopped by a deadline must never be the one writing.
      const onPool: EditPlanner = async (editArgs: EditArgs, workspace: string, signal: AbortSignal) => {
        const ran = await this.#run(tool, caller, { kind: 'edit-plan', args: editArgs, workspace }, signal);
        if (!ran.ok) throw new ToolError(ran.outcome.text);
        if (!('kind' in ran.result)) throw new Error('the tool pool answered an edit plan with a tool outcome');
        return ran.result;
      };
      // A small file is decided here; its size is the opened descriptor's, so no name (`@big`, a link, a
      // file swapped after a look) brings a large file's matching onto this thread.
      const here: EditPlanner = async (editArgs, workspace, signal) =>
        (await planSmallEdit(editArgs, workspace, EDIT_INLINE_MAX_BYTES, signal)) ?? onPool(editArgs, workspace, signal);
      return runTool(tool, args, harness, ctx, { editPlanner: editTextLength(args) > EDIT_INLINE_MAX_TEXT_CHARS ? onPool : here });
    }
    if (tool === 'read') {
      // Routed by the size of the descriptor this thread opened, as edit is: no name looked up before the
      // open (a link retargeted, a file renamed over it) brings a large file's read onto this thread. The
      // pool's read opens the file again by its name: a small file swapped back in there is harmless.
      const onPool: ToolBody<ReadArgs> = () => this.#pooled(tool, args, harness, ctx, caller);
      return runTool(tool, args, harness, ctx, { largeRead: { maxFileBytes: LARGE_READ_BYTES, elsewhere: onPool } });
    }
    if (!pooled.has(tool)) return runTool(tool, args, harness, ctx);
    return this.#pooled(tool, args, harness, ctx, caller);
  }

  /** The whole call on a pool thread. */
  async #pooled(tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: ToolContext, caller: PoolCaller): Promise<ToolOutcome> {
    const ran = await this.#run(tool, caller, { kind: 'tool', tool, args, harness, workspace: ctx.workspace }, ctx.signal);
    if (!ran.ok) return ran.outcome;
    if ('kind' in ran.result) throw new Error(`the tool pool answered a ${tool} call with an edit plan`);
    return ran.result;
  }

  /** Runs one task on a thread once `caller`'s share allows; a refusal, a stop or running out of memory is an error outcome. */
  async #run(tool: ToolName, caller: PoolCaller, task: PooledTask, signal: AbortSignal): Promise<{ ok: true; result: PooledResult } | { ok: false; outcome: ToolOutcome }> {
    let release: Release;
    try {
      release = await this.#share.acquire(caller, signal);
    } catch (err) {
      if (signal.aborted) return { ok: false, outcome: stopped(signal) };
      if (err instanceof PoolQueueFull) return { ok: false, outcome: { text: `The ${tool} call was refused: ${err.message}.`, isError: true } };
      throw err;
    }
    try {
      const pool = await this.#piscina();
      return { ok: true, result: await pool.run(task, { signal }) };
    } catch (err) {
      if (signal.aborted) return { ok: false, outcome: stopped(signal) };
      if ((err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        return { ok: false, outcome: { text: `The ${tool} call ran out of memory (limit ${TOOL_THREAD_MEMORY_MB} MB per tool thread); narrow it (a smaller path, a glob, a limit).`, isError: true } };
      }
      throw err;
    } finally {
      release();
    }
  }
}

/** Characters of an edit's texts: the matcher's automaton is built from them, so many of them are large work even on a small file. */
function editTextLength(args: Record<string, unknown>): number {
  const length = (v: unknown) => (typeof v === 'string' ? v.length : 0);
  let total = length(args.oldText) + length(args.newText);
  if (Array.isArray(args.edits)) {
    for (const e of args.edits as unknown[]) {
      if (typeof e === 'object' && e !== null) total += length((e as Record<string, unknown>).oldText) + length((e as Record<string, unknown>).newText);
    }
  }
  return total;
}

function stopped(signal: AbortSignal): ToolOutcome {
  const reason: unknown = signal.reason;
  return { text: `Stopped: ${reason instanceof Error ? reason.message : String(reason)}`, isError: true };
}

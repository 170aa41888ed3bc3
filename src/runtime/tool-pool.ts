// The tool pool: CPU-heavy or hang-prone tool bodies (grep, find, large reads) run on piscina threads
// with a memory limit, and a deadline or cancellation stops the thread itself. Everything else — and
// `bash`, whose child processes must be killed from a thread that outlives them, and the writing tools,
// which a stopped thread could leave half-written — runs in the calling thread.

import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import type { HarnessId } from '../harness/ids.ts';
import type { ToolContext, ToolOutcome } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import type { ToolExecutor } from './effect-runner.ts';
import type { PooledToolTask } from './tool-pool-worker.ts';
import { toolPoolEntry } from './thread-entries.ts';
import { runTool } from './tool-runner.ts';

/** A `read` of a file larger than this goes to the pool. */
export const LARGE_READ_BYTES = 1024 * 1024;
/** V8 old-generation limit of one pool thread. */
export const TOOL_THREAD_MEMORY_MB = 512;
/** Pool threads kept idle before they are stopped. */
export const TOOL_THREAD_IDLE_MS = 30_000;

const pooled: ReadonlySet<ToolName> = new Set(['grep', 'find']);

export interface ToolPoolOptions {
  readonly maxThreads?: number;
  readonly memoryMb?: number;
}

export class ToolPool {
  readonly #pool: Piscina<PooledToolTask, ToolOutcome>;

  constructor(options: ToolPoolOptions = {}) {
    const entry = toolPoolEntry();
    this.#pool = new Piscina({
      filename: entry.url.href,
      execArgv: entry.execArgv,
      // No thread until the first pooled call: a start-up does not boot a thread it may never use.
      minThreads: 0,
      maxThreads: options.maxThreads ?? Math.max(2, os.availableParallelism()),
      idleTimeout: TOOL_THREAD_IDLE_MS,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb ?? TOOL_THREAD_MEMORY_MB },
    });
  }

  get threads(): number {
    return this.#pool.threads.length;
  }

  readonly execute: ToolExecutor = async (tool, args, harness, ctx) => {
    if (!(await this.#belongsInPool(tool, args, ctx))) return runTool(tool, args, harness, ctx);
    return this.#runPooled(tool, args, harness, ctx);
  };

  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }

  async #belongsInPool(tool: ToolName, args: Record<string, unknown>, ctx: ToolContext): Promise<boolean> {
    if (pooled.has(tool)) return true;
    if (tool !== 'read') return false;
    // Routing only: one stat of the lexical path. Confinement is enforced by the body wherever it runs,
    // and this answer is never shown to the caller.
    try {
      return (await stat(path.resolve(ctx.workspace, String(args.path)))).size > LARGE_READ_BYTES;
    } catch (err) {
      // Missing or unreadable: the body, run here, reports it properly.
      if ((err as NodeJS.ErrnoException).code !== undefined) return false;
      throw err;
    }
  }

  async #runPooled(tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: ToolContext): Promise<ToolOutcome> {
    try {
      return await this.#pool.run({ tool, args, harness, workspace: ctx.workspace }, { signal: ctx.signal });
    } catch (err) {
      if (ctx.signal.aborted) {
        const reason: unknown = ctx.signal.reason;
        return { text: `Stopped: ${reason instanceof Error ? reason.message : String(reason)}`, isError: true };
      }
      if ((err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        return { text: `The ${tool} call ran out of memory (limit ${TOOL_THREAD_MEMORY_MB} MB per tool thread); narrow it (a smaller path, a glob, a limit).`, isError: true };
      }
      throw err;
    }
  }
}

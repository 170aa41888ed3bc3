// Runs one workspace git status in a thread of its own (./git-status-worker.ts), as BEAM bounds a process:
// a V8 memory limit, and a deadline at which the thread is terminated, which stops even synchronous work
// (an inflate, a hash). The calling thread only waits for one message. Statuses of the same root asked
// while one is running share it, so readers of the resource cannot start threads without bound.

import { Worker } from 'node:worker_threads';
import { type EntryMode, type ThreadEntry, threadEntry } from '../actors/thread-entry.ts';
import type { GitStatusReply, GitStatusTask } from './git-status-worker.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import type { BoundedSink } from '../log/stderr-sink.ts';
import { forwardThreadOutput } from '../log/thread-output.ts';
import { GIT_STATUS_DEADLINE_MS, GIT_STATUS_THREAD_MEMORY_MB } from '../limits.ts';

export const GIT_STATUS_CODE = { bundle: 'git-status-worker', source: 'src/tools/git-status-worker.ts', boot: 'src/actors/worker-boot.mjs' } as const;

export function gitStatusEntry(mode: EntryMode = 'auto'): ThreadEntry {
  return threadEntry(GIT_STATUS_CODE, mode);
}

/** What a status came to: its lines, or why it was skipped (shown as the note "git status skipped: …"). */
export type GitStatusOutcome = { readonly status: string } | { readonly skipped: string };

export interface GitStatusOptions {
  readonly clock?: Clock;
  readonly deadlineMs?: number;
  readonly memoryMb?: number;
  /** Smaller caps than src/limits.ts's, for tests. */
  readonly objectMaxBytes?: number;
  readonly maxInflatedBytes?: number;
  /** Where the thread's code comes from (default: dist/ when fresh, else the source). */
  readonly entry?: ThreadEntry;
  /** Where the thread's console output goes (default: the process's bounded stderr sink). */
  readonly output?: BoundedSink;
}

/**
 * Statuses running in this thread, by root: a second reader of the same root waits for the first's thread
 * (and takes its options). Bounded by the roots this thread serves: one workspace.
 */
const running = new Map<string, Promise<GitStatusOutcome>>();

/** The short status of `root` (whose `.git` is the real directory `gitdir`), computed in a bounded thread. */
export function gitStatusInThread(root: string, gitdir: string, options: GitStatusOptions = {}): Promise<GitStatusOutcome> {
  const key = `${root}\0${gitdir}`;
  const shared = running.get(key);
  if (shared) return shared;
  const started = runThread({ root, gitdir, objectMaxBytes: options.objectMaxBytes, maxInflatedBytes: options.maxInflatedBytes }, options).finally(() => running.delete(key));
  running.set(key, started);
  return started;
}

function runThread(task: GitStatusTask, options: GitStatusOptions): Promise<GitStatusOutcome> {
  const clock = options.clock ?? systemClock;
  const deadlineMs = options.deadlineMs ?? GIT_STATUS_DEADLINE_MS;
  const memoryMb = options.memoryMb ?? GIT_STATUS_THREAD_MEMORY_MB;
  const entry = options.entry ?? gitStatusEntry();
  return new Promise((resolve) => {
    let settled = false;
    let timer: unknown;
    let worker: Worker;
    try {
      worker = new Worker(entry.url, {
        workerData: { ...entry.workerData, ...task },
        execArgv: entry.execArgv,
        resourceLimits: { maxOldGenerationSizeMb: memoryMb },
        // A thread's console output must never reach stdout, which carries protocol messages only: both
        // streams go to the log's bounded stderr queue (log/thread-output.ts).
        stdout: true,
        stderr: true,
      });
    } catch (err) {
      // No thread could be started (its file is missing, or threads are exhausted): the resource still answers.
      resolve({ skipped: `no thread could be started for it (${err instanceof Error ? err.message : String(err)})` });
      return;
    }
    forwardThreadOutput(worker, options.output);
    const finish = (outcome: GitStatusOutcome): void => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      resolve(outcome);
      // Done or abandoned: either way nothing more is wanted from it.
      void worker.terminate();
    };
    timer = clock.setTimeout(() => finish({ skipped: `it passed its ${deadlineMs} ms deadline (GIT_STATUS_DEADLINE_MS)` }), deadlineMs, { unref: true });
    worker.on('message', (reply: GitStatusReply) => finish(reply.t === 'status' ? { status: reply.status } : { skipped: reply.reason }));
    worker.on('error', (err: NodeJS.ErrnoException) => {
      finish({
        skipped: err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `it ran out of memory (limit ${memoryMb} MB, GIT_STATUS_THREAD_MEMORY_MB)`
          : `its thread failed (${err.message.split('\n')[0]})`,
      });
    });
    worker.on('exit', (code) => finish({ skipped: `its thread exited (code ${code}) without an answer` }));
  });
}

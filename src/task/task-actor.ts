// The task actor: one per harness_task call, on a scheduler worker. It runs the pure task core — an
// event in (the model's reply, a tool's outcome, a stop), actions out to its host on the main thread,
// which carries them out (append entries, ask the model, run tools) and sends the outcomes back. It is
// started from the durable transcript, so a restarted incarnation continues from the last durable entry.

import type { Entry } from '../store/store.ts';
import { refuseTask, resumeTask, stepTask, type TaskAction, type TaskEvent, type TaskSetup, type TaskState } from './task-core.ts';
import type { Behaviour, BehaviourRef } from '../actors/behaviour.ts';

export const taskBehaviourRef: BehaviourRef = { module: 'builtin', export: 'task' };

export interface TaskActorArgs {
  readonly setup: TaskSetup;
  /**
   * The conversation's transcript as a task reads it (task-history.ts: in seq order, without the file
   * snapshots before its last model turn; its last `user` entry began this run).
   */
  readonly entries: readonly Entry[];
  /** Set when the history could not be loaded (past TASK_HISTORY_MAX_BYTES): the task records why and fails. */
  readonly refused?: string;
}

/** `go`: emit the actions the transcript calls for (sent once the host listens to this incarnation). */
export type TaskMessage = { readonly e: 'go' } | TaskEvent;

interface ActorState {
  readonly task: TaskState;
  /** The actions of the resumed state, emitted on `go`. */
  readonly initial: readonly TaskAction[] | null;
}

export const taskBehaviour: Behaviour<TaskActorArgs, ActorState, TaskMessage> = {
  init(args) {
    const resumed = args.refused === undefined ? resumeTask(args.setup, args.entries) : refuseTask(args.setup, args.refused);
    return { task: resumed.state, initial: resumed.actions };
  },

  handle(message, state, ctx) {
    if (message.e === 'go') {
      if (state.initial && state.initial.length > 0) ctx.emit(state.initial);
      return settle({ task: state.task, initial: null });
    }
    const step = stepTask(state.task, message);
    if (step.actions.length > 0) ctx.emit(step.actions);
    return settle({ task: step.state, initial: null });
  },
};

/** A finished task stops normally (its transient child spec is then not restarted). */
function settle(state: ActorState) {
  return state.task.waiting === 'done'
    ? { kind: 'stop' as const, reason: { kind: 'normal' as const }, state }
    : { kind: 'noreply' as const, state };
}

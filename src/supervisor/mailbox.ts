// A supervisor's mailbox: its operations (a child's exit, an API call, stop) run one at a time, in
// arrival order, as a gen_server handles one message at a time, so no two restarts interleave.

/**
 * Operations are chained promises, so the queue holds only what has been posted and not yet run.
 * It is bounded by its users: each child incarnation posts at most one exit, and API callers await
 * their answer; DynamicSupervisor counts pending starts against its maxChildren.
 */
export class Mailbox {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `op` after every operation posted before it has settled; settles as `op` does. */
  post<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op);
    // The tail only orders the next operation; `run`'s outcome, failure included, is the poster's.
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

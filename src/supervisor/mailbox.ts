// A supervisor's mailbox: its operations (a child's exit, an API call, stop) run one at a time, in
// arrival order, as a gen_server handles one message at a time, so no two restarts interleave.

/**
 * Operations are chained promises, so the queue holds only what has been posted and not yet run.
 * It is bounded by its users: each child incarnation posts at most one exit, and API callers await
 * their answer; DynamicSupervisor counts pending starts against its maxChildren.
 */
export class Mailbox {
  /** The last operation's end; the shared settled promise when nothing is queued (an idle mailbox holds nothing). */
  #tail: Promise<void> = IDLE;

  /** Runs `op` after every operation posted before it has settled; settles as `op` does. */
  post<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op);
    // The tail only orders the next operation; `run`'s outcome, failure included, is the poster's.
    const tail = run.then(idle, idle);
    this.#tail = tail;
    void tail.then(() => {
      if (this.#tail === tail) this.#tail = IDLE;
    });
    return run;
  }
}

const IDLE: Promise<void> = Promise.resolve();

function idle(): void {}

// Event callbacks that cannot end the process (DESIGN "One bad request kills one process, never the
// node"): a listener wrapped here has what it throws, or the promise it returns rejects with, caught,
// logged and answered the way the place that registered it says (a 400, a 502, a close code).

/**
 * Where a failure is reported: the operator's `Logger` fits, and so does any other room's log function
 * wrapped in this shape. Imports nothing of src/, so the actors and the store below the log use it too.
 */
export interface FailureLog {
  log(level: 'error', message: string, data: Record<string, unknown>): void;
}

/**
 * What to do when the listener failed, with the listener's own arguments: answer the peer if it still can
 * be answered. A throw here is logged too, and goes no further.
 */
export type FailureAnswer<A extends unknown[]> = (error: unknown, ...args: A) => void;

/**
 * `listener` as an event listener whose failures stay here. `where` names the callback in the log line
 * (`http request`, `forward reply`); `answer` (default: none, the log line is all) answers the peer.
 */
export function guarded<A extends unknown[]>(logger: FailureLog, where: string, listener: (...args: A) => unknown, answer?: FailureAnswer<A>): (...args: A) => void {
  return (...args: A): void => {
    const failed = (error: unknown): void => {
      logger.log('error', `${where}: the callback failed`, { error: describeError(error) });
      if (answer === undefined) return;
      try {
        answer(error, ...args);
      } catch (again) {
        logger.log('error', `${where}: answering the failure failed too`, { error: describeError(again) });
      }
    };
    try {
      const result = listener(...args);
      if (isThenable(result)) result.then(undefined, failed);
    } catch (error) {
      failed(error);
    }
  };
}

/** An error as one log field: its stack when it has one (the logger escapes its newlines and caps it). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

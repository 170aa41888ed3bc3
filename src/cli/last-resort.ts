// The process's policy for an exception or a rejection nothing caught — a bug, since every event callback
// the server registers is guarded (src/log/guarded.ts): say so in the log, give the work in flight a
// bounded chance to be answered with an error, then exit non-zero. Never silent, never carrying on.

import { describeError } from '../log/guarded.ts';
import type { Logger } from '../log/logger.ts';
import { stderrSink } from '../log/stderr-sink.ts';
import { passes } from '../mcp/logging-level.ts';
import { UNCAUGHT_EXIT_GRACE_MS } from '../limits.ts';

/** The message of the policy's log line (tests assert no input reaches it). */
export const UNCAUGHT_MESSAGE = 'uncaught failure: answering what is in flight, then exiting';

export interface LastResort {
  /** What answers the work in flight (the server's drain); replaced as the process gets further. */
  onFailure(stop: () => Promise<unknown>): void;
  /** Removes the process handlers (the command is ending normally). */
  uninstall(): void;
}

export interface LastResortOptions {
  readonly exit?: (code: number) => void;
  readonly graceMs?: number;
  readonly target?: Pick<NodeJS.Process, 'on' | 'off'>;
}

export function installLastResort(logger: Logger, options: LastResortOptions = {}): LastResort {
  const { exit = (code: number) => process.exit(code), graceMs = UNCAUGHT_EXIT_GRACE_MS, target = process } = options;
  let stop: () => Promise<unknown> = async () => undefined;
  let failing = false;
  const onFailure = (kind: 'exception' | 'rejection') => (error: unknown): void => {
    const data = { kind, error: describeError(error) };
    // The operator must read this whatever --log-level says. Not written synchronously, though it is the
    // process's last word: a synchronous write to a stderr nobody reads would block the exit below for
    // good. It goes through the log's bounded queue like any record: if that is full, nobody is reading.
    if (passes('critical', logger.level)) logger.log('critical', UNCAUGHT_MESSAGE, data);
    else stderrSink().write(`super-pi: ${UNCAUGHT_MESSAGE} ${JSON.stringify(data)}\n`);
    if (failing) return;
    failing = true;
    const deadline = setTimeout(() => exit(1), graceMs);
    deadline.unref();
    void Promise.resolve().then(stop).then(
      () => exit(1),
      (err: unknown) => {
        logger.log('error', 'answering the work in flight failed too', { error: describeError(err) });
        exit(1);
      },
    );
  };
  const onException = onFailure('exception');
  const onRejection = onFailure('rejection');
  target.on('uncaughtException', onException);
  target.on('unhandledRejection', onRejection);
  return {
    onFailure(next) {
      stop = next;
    },
    uninstall() {
      target.off('uncaughtException', onException);
      target.off('unhandledRejection', onRejection);
    },
  };
}

// A task's last status write, tried again while the store refuses it. A run that ends while the store
// cannot be written (the disk full, the database unreachable) answers its caller at once, but its
// conversation would read `running` in the store for as long as this process lives: a 2026-07-28 client
// polling `tasks/get` would wait for a task that nothing runs, and no takeover takes a live process's task.
// So the write is made again, every TASK_STATUS_RETRY_MS, until it takes; a newer claim of the conversation
// (the write is fenced), the store's close or TASK_STATUS_RETRIES attempts end the retries.

import type { Clock } from '../time/clock.ts';
import type { Logger } from '../log/logger.ts';
import { StoreError } from '../store/errors.ts';
import { TASK_STATUS_RETRIES, TASK_STATUS_RETRY_MS } from '../limits.ts';

export interface StatusRetry {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly conversationId: string;
  /** The status write: the same call that failed. */
  readonly write: () => Promise<void>;
  /** Default TASK_STATUS_RETRY_MS and TASK_STATUS_RETRIES. */
  readonly retryMs?: number;
  readonly retries?: number;
}

/** A failure no later attempt can mend: the conversation was claimed since (fenced), or the store closed. */
const final = (err: unknown): boolean => err instanceof StoreError && (err.code === 'fenced' || err.code === 'closed' || err.code === 'not_found');

/** Tries `write` again on the clock until it succeeds or cannot; resolves when it stopped, with whether it was written. */
export function retryStatusWrite(retry: StatusRetry): Promise<boolean> {
  const retries = retry.retries ?? TASK_STATUS_RETRIES;
  const retryMs = retry.retryMs ?? TASK_STATUS_RETRY_MS;
  return new Promise((resolve) => {
    let attempt = 0;
    const next = (): void => {
      retry.clock.setTimeout(() => void attemptOnce(), retryMs, { unref: true });
    };
    const attemptOnce = async (): Promise<void> => {
      attempt++;
      try {
        await retry.write();
        retry.logger.log('info', 'a task\'s status was written after the store refused it', { conversation: retry.conversationId, attempts: attempt });
        resolve(true);
      } catch (err) {
        if (final(err) || attempt >= retries) {
          if (!final(err)) retry.logger.log('error', 'a task\'s status could not be written; its conversation reads running until this process restarts', { conversation: retry.conversationId, attempts: attempt, error: (err as Error).message });
          resolve(false);
          return;
        }
        next();
      }
    };
    next();
  });
}

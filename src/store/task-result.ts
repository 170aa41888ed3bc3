// How both stores keep what a harness task's last run finished with (`TaskResult`, store.ts): JSON text in
// the conversation row's `task_result`, written with the status, so `tasks/get` (and a task status
// notification) of a finished task reads that one row instead of replaying the transcript.

import { StoreError } from './errors.ts';
import type { TaskResult } from './store.ts';
import { serializePayload } from './store-checks.ts';

/** The stored form of `result` (null: none); refused as `invalid_argument` when it is not a TaskResult, `payload_too_large` past an entry's limit. */
export function encodeTaskResult(result: TaskResult | undefined, maxPayloadBytes: number): string | null {
  if (result === undefined) return null;
  if (!isTaskResult(result)) throw new StoreError('invalid_argument', 'a task result is { text: string, isError: boolean, turns: integer ≥ 0, toolCalls: integer ≥ 0, parkedAt?: integer ≥ 0 }');
  const parked = result.parkedAt === undefined ? {} : { parkedAt: result.parkedAt };
  return serializePayload({ text: result.text, isError: result.isError, turns: result.turns, toolCalls: result.toolCalls, ...parked }, maxPayloadBytes);
}

/** The stored result, or null when there is none or it cannot be read back (the transcript then answers). */
export function decodeTaskResult(json: string | null | undefined): TaskResult | null {
  if (json === null || json === undefined) return null;
  try {
    const value: unknown = JSON.parse(json);
    return isTaskResult(value) ? value : null;
  } catch {
    // Not JSON: no super-pi wrote it; the transcript is the record, so it answers instead.
    return null;
  }
}

function isTaskResult(value: unknown): value is TaskResult {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return typeof r.text === 'string' && typeof r.isError === 'boolean' && count(r.turns) && count(r.toolCalls) && (r.parkedAt === undefined || count(r.parkedAt));
}

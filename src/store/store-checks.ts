// The argument checks and row decoding every ConversationStore backend shares, so that SQLite and
// PostgreSQL refuse the same calls with the same StoreError codes and messages.

import { StoreError } from './errors.ts';
import { MAX_CHECKPOINT_BYTES } from '../limits.ts';
import { CONVERSATION_STATUSES, type ConversationStatus, ENTRY_TYPES, type EntryType, type NewConversation } from './store.ts';

/** A page size: `fallback` when absent, refused when not a positive whole number, lowered to `max`. */
export function pageLimit(value: number | undefined, fallback: number, max: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new StoreError('invalid_argument', `${name} must be a positive whole number, not ${value}`);
  return Math.min(value, max);
}

export function checkAfterSeq(afterSeq: number): number {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new StoreError('invalid_argument', `afterSeq must be a whole number ≥ 0, not ${afterSeq}`);
  return afterSeq;
}

/** A page's byte bound (`EntriesOptions.maxBytes`): null when absent, refused when not a positive whole number. */
export function checkMaxBytes(maxBytes: number | undefined): number | null {
  if (maxBytes === undefined) return null;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new StoreError('invalid_argument', `maxBytes must be a positive whole number, not ${maxBytes}`);
  return maxBytes;
}

/** A read's type filter (`EntriesOptions.types`): null when absent, refused when empty or naming an unknown type. */
export function checkEntryTypes(types: readonly EntryType[] | undefined): readonly EntryType[] | null {
  if (types === undefined) return null;
  if (!Array.isArray(types) || types.length === 0) throw new StoreError('invalid_argument', 'types must name one entry type at least');
  for (const type of types) checkEntryType(type);
  return types;
}

export function checkNewConversation(input: NewConversation): void {
  for (const field of ['principal', 'sessionId', 'harness'] as const) {
    if (typeof input[field] !== 'string' || input[field] === '') throw new StoreError('invalid_argument', `${field} must be a non-empty string`);
  }
}

export function checkStatus(status: ConversationStatus): void {
  if (!CONVERSATION_STATUSES.includes(status)) throw new StoreError('invalid_argument', `unknown status "${String(status)}"; one of ${CONVERSATION_STATUSES.join(', ')}`);
}

export function checkEntryType(type: EntryType): void {
  if (!ENTRY_TYPES.includes(type)) throw new StoreError('invalid_argument', `unknown entry type "${String(type)}"; one of ${ENTRY_TYPES.join(', ')}`);
}

/** The payload as the JSON text the store keeps; refused when it is not JSON or over `maxPayloadBytes`. */
export function serializePayload(payload: unknown, maxPayloadBytes: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (cause) {
    throw new StoreError('invalid_argument', `the payload is not serializable as JSON: ${String(cause)}`, { cause });
  }
  if (json === undefined) throw new StoreError('invalid_argument', `the payload must be a JSON value, not ${typeof payload}`);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxPayloadBytes) throw new StoreError('payload_too_large', `the payload is ${bytes} bytes of JSON, more than the ${maxPayloadBytes} one entry may hold`);
  return json;
}

export function checkMaxPayloadBytes(maxPayloadBytes: number): number {
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes <= 0) throw new StoreError('invalid_argument', `maxPayloadBytes must be a positive whole number, not ${maxPayloadBytes}`);
  return maxPayloadBytes;
}

/** Narrows a stored string to one of the values the store writes. */
export function known<T extends string>(values: readonly T[], value: string, what: string): T {
  const found = values.find((v) => v === value);
  if (found === undefined) throw new StoreError('corrupt', `${what} is "${value}", which no super-pi writes`);
  return found;
}

// A lone surrogate half: JavaScript strings may hold one, UTF-8 cannot, so a driver replaces it with
// U+FFFD on the way in — and two different strings would then name the same row.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when `value` survives a round trip through a UTF-8 text column unchanged: no NUL (PostgreSQL's
 * text cannot hold it) and no lone surrogate. A key that fails this names no row that could exist.
 */
export function storableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** A lease epoch as a write names it: a whole number ≥ 0 (0: a conversation never claimed). */
export function checkEpoch(epoch: number): number {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new StoreError('invalid_argument', `an epoch is a whole number ≥ 0, not ${epoch}`);
  return epoch;
}

export function checkSessionKey(sessionId: string, principal: string): void {
  if (typeof sessionId !== 'string' || sessionId === '' || !storableText(sessionId)) throw new StoreError('invalid_argument', 'a session id is a non-empty string without NUL or a lone surrogate');
  if (typeof principal !== 'string' || principal === '' || !storableText(principal)) throw new StoreError('invalid_argument', 'a principal is a non-empty string without NUL or a lone surrogate');
}

export function checkCheckpoint(bytes: Uint8Array): void {
  if (!(bytes instanceof Uint8Array)) throw new StoreError('invalid_argument', 'a checkpoint is bytes (a Uint8Array)');
  if (bytes.byteLength > MAX_CHECKPOINT_BYTES) throw new StoreError('payload_too_large', `the checkpoint is ${bytes.byteLength} bytes, more than the ${MAX_CHECKPOINT_BYTES} a session may keep`);
}

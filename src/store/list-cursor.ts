// The opaque cursor of conversation lists: the (updatedAt, id) of the last item of a page, so the next
// page starts strictly after it (keyset pagination: no offset to skip, stable while rows are added).

import { MAX_LIST_CURSOR_LENGTH } from '../limits.ts';

export interface ListPosition {
  readonly updatedAt: number;
  readonly id: string;
}

const PREFIX = 'c1.';
/** A cursor longer than this was not made here; refused before it is decoded. */
export const MAX_CURSOR_LENGTH = MAX_LIST_CURSOR_LENGTH;

export function encodeListCursor(position: ListPosition): string {
  return PREFIX + Buffer.from(JSON.stringify([position.updatedAt, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor encodes, or null when the string is not a cursor this module made. */
export function decodeListCursor(cursor: string): ListPosition | null {
  if (cursor.length > MAX_CURSOR_LENGTH || !cursor.startsWith(PREFIX)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    // Not JSON after decoding: a forged or damaged cursor, which the caller reports as invalid.
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const updatedAt: unknown = value[0];
  const id: unknown = value[1];
  if (typeof updatedAt !== 'number' || !Number.isSafeInteger(updatedAt) || typeof id !== 'string') return null;
  return { updatedAt, id };
}

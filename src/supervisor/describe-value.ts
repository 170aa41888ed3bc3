// How validators quote an offending value in an error: short, unambiguous, never throwing.

/** Longest rendering of a value in an error message; a huge object must not make a huge message. */
const MAX_VALUE_CHARS = 60;

/** `"always"` for strings, `-1`, `undefined`, `a function`, `null`, `{"a":1}`… cut at MAX_VALUE_CHARS. */
export function describeValue(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch (error) {
    // A cycle cannot be serialised; the kind of value is still worth naming in the message.
    text = `${Array.isArray(value) ? 'an array' : 'an object'} (${error instanceof Error ? error.message : 'unserialisable'})`;
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

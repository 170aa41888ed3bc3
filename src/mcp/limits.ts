// The bounds on what one caller can make the core hold or do: every incoming message's nesting and
// batch length, and every structure a session keeps. A session's memory is bounded by these, not by
// how much its client sends; each limit is named in the error that enforces it.

/**
 * True when `value` nests objects/arrays deeper than `max`. The walk recurses at most `max + 1` levels
 * whatever the value's depth (it stops below `max`), so any value is safe to ask about; it allocates
 * nothing (every request is walked: a stack of pairs and an array of values per object was garbage).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  return typeof value === 'object' && value !== null && deeper(value, 1, max);
}

function deeper(node: object, depth: number, max: number): boolean {
  if (depth > max) return true;
  if (Array.isArray(node)) {
    for (const child of node as unknown[]) if (typeof child === 'object' && child !== null && deeper(child, depth + 1, max)) return true;
    return false;
  }
  for (const key in node) {
    if (!Object.hasOwn(node, key)) continue;
    const child: unknown = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && deeper(child, depth + 1, max)) return true;
  }
  return false;
}

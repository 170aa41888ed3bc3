// The bounds on what one caller can make the core hold or do: every incoming message's nesting and
// batch length, and every structure a session keeps. A session's memory is bounded by these, not by
// how much its client sends; each limit is named in the error that enforces it.

/** A value whose nesting is already known (a kept `_meta`, meta-cache.ts): the walk does not enter it. */
export interface KnownNesting {
  readonly value: object;
  /** Its levels of objects and arrays, itself included (`{}` is 1, `{"a":[]}` is 2). */
  readonly levels: number;
}

/**
 * True when `value` nests objects/arrays deeper than `max`. The walk recurses at most `max + 1` levels
 * whatever the value's depth (it stops below `max`), so any value is safe to ask about; it allocates
 * nothing (every request is walked: a stack of pairs and an array of values per object was garbage).
 * `known`: a value counted by its known levels wherever the walk meets it, not walked again (a 2026-07-28
 * request's kept `_meta` was ~1.5k instructions of its walk, BENCHMARKS.md stop 42).
 */
export function nestsDeeperThan(value: unknown, max: number, known?: KnownNesting): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (known === undefined) return deeper(value, 1, max, null, 0);
  return value === known.value ? known.levels > max : deeper(value, 1, max, known.value, known.levels);
}

function deeper(node: object, depth: number, max: number, skip: object | null, skipLevels: number): boolean {
  if (depth > max) return true;
  if (Array.isArray(node)) {
    for (const child of node as unknown[]) if (typeof child === 'object' && child !== null && nests(child, depth + 1, max, skip, skipLevels)) return true;
    return false;
  }
  for (const key in node) {
    if (!Object.hasOwn(node, key)) continue;
    const child: unknown = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && nests(child, depth + 1, max, skip, skipLevels)) return true;
  }
  return false;
}

/** Whether `child`, at level `depth`, reaches past `max`: by its known levels when it is `skip`, else walked. */
function nests(child: object, depth: number, max: number, skip: object | null, skipLevels: number): boolean {
  return child === skip ? depth + skipLevels - 1 > max : deeper(child, depth, max, skip, skipLevels);
}

// The bounds on what one caller can make the core hold or do: every incoming message's nesting and
// batch length, and every structure a session keeps. A session's memory is bounded by these, not by
// how much its client sends; each limit is named in the error that enforces it.

/** True when `value` nests objects/arrays deeper than `max`. Iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [object, number][] = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top;
    if (depth > max) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

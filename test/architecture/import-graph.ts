// The import graph of src/, read from the text of each file: a plain scan of `import … from '…'`,
// `export … from '…'`, `import '…'` and `import('…')`, enough for a codebase that writes its imports
// the one way. Not a *.test.ts file.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface ImportEdge {
  readonly from: string;
  /** A path relative to the repository root for a relative import; the bare specifier otherwise. */
  readonly to: string;
  /** `node:*` or an npm package. */
  readonly external: boolean;
  /** `import type …`, `export type …`, or every named specifier marked `type`: erased at build time. */
  readonly typeOnly: boolean;
}

/**
 * `import`/`export` with an optional clause (named, default, namespace; may span lines) and its
 * specifier, or a dynamic `import('…')` with a literal specifier. Comment lines are blanked first.
 */
const STATIC = /^[ \t]*(import|export)\s+(type\s+)?([\w*{}\s,$]*?\s*from\s*)?(['"])([^'"\n]+)\4/gm;
const DYNAMIC = /\bimport\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** The imports of one file's text; `file` is its path relative to the repository root. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const code = text.replace(/^\s*\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
  const edges: ImportEdge[] = [];
  for (const m of code.matchAll(STATIC)) {
    const clause = m[3] ?? '';
    // `import { type A, type B } from` is erased too; `import {} from` or a bare `import '…'` is not.
    const names = /\{([^}]*)\}/.exec(clause)?.[1]?.split(',').map((s) => s.trim()).filter((s) => s !== '') ?? [];
    const allTyped = names.length > 0 && !/^\s*[\w$]+\s*,/.test(clause.replace(/^\s+/, '')) && names.every((n) => n.startsWith('type '));
    edges.push(edge(file, m[5] as string, m[2] !== undefined || allTyped));
  }
  for (const m of code.matchAll(DYNAMIC)) edges.push(edge(file, m[2] as string, false));
  return edges;
}

function edge(from: string, specifier: string, typeOnly: boolean): ImportEdge {
  if (!specifier.startsWith('.')) return { from, to: specifier, external: true, typeOnly };
  return { from, to: path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)), external: false, typeOnly };
}

/** Every `.ts`/`.mjs` file under `dir` (relative to `root`), sorted. */
export function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(root, rel));
    else if (/\.(ts|mts|mjs)$/.test(e.name)) out.push(rel);
  }
  return out.sort();
}

export function readGraph(root: string, dir: string): ImportEdge[] {
  return sourceFiles(root, dir).flatMap((f) => importsOf(f, readFileSync(path.join(root, f), 'utf8')));
}

/**
 * The import cycles of a graph: each strongly connected component of more than one file (or a file that
 * imports itself), as one cycle through it. Tarjan's algorithm, iterative so depth does not matter.
 */
export function cyclesOf(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.external) continue;
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    if (!next.has(e.to)) next.set(e.to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter); low.set(start, counter); counter++;
    stack.push(start); onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; i: number };
      const succ = next.get(top.node) as string[];
      if (top.i < succ.length) {
        const w = succ[top.i++] as string;
        if (!index.has(w)) {
          index.set(w, counter); low.set(w, counter); counter++;
          stack.push(w); onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.node, Math.min(low.get(top.node) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        for (;;) {
          const w = stack.pop() as string;
          onStack.delete(w);
          component.push(w);
          if (w === top.node) break;
        }
        const selfLoop = component.length === 1 && (next.get(top.node) as string[]).includes(top.node);
        if (component.length > 1 || selfLoop) components.push(cycleWithin(component, next));
      }
    }
  }
  return components;
}

/** One cycle that stays inside a strongly connected component, from its first file back to it, for the message. */
function cycleWithin(component: readonly string[], next: ReadonlyMap<string, string[]>): string[] {
  const inside = new Set(component);
  const first = [...component].sort()[0] as string;
  // Breadth-first from `first` to any file that imports `first`: the shortest way round.
  const cameFrom = new Map<string, string>([[first, first]]);
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const w of next.get(node) ?? []) {
      if (w === first) {
        const path = [node];
        for (let at = node; at !== first; at = cameFrom.get(at) as string) path.unshift(cameFrom.get(at) as string);
        return [...path, first];
      }
      if (inside.has(w) && !cameFrom.has(w)) {
        cameFrom.set(w, node);
        queue.push(w);
      }
    }
  }
  return [...component];
}

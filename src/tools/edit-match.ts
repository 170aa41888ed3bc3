// Finds where each of `edit`'s oldTexts occurs in a file, all of them in one pass (an Aho–Corasick
// automaton over UTF-16 code units), counting each only up to two: a second occurrence already refuses it.
// Work is O(file length + total oldText length), whatever the number of edits or how often they occur.

/** What one needle's scan found: how often it occurs (0, 1, or 2 meaning "two or more") and where first. */
export interface NeedleHits {
  readonly count: 0 | 1 | 2;
  /** Index of the first occurrence, -1 when there is none. */
  readonly first: number;
}

const NONE = -1;
const ROOT = 0;
/** Code units a UTF-16 string can hold: the root's transitions are a dense table of this size. */
const ALPHABET = 0x10000;

/** The trie with its failure links. Built with one inline edge per node and a Map for the rest, then
 * packed: each node's edges sorted in one typed array, searched by bisection while scanning. */
class Automaton {
  readonly #edgeChar: number[] = [NONE];
  readonly #edgeNode: number[] = [NONE];
  readonly #moreEdges = new Map<number, Map<number, number>>();
  readonly #depth: number[] = [0];
  readonly #terminal: boolean[] = [false];
  /** The node where needle i ends. */
  readonly needleNode: number[] = [];
  /** Node i's edges are codes[edgeFrom[i] .. edgeFrom[i + 1]), sorted, leading to targets[...]. */
  edgeFrom = new Int32Array(0);
  codes = new Uint16Array(0);
  targets = new Int32Array(0);
  readonly rootNext = new Int32Array(ALPHABET).fill(ROOT);
  depth = new Int32Array(0);
  fail = new Int32Array(0);
  /** The nearest node on the failure chain, itself included, where a needle ends; NONE when none. */
  output = new Int32Array(0);

  get size(): number { return this.#depth.length; }

  add(needle: string): void {
    let node = ROOT;
    for (let i = 0; i < needle.length; i++) {
      const code = needle.charCodeAt(i);
      let child = this.#edgeChar[node] === code ? this.#edgeNode[node] as number : this.#moreEdges.get(node)?.get(code) ?? NONE;
      if (child === NONE) {
        child = this.#depth.length;
        this.#depth.push(i + 1);
        this.#edgeChar.push(NONE);
        this.#edgeNode.push(NONE);
        this.#terminal.push(false);
        if (this.#edgeChar[node] === NONE) {
          this.#edgeChar[node] = code;
          this.#edgeNode[node] = child;
        } else {
          let more = this.#moreEdges.get(node);
          if (more === undefined) this.#moreEdges.set(node, (more = new Map()));
          more.set(code, child);
        }
      }
      node = child;
    }
    this.#terminal[node] = true;
    this.needleNode.push(node);
  }

  /** Packs the edges, then sets failure and output links breadth-first (a failure target is shallower, so settled first). */
  link(): void {
    const size = this.size;
    this.depth = Int32Array.from(this.#depth);
    this.edgeFrom = new Int32Array(size + 1);
    this.codes = new Uint16Array(size - 1);
    this.targets = new Int32Array(size - 1);
    let edges = 0;
    for (let node = 0; node < size; node++) {
      this.edgeFrom[node] = edges;
      const list: [number, number][] = [];
      if (this.#edgeChar[node] !== NONE) list.push([this.#edgeChar[node] as number, this.#edgeNode[node] as number]);
      for (const edge of this.#moreEdges.get(node) ?? []) list.push(edge);
      if (list.length > 1) list.sort((a, b) => a[0] - b[0]);
      for (const [code, child] of list) {
        this.codes[edges] = code;
        this.targets[edges++] = child;
        if (node === ROOT) this.rootNext[code] = child;
      }
    }
    this.edgeFrom[size] = edges;
    this.#moreEdges.clear();

    this.fail = new Int32Array(size);
    this.output = new Int32Array(size).fill(NONE);
    const queue = new Int32Array(size);
    let head = 0;
    let tail = 0;
    queue[tail++] = ROOT;
    while (head < tail) {
      const parent = queue[head++] as number;
      for (let e = this.edgeFrom[parent] as number; e < (this.edgeFrom[parent + 1] as number); e++) {
        const code = this.codes[e] as number;
        const child = this.targets[e] as number;
        let target = ROOT;
        if (parent !== ROOT) {
          let f = this.fail[parent] as number;
          while ((target = this.step(f, code)) === NONE) f = this.fail[f] as number;
        }
        this.fail[child] = target;
        this.output[child] = this.#terminal[child] ? child : this.output[target] as number;
        queue[tail++] = child;
      }
    }
  }

  step(node: number, code: number): number {
    return node === ROOT ? this.rootNext[code] as number : childOf(this.edgeFrom, this.codes, this.targets, node, code);
  }
}

/** The child of `node` (not the root) along `code`; NONE means "follow the failure link". */
function childOf(edgeFrom: Int32Array, codes: Uint16Array, targets: Int32Array, node: number, code: number): number {
  let low = edgeFrom[node] as number;
  let high = edgeFrom[node + 1] as number;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const at = codes[mid] as number;
    if (at === code) return targets[mid] as number;
    if (at < code) low = mid + 1;
    else high = mid;
  }
  return NONE;
}

/**
 * Where each needle (non-empty) occurs in `haystack`, overlapping occurrences included. Equal needles
 * get equal answers. A needle is reported at most twice: past that its node is skipped by the output
 * chain (a union-find over "next needle still counting"), so a needle that occurs everywhere costs no
 * more than one that occurs twice.
 */
export function findNeedles(haystack: string, needles: readonly string[]): NeedleHits[] {
  const automaton = new Automaton();
  for (const needle of needles) {
    if (needle.length === 0) throw new Error('findNeedles: an empty needle matches everywhere');
    automaton.add(needle);
  }
  automaton.link();
  const { fail, output, depth, rootNext, edgeFrom, codes, targets } = automaton;
  const counts = new Uint8Array(automaton.size);
  const firstEnd = new Int32Array(automaton.size).fill(NONE);
  // For a node where a needle ends: itself while it still counts, else a step towards the next one
  // down its output chain that does (path-compressed on every lookup).
  const live = new Int32Array(automaton.size);
  for (let i = 0; i < live.length; i++) live[i] = i;
  const find = (from: number): number => {
    let root = from;
    while (root !== NONE && live[root] !== root) root = live[root] as number;
    for (let x = from; x !== NONE && live[x] !== x; ) {
      const up = live[x] as number;
      live[x] = root;
      x = up;
    }
    return root;
  };

  let state = ROOT;
  const length = haystack.length;
  for (let i = 0; i < length; i++) {
    const code = haystack.charCodeAt(i);
    let next = NONE;
    while (state !== ROOT && (next = childOf(edgeFrom, codes, targets, state, code)) === NONE) state = fail[state] as number;
    state = state === ROOT ? rootNext[code] as number : next;
    const out = output[state] as number;
    if (out === NONE) continue;
    for (let hit = find(out); hit !== NONE; ) {
      const below = output[fail[hit] as number] as number;
      if (counts[hit] === 0) {
        counts[hit] = 1;
        firstEnd[hit] = i + 1;
      } else {
        counts[hit] = 2;
        live[hit] = below;
      }
      hit = find(below);
    }
  }
  return automaton.needleNode.map((node) => {
    const count = counts[node] as 0 | 1 | 2;
    return { count, first: count === 0 ? NONE : (firstEnd[node] as number) - (depth[node] as number) };
  });
}

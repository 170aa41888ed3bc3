// The random values the fuzz generators (fuzz.ts, 2025 era; fuzz-modern.ts, 2026-07-28) draw from: a
// seeded generator, strings, ids and JSON values that include Object.prototype's names.

/** mulberry32: small, fast, good enough to pick fuzz cases, and replayable from its seed. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    this.#s = (this.#s + 0x6d2b79f5) >>> 0;
    let t = this.#s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Every own key of Object.prototype, and more names a table keyed by input could trip on. */
export const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'constructor.prototype', '__proto__'];
/** Tools that only read: a fuzz run must not run commands or write in the workspace. */
export const READ_TOOLS = ['read', 'ls', 'find', 'grep'];
export const PATHS = ['README.md', 'src', 'src/greet.ts', '.', '..', '../outside/secret.txt', '/etc/passwd', 'no-such-file', 'a.txt/', '\u0000', 'src/../../x', ''];

export function randomString(rng: Rng, max = 24): string {
  const n = rng.int(max);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    s += r < 0.7 ? String.fromCharCode(0x20 + rng.int(95)) : r < 0.9 ? String.fromCharCode(rng.int(0x800)) : rng.pick(['\u2028', '\ud83d\ude00', '\ud800', '"', '\\', '\n']);
  }
  return s;
}

export function randomId(rng: Rng): unknown {
  switch (rng.int(10)) {
    case 0: return Number.MAX_SAFE_INTEGER + rng.int(1000);
    case 1: return -rng.int(1e9);
    case 2: return rng.next() * 1e308;
    case 3: return randomString(rng, 64);
    case 4: return 'x'.repeat(rng.int(4000));
    case 5: return null;
    case 6: return rng.pick([true, {}, [], 1.5]);
    default: return rng.int(50);
  }
}

/** A JSON value, nested at most `depth` levels (deep nesting is issue 10 item 8's own test). */
export function randomValue(rng: Rng, depth: number): unknown {
  const r = rng.int(depth > 0 ? 9 : 6);
  switch (r) {
    case 0: return null;
    case 1: return rng.chance(0.5);
    case 2: return rng.next() * 2 ** rng.int(80) * (rng.chance(0.5) ? 1 : -1);
    case 3: return randomString(rng);
    case 4: return rng.int(100);
    case 5: return rng.pick(PROTOTYPE_NAMES);
    case 6: return Array.from({ length: rng.int(5) }, () => randomValue(rng, depth - 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--) o[rng.chance(0.2) ? rng.pick(PROTOTYPE_NAMES) : randomString(rng, 10)] = randomValue(rng, depth - 1);
      return o;
    }
  }
}

export function deep(levels: number): unknown {
  let v: unknown = {};
  for (let i = 0; i < levels; i++) v = { a: [v] };
  return v;
}

/**
 * `o[key] = value` as an own, enumerable property even for `__proto__` (an assignment would set the
 * prototype, and JSON.stringify would leave the key out): the server must meet such keys in the text.
 */
export function putOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

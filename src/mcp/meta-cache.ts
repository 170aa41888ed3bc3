// Parsing a message's text, with its `params._meta` taken from a small cache when the text carries one
// already seen: a 2026-07-28 client repeats its whole context there, byte for byte, on every request, and
// that text is most of the line (issue 24 item 6). The result always equals `JSON.parse(text)`.
//
// Why a hit means the same thing as the whole parse. Let the line be O = A + C + B, where A ends with
// `"_meta":`, C is a kept text (compact JSON of an object, `{`…`}`, with no `\u0000` in it) and V its
// parse. We parse M = A + S + B instead, S being the string literal `"\u0000"`, and accept only when O
// holds no `\u0000` (six characters) anywhere and M parses to an object whose `params` is an object whose
// own `_meta` is the one-character string U+0000.
// 1. That character has one spelling in JSON, `"\u0000"` (it must be escaped, `\u` takes hex digits, and
//    0000 has no letters to change case). Every `\u0000` in M lies inside S: O has none, and neither can
//    straddle S's quotes (it holds no `"`). So the string token that became `params._meta` is S, at the
//    position where C was: that position starts a value in M, the value of params' last `_meta` member
//    (the one JSON.parse keeps) of the top-level `params` member it keeps.
// 2. JSON is read left to right, one state per prefix: A leaves the reader where M has it, expecting a
//    value. C is one complete value; after it the reader is where it is after S (a value just ended, in
//    the same stack of open objects). B then reads as in M, to the same end. No token can merge across
//    the cuts: A ends with `:`, C with `}`, S with `"`. So O is valid JSON whenever M is, and it parses to
//    M's value with that one member's value V instead of S, which is what we return (the key keeps its
//    place). A `_meta` inside `arguments`, a string holding `"_meta":{…}`, a duplicate key, a batch: any of
//    them either leaves `params._meta` something other than U+0000, or fails a check, and the line is
//    parsed whole.
// The values are shared by every request and connection of the thread, so they are deep-frozen; nothing
// downstream writes a request's `_meta` (the core does not change its input: modern.ts `lastContext`
// shares them already).

import type { KnownNesting } from './limits.ts';
import { messageTextToParse } from './text-depth.ts';
import { MAX_META_CACHE_ENTRIES, MAX_META_CACHE_TEXT_LENGTH } from '../limits.ts';

const KEY = '"_meta":';
/** The placeholder: a string literal whose only spelling is this, holding U+0000. */
const PLACEHOLDER = '"\\u0000"';
/** The placeholder and the two braces that close `params` and the message, for a kept text at the end of its line. */
const PLACEHOLDER_AT_END = `${PLACEHOLDER}}}`;
const PLACEHOLDER_VALUE = '\u0000';
/** The escape inside the placeholder, which a line must not hold anywhere else. */
const ESCAPE = '\\u0000';
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value and everything in it made read-only (JSON values only: no cycles, depth bounded by its text). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** A JSON value's levels of objects and arrays, itself included (0 for a scalar). Recurses as deep as the value nests. */
function levelsOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const member of Object.values(value)) deepest = Math.max(deepest, levelsOf(member));
  return deepest + 1;
}

/**
 * A lower bound of the length of `value`'s JSON text, walked only until it passes `budget` (then some number
 * past it): the work and the depth of the walk are bounded by `budget`, whatever the value holds.
 */
export function leastTextLength(value: unknown, budget: number): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return 1;
  // The opening bracket, then each member and the comma or bracket after it: `[]` and `{}` are 2.
  let length = 1;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (length > budget) return length;
      length += leastTextLength(item, budget - length) + 1;
    }
    return Math.max(length, 2);
  }
  for (const key in value) {
    if (length > budget) return length;
    // `"key":` and the comma or brace after the value.
    length += key.length + 4 + leastTextLength((value as Record<string, unknown>)[key], budget - length - key.length - 4);
  }
  return Math.max(length, 2);
}

/** Kept `_meta` texts and their frozen parses, oldest first; at most `maxEntries`, each at most `maxTextLength` characters. */
export class MetaCache {
  // Arrays, not a Map: the look-up walks them by index (a Map's entry iterator allocated on every line).
  readonly #texts: string[] = [];
  /** Each kept text after the key, `"_meta":{…}`, as one flat string: the end-of-line look-up compares it with one slice. */
  readonly #keyed: string[] = [];
  readonly #values: unknown[] = [];
  /** Each kept value with its levels (the depth walk counts a kept `_meta` by them instead of walking it). */
  readonly #nestings: KnownNesting[] = [];
  /** The shortest kept text's length: a shorter line cannot carry one (a 2025 line is shorter than any). */
  #shortest = Number.POSITIVE_INFINITY;
  readonly #maxEntries: number;
  readonly #maxTextLength: number;

  constructor(maxEntries = MAX_META_CACHE_ENTRIES, maxTextLength = MAX_META_CACHE_TEXT_LENGTH) {
    this.#maxEntries = maxEntries;
    this.#maxTextLength = maxTextLength;
  }

  /** How many texts are kept. */
  get size(): number {
    return this.#texts.length;
  }

  /** Whether `value` is a kept parse (deep-frozen: whatever read it once reads the same from it again). */
  holds(value: unknown): boolean {
    return this.#values.includes(value);
  }

  /** `value` with its levels when it is a kept parse, else undefined. */
  nesting(value: unknown): KnownNesting | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const i = this.#values.indexOf(value);
    return i === -1 ? undefined : this.#nestings[i];
  }

  /** The kept texts, oldest first. */
  texts(): string[] {
    return [...this.#texts];
  }

  /** `JSON.parse(text)`, throwing as it throws; a hit on a kept `_meta` skips parsing that part. */
  parse(text: string): unknown {
    if (text.length > this.#shortest + KEY.length && text.charCodeAt(0) === OPEN_BRACE) {
      const hit = this.#withKept(text);
      if (hit !== undefined) return hit;
    }
    const parsed: unknown = JSON.parse(text);
    this.#learn(text, parsed);
    return parsed;
  }

  /** The parse of `text` with a kept `_meta` put back, or undefined when the argument above does not hold. */
  #withKept(text: string): Record<string, unknown> | undefined {
    const texts = this.#texts;
    // First where the SDK v2 client and the bench put `_meta`: the last member of params, so the line ends
    // `"_meta":{…}}}`. One comparison of `"_meta":` and the text together instead of a search of the line for `"_meta":` (~1.5k instructions
    // of a ~15k parse, BENCHMARKS.md wt/perf3); the argument above holds wherever C stands.
    const length = text.length;
    if (text.charCodeAt(length - 1) === CLOSE_BRACE && text.charCodeAt(length - 2) === CLOSE_BRACE) {
      const keyed = this.#keyed;
      for (let i = 0; i < keyed.length; i++) {
        const from = length - 2 - (keyed[i] as string).length;
        if (from < 0 || text.slice(from, length - 2) !== keyed[i]) continue;
        return this.#spliced(text, from + KEY.length, i, true);
      }
    }
    // Else the first `"_meta":` of the line (a cheaper search than the last): a line whose arguments hold
    // one before it is parsed whole, which is only slower.
    const at = text.indexOf(KEY);
    if (at === -1) return undefined;
    const start = at + KEY.length;
    for (let i = 0; i < texts.length; i++) {
      const kept = texts[i] as string;
      const end = start + kept.length;
      if (end > length || text.charCodeAt(end - 1) !== CLOSE_BRACE || text.slice(start, end) !== kept) continue;
      return this.#spliced(text, start, i, false);
    }
    return undefined;
  }

  /**
   * The line parsed with the placeholder for kept text `i`, which starts at `start`; undefined unless the
   * argument above holds. `atEnd`: the text is followed by `}}`, the line's last two characters.
   */
  #spliced(text: string, start: number, i: number, atEnd: boolean): Record<string, unknown> | undefined {
    if (text.includes(ESCAPE)) return undefined;
    let parsed: unknown;
    try {
      // At the end of the line (the usual place) the rest is the two closing braces: one concatenation, not two and a slice.
      parsed = JSON.parse(atEnd ? text.slice(0, start) + PLACEHOLDER_AT_END : text.slice(0, start) + PLACEHOLDER + text.slice(start + (this.#texts[i] as string).length));
    } catch {
      // Not JSON once spliced: the whole line is parsed, and throws its own error if it is not JSON either.
      return undefined;
    }
    if (!isRecord(parsed)) return undefined;
    const params = parsed.params;
    if (!isRecord(params) || !Object.hasOwn(params, '_meta') || params._meta !== PLACEHOLDER_VALUE) return undefined;
    params._meta = this.#values[i];
    return parsed;
  }

  /** Keeps the `_meta` of a message parsed whole, when a later line could hit it. */
  #learn(text: string, parsed: unknown): void {
    if (!isRecord(parsed) || !isRecord(parsed.params)) return;
    const meta = parsed.params._meta;
    // A progress token changes with every request: its `_meta` would only push out the ones that repeat.
    if (!isRecord(meta) || Object.hasOwn(meta, 'progressToken')) return;
    // Measured before it is written out: a `_meta` of megabytes, or nested past the stack (JSON.stringify
    // then throws, and the message, parsed, would be answered as not JSON), is never kept, at a cost bounded
    // by the limit.
    if (leastTextLength(meta, this.#maxTextLength) > this.#maxTextLength) return;
    const kept = JSON.stringify(meta);
    if (kept.length > this.#maxTextLength || kept.includes(ESCAPE) || this.#texts.includes(kept)) return;
    // Only a text this line carries where the look-up searches (a client that spaces its JSON never hits).
    const at = text.indexOf(KEY);
    if (at === -1 || text.slice(at + KEY.length, at + KEY.length + kept.length) !== kept) return;
    if (this.#texts.length >= this.#maxEntries) {
      this.#texts.shift();
      this.#keyed.shift();
      this.#values.shift();
      this.#nestings.shift();
    }
    this.#texts.push(kept);
    // Joined, not concatenated: a join is one flat string, a `+` a pair that every comparison would walk.
    this.#keyed.push([KEY, kept].join(''));
    // Its own parse, not this message's object, which the request goes on to own. Its levels are counted
    // here, at most MAX_META_CACHE_TEXT_LENGTH / 2 deep (each level is two characters of the kept text).
    const value = deepFreeze(JSON.parse(kept) as object);
    this.#values.push(value);
    this.#nestings.push(Object.freeze({ value, levels: levelsOf(value) }));
    this.#shortest = Math.min(...this.#texts.map((t) => t.length));
  }
}

/** This thread's cache: every transport and core on the thread parses through it. */
const threadCache = new MetaCache();

/** Whether `value` is one of this thread's kept `_meta` parses: deep-frozen, so what was read from it holds. */
export function isKeptMeta(value: unknown): boolean {
  return threadCache.holds(value);
}

/**
 * The kept `_meta` a parsed message carries as `params._meta`, with its levels, for the depth walk
 * (limits.ts `nestsDeeperThan`); undefined for any other message.
 */
export function keptMetaNesting(message: unknown): KnownNesting | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const params = (message as { params?: unknown }).params;
  return typeof params === 'object' && params !== null ? threadCache.nesting((params as { _meta?: unknown })._meta) : undefined;
}

/** `value` with its levels when it is one of this thread's kept `_meta` parses, else undefined. */
export function keptNesting(value: unknown): KnownNesting | undefined {
  return threadCache.nesting(value);
}

/**
 * `JSON.parse(text)` through this thread's `_meta` cache (throws as `JSON.parse` does); a text nesting past
 * MAX_JSON_DEPTH is parsed as the stand-in the core refuses the same way, never itself (text-depth.ts).
 */
export function parseMessageText(text: string): unknown {
  return threadCache.parse(messageTextToParse(text));
}

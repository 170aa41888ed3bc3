// A result that holds one long text in several places, encoded with that text's JSON written once: a
// `read` answer carries its window twice (the text content, and `structuredContent.content` for the tool's
// output schema), and escaping it was most of what encoding the answer cost (V8 11's JSON.stringify takes
// ~30 instructions a character; BENCHMARKS.md, wt/perf3). The line is always `JSON.stringify` of the result.
//
// Why. The producer gives a stand-in: the result with each of `places` members that hold the text holding
// the one-character string U+0000 instead. JSON.stringify writes a string the same way wherever it is, and
// writes U+0000 only as `\u0000`, so the stand-in's line is the result's line with each of those members'
// encodings replaced by `"\u0000"`. We accept it only when the six characters `\u0000` occur exactly
// `places` times in it: each stand-in member puts one there, so nothing else does (a U+0000 elsewhere, or a
// text spelling `\u0000` with its backslash escaped, makes more and the result is encoded whole). Every
// `"\u0000"` holds a `\u0000`, so the `places` places are the only ones: putting the text's own encoding at
// each gives the result's line.

/** The string a stand-in holds where the result holds the text. */
export const TEXT_STAND_IN = '\u0000';
const STAND_IN_JSON = '"\\u0000"';
const ESCAPE = '\\u0000';
/**
 * Shorter texts are encoded where they are: below this, building the stand-in costs about what escaping
 * the text a second time does.
 */
export const REPEATED_TEXT_MIN_CHARS = 64;

/** A text the result holds in `places` places, and the result with TEXT_STAND_IN in each of them. */
export interface RepeatedText {
  readonly text: string;
  readonly places: number;
  readonly standIn: unknown;
}

/**
 * `line`, the JSON of a value holding a stand-in, with the text's JSON put in each stand-in's place; null
 * when the line does not prove where they are (the caller then encodes the value itself).
 */
export function withRepeatedText(line: string, repeated: RepeatedText): string | null {
  let count = 0;
  for (let at = line.indexOf(ESCAPE); at !== -1; at = line.indexOf(ESCAPE, at + ESCAPE.length)) {
    if (++count > repeated.places) return null;
  }
  if (count !== repeated.places) return null;
  const parts = line.split(STAND_IN_JSON);
  return parts.length === repeated.places + 1 ? parts.join(JSON.stringify(repeated.text)) : null;
}

// `edit` with all its edits located in one pass decides exactly what the sequential search it replaced
// decided (each oldText searched with indexOf, its occurrences counted, in the caller's order): the same
// new content, or the same refusal word for word; the file's bytes outside the replaced spans are kept as
// they were (mixed line endings included). Generated files and edits (fast-check, fixed seed).

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planEdit, type EditReplacement } from '../../src/tools/edit.ts';
import { inSandbox } from './sandbox.ts';

const SEED = 20_261_205;
const RUNS = 1500;

/** The sequential semantics: the first edit (in the caller's order) missing or ambiguous is the one refused. */
function sequential(file: string, requested: EditReplacement[], asArray: boolean): { content: string } | { message: string } {
  const toLF = (s: string) => s.replace(/\r\n/g, '\n');
  const nl = file.indexOf('\n');
  const crlf = nl > 0 && file[nl - 1] === '\r';
  const original = toLF(file);
  const untouched = requested.length > 1 ? ' No edits were applied.' : '';
  const label = (i: number) => (asArray ? `edits[${i}]: ` : '');
  const edits = requested.map((e) => ({ oldText: toLF(e.oldText), newText: toLF(e.newText) }));
  for (const [i, e] of edits.entries()) {
    if (e.oldText === e.newText) return { message: `${label(i)}oldText and newText are identical, so nothing would change in f.txt.` };
  }
  const spans: { i: number; start: number; end: number; newText: string }[] = [];
  for (const [i, e] of edits.entries()) {
    const at = original.indexOf(e.oldText);
    if (at === -1) {
      return { message: `${label(i)}oldText was not found in f.txt. It must match the file exactly, including all whitespace, ` +
        `indentation and line breaks; read the file again and copy the text.${untouched}` };
    }
    let count = 0;
    for (let p = at; p !== -1; p = original.indexOf(e.oldText, p + 1)) count++;
    if (count > 1) {
      return { message: `${label(i)}Found ${count} occurrences of the oldText in f.txt. The text must be unique: ` +
        `include more surrounding lines to make it unique.${untouched}` };
    }
    spans.push({ i, start: at, end: at + e.oldText.length, newText: e.newText });
  }
  spans.sort((a, b) => a.start - b.start);
  for (let k = 1; k < spans.length; k++) {
    const [x, y] = [spans[k - 1]!, spans[k]!];
    if (y.start < x.end) {
      const [first, second] = x.i < y.i ? [x.i, y.i] : [y.i, x.i];
      return { message: `edits[${first}] and edits[${second}] overlap in f.txt; each edit must replace a separate part of the file. Merge them into one edit.${untouched}` };
    }
  }
  let out = '';
  let pos = 0;
  for (const s of spans) {
    out += original.slice(pos, s.start) + s.newText;
    pos = s.end;
  }
  out += original.slice(pos);
  if (out === original) return { message: 'No changes made to f.txt: the replacement produced identical content.' };
  // Written into the file's own text: each LF-text place at the file character it came from (the CR of a
  // CRLF for its LF), every byte between the spans kept, each newText with the first line's ending.
  const at: number[] = [];
  for (let r = 0; r < file.length; r++) if (!(file[r] === '\r' && file[r + 1] === '\n')) at.push(file[r] === '\n' && file[r - 1] === '\r' ? r - 1 : r);
  at.push(file.length);
  let written = '';
  let copied = 0;
  for (const s of spans) {
    written += file.slice(copied, at[s.start]) + (crlf ? s.newText.replace(/\n/g, '\r\n') : s.newText);
    copied = at[s.end]!;
  }
  return { content: written + file.slice(copied) };
}

const token = fc.constantFrom('a', 'b', 'ab', 'ba', ' ', '\n', '\n', '\r\n', 'x');
const text = (max: number) => fc.array(token, { maxLength: max }).map((t) => t.join(''));
const replacement = fc.record({ oldText: text(3).filter((s) => s.length > 0), newText: text(3) });

test('one-pass edit decides what the sequential search decided: same content, or the same refusal', () =>
  inSandbox({}, async ({ ws }) => {
    await fc.assert(
      fc.asyncProperty(text(24), fc.array(replacement, { minLength: 1, maxLength: 5 }), fc.boolean(), async (file, edits, asArray) => {
        const several = asArray || edits.length > 1;
        await writeFile(path.join(ws, 'f.txt'), file);
        const args = several ? { path: 'f.txt', edits } : { path: 'f.txt', oldText: edits[0]!.oldText, newText: edits[0]!.newText };
        const plan = await planEdit(args, ws);
        const got = plan.kind === 'plan' ? { content: Buffer.from(plan.bytes).toString('utf8') } : { message: plan.message };
        assert.equal(got, sequential(file, several ? edits : edits.slice(0, 1), several), JSON.stringify({ file, edits, several }));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }));

test.run();

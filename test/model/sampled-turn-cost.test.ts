// Reading a sampled answer (MCP sampling: tool calls as `<tool_call>` text) costs time linear in its length.
// The answer is the client's text, read on the server's main thread; a few tens of KB once held it for
// minutes (a backtracking fence regex; each unreadable block read again up to every later closing tag), so
// one client's sampling reply stalled every session of the node. Hostile answers run in a child process under
// a hang guard (not a speed claim: the old reading took minutes to hours); the reading is checked against the
// old fence regex and against the convention's own writing (fast-check).

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSampledTurn, renderToolCall, stripFence } from '../../src/model/sampling-convention.ts';
import { HANG_GUARD_MS } from '../hang-guard.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

test('hostile sampled answers (blanks in a fence, 256 KiB of unreadable blocks, 2 MiB of closing tags after an open string) are read before the hang guard', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/hostile-sampled-turns.ts')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS * 3);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(guard);
  assert.is(signal, null, `the reading was killed by the hang guard (${HANG_GUARD_MS * 3} ms): ${stderr}`);
  assert.is(code, 0, stderr);
  assert.equal(JSON.parse(stdout), { fencedBlanks: 1, manyBlocks: Math.floor((256 * 1024) / 24), oneLongBlock: 1 });
});

/** The fence regex the reading used before (fine on short bodies, cubic on long runs of blanks). */
const oldStripFence = (body: string): string => /^```[\w-]*[ \t]*\n?([\s\S]*?)\n?[ \t]*```$/.exec(body)?.[1]?.trim() ?? body;

test('property: the fence is stripped as the old regex did, on any short body', () => {
  const piece = fc.constantFrom('```', '`', 'json', '-', ' ', '\t', '\n', '{', '}', '"a"', 'x', '\r');
  fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
    const body = pieces.join('').trim();
    assert.is(stripFence(body), oldStripFence(body));
  }), { numRuns: 2000 });
});

test('property: calls written by the convention, their arguments holding closing tags or not, between any text, are read back as written', () => {
  const text = fc.constantFrom('', 'ok ', 'Let me look.\n', '</tool_call>', '<tool_call', 'x');
  const value = fc.constantFrom('a.ts', 'say </tool_call> twice </tool_call>', '<tool_call>{"name": "ls"}', '```json\n{}\n```', '');
  const call = fc.record({ name: fc.constantFrom('read', 'write', 'ls'), arguments: fc.dictionary(fc.constantFrom('path', 'content'), value, { maxKeys: 2 }) });
  fc.assert(fc.property(fc.array(fc.tuple(text, call), { maxLength: 4 }), (parts) => {
    // Text between blocks must not itself open a block the model did not mean.
    const between = parts.map(([t]) => t.replace(/<tool_call>?/gi, ''));
    const written = parts.map(([, c], i) => `${between[i]}${renderToolCall(c)}`).join('\n');
    const turn = parseSampledTurn(written);
    assert.equal(turn.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })), parts.map(([, c]) => JSON.parse(JSON.stringify(c)) as unknown));
    assert.ok(turn.toolCalls.every((c) => c.parseError === undefined));
  }), { numRuns: 1000 });
});

test.run();

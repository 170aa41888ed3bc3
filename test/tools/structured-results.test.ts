// Every tool's structured result, run through the real tool bodies in their main modes (truncated ones
// included): it fits the tool's declared outputSchema, and it carries every fact the text tells the model.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { rm } from 'node:fs/promises';
import { bashTool } from '../../src/tools/bash.ts';
import { probeBashIsolation, useBashIsolation } from '../../src/tools/bash-isolation.ts';
import { toolCatalog } from '../../src/tools/catalog.ts';
import type { ToolBody, ToolOutcome } from '../../src/tools/contract.ts';
import type { ToolName } from '../../src/tools/definition.ts';
import { editTool } from '../../src/tools/edit.ts';
import { findTool } from '../../src/tools/find.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from '../../src/limits.ts';
import { inSandbox } from './sandbox.ts';
import sharp from 'sharp';

type LocalTool = Exclude<ToolName, 'harness_task'>;

const bodies: Record<LocalTool, ToolBody<never>> = {
  read: readTool, write: writeTool, edit: editTool, bash: bashTool, grep: grepTool, find: findTool, ls: lsTool,
};

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map(Object.values(toolCatalog).map((def) => [def.name, def.outputSchema ? ajv.compile(def.outputSchema) : null]));

const manyLines = Array.from({ length: DEFAULT_MAX_LINES + 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const wideLines = Array.from({ length: 300 }, (_, i) => `${i}:${'w'.repeat(400)}`).join('\n');
const oneHugeLine = 'x'.repeat(DEFAULT_MAX_BYTES + 10);
const shotPng = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#204060' } }).png().toBuffer();
const files = {
  'small.txt': 'alpha\nbeta\ngamma\n',
  'many.txt': manyLines,
  'wide.txt': wideLines,
  'huge-line.txt': `${oneHugeLine}\nshort\n`,
  'src/a.ts': 'one\ntwo\nneedle three\nfour\nfive\nneedle six\nseven\n',
  'src/b.ts': `needle ${'y'.repeat(600)}\n`,
  'src/c.bin': Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01]),
  'dir/1.md': '', 'dir/2.md': '', 'dir/3.md': '',
  'empty/.keep': '',
  'shot.png': shotPng,
};

interface Case {
  readonly tool: LocalTool;
  readonly mode: string;
  readonly args: Record<string, unknown>;
  /** Facts of this mode the structured result must have, beyond the shared checks. */
  readonly check?: (structured: Record<string, unknown>, outcome: ToolOutcome) => void;
}

const cases: Case[] = [
  { tool: 'read', mode: 'whole small file', args: { path: 'small.txt' }, check: (s) => assert.equal([s.content, s.truncated, s.totalLines], ['alpha\nbeta\ngamma\n', false, 3]) },
  { tool: 'read', mode: 'cut at the line limit', args: { path: 'many.txt' }, check: (s) => assert.equal([s.lines, s.nextOffset, s.totalLines, s.truncated], [DEFAULT_MAX_LINES, DEFAULT_MAX_LINES + 1, DEFAULT_MAX_LINES + 100, true]) },
  { tool: 'read', mode: 'cut at the byte limit', args: { path: 'wide.txt' }, check: (s) => assert.ok(s.truncated === true && (s.lines as number) < 300) },
  { tool: 'read', mode: "window of the caller's limit", args: { path: 'many.txt', offset: 10, limit: 5 }, check: (s) => assert.equal([s.content, s.offset, s.nextOffset], ['line 10\nline 11\nline 12\nline 13\nline 14', 10, 15]) },
  { tool: 'read', mode: 'a line alone over the byte limit', args: { path: 'huge-line.txt' }, check: (s) => assert.equal([s.content, s.lines, s.truncated], ['', 0, true]) },
  {
    tool: 'read', mode: 'image', args: { path: 'shot.png' },
    check: (s, outcome) => {
      assert.equal(s.image, { mimeType: 'image/png', width: 2000, height: 667, bytes: Buffer.from(outcome.content?.[0]?.data ?? '', 'base64').length, sourceMimeType: 'image/png', sourceWidth: 3000, sourceHeight: 1000, sourceBytes: shotPng.length });
      assert.equal([s.content, s.notices], [undefined, []]);
    },
  },
  { tool: 'write', mode: 'new file', args: { path: 'out/new.txt', content: 'héllo\n' }, check: (s) => assert.equal(s, { path: 'out/new.txt', bytes: 7 }) },
  { tool: 'edit', mode: 'one replacement', args: { path: 'small.txt', oldText: 'beta', newText: 'BETA' } },
  { tool: 'bash', mode: 'success', args: { command: 'echo hi' }, check: (s) => assert.equal([s.exitCode, s.output, s.truncated], [0, 'hi\n', false]) },
  { tool: 'bash', mode: 'non-zero exit', args: { command: 'echo oops; exit 3' }, check: (s) => assert.equal([s.exitCode, s.output], [3, 'oops\n']) },
  { tool: 'bash', mode: 'timed out', args: { command: 'sleep 5', timeout: 0.2 }, check: (s) => assert.equal([s.exitCode, s.timedOut], [null, true]) },
  {
    tool: 'bash', mode: 'output spilled to a file', args: { command: `seq 1 ${DEFAULT_MAX_LINES + 500}` },
    check: (s) => {
      assert.is(s.truncated, true);
      assert.type(s.fullOutputPath, 'string');
      assert.ok((s.output as string).endsWith(`\n${DEFAULT_MAX_LINES + 500}`));
    },
  },
  { tool: 'grep', mode: 'matches', args: { pattern: 'needle', path: 'src/a.ts' }, check: (s) => assert.equal(s.matches, [{ path: 'src/a.ts', line: 3, text: 'needle three' }, { path: 'src/a.ts', line: 6, text: 'needle six' }]) },
  {
    tool: 'grep', mode: 'with context', args: { pattern: 'needle', path: 'src/a.ts', context: 1 },
    check: (s) => assert.equal((s.matches as { context?: unknown }[]).map((m) => m.context), [
      { before: [{ line: 2, text: 'two' }], after: [{ line: 4, text: 'four' }] },
      { before: [{ line: 5, text: 'five' }], after: [{ line: 7, text: 'seven' }] },
    ]),
  },
  { tool: 'grep', mode: 'limit reached', args: { pattern: 'needle', limit: 1 }, check: (s) => assert.is(s.truncated, true) },
  { tool: 'grep', mode: 'long line cut, binary skipped', args: { pattern: 'needle', path: 'src' } },
  { tool: 'grep', mode: 'no match', args: { pattern: 'absent-word' }, check: (s) => assert.equal(s.matches, []) },
  { tool: 'find', mode: 'matches', args: { pattern: '*.md' }, check: (s) => assert.equal(s.paths, ['dir/1.md', 'dir/2.md', 'dir/3.md']) },
  { tool: 'find', mode: 'limit reached', args: { pattern: '*.md', limit: 2 }, check: (s) => assert.is(s.truncated, true) },
  { tool: 'ls', mode: 'listing', args: { path: 'dir' } },
  { tool: 'ls', mode: 'limit reached', args: { path: 'dir', limit: 1 }, check: (s) => assert.is(s.truncated, true) },
  { tool: 'ls', mode: 'empty directory', args: { path: 'empty/..', limit: 100 } },
];

/** The bracketed notices a text ends with, without their brackets. */
function noticesIn(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n').reverse()) {
    const m = /^\[(.*)\]$/.exec(line);
    if (m === null) break;
    found.unshift(m[1] as string);
  }
  return found;
}

for (const c of cases) {
  test(`${c.tool} (${c.mode}): structured fits the declared outputSchema and carries the text's notices`, () =>
    inSandbox(files, async (box) => {
      const outcome = await (bodies[c.tool] as ToolBody<Record<string, unknown>>)(c.args, box.ctx);
      const validate = validators.get(c.tool);
      assert.ok(validate, `${c.tool} declares an outputSchema`);
      const s = outcome.structured;
      assert.ok(s, `${c.tool} returns structured`);
      try {
        assert.ok(validate(s), JSON.stringify(validate.errors));
        const textNotices = noticesIn(outcome.text);
        const structuredNotices = (s.notices ?? []) as string[];
        for (const n of textNotices) assert.ok(structuredNotices.includes(n), `notice "${n}" of the text is in structured.notices ${JSON.stringify(structuredNotices)}`);
        if (s.truncated === true) assert.ok(textNotices.length > 0 && structuredNotices.length > 0, 'a truncated result says so in words, in text and structured');
        // The text's body (what precedes the notices) is what read and bash return as content/output.
        if (c.tool === 'read' && s.image === undefined) assert.ok(outcome.text.startsWith(s.content as string), 'read: text starts with structured.content');
        if (c.tool === 'bash') {
          assert.ok(outcome.text.startsWith((s.output as string).replace(/\n$/, '')), 'bash: text starts with structured.output');
          const code = /Command exited with code (\d+)$/.exec(outcome.text);
          if (code) assert.is(s.exitCode, Number(code[1]));
        }
        if (c.tool === 'grep') {
          // Every context line the text prints (`path-line- text`) is in some match's structured context.
          const given = new Set((s.matches as { path: string; context?: { before: { line: number; text: string }[]; after: { line: number; text: string }[] } }[])
            .flatMap((m) => [...(m.context?.before ?? []), ...(m.context?.after ?? [])].map((l) => `${m.path}-${l.line}- ${l.text}`)));
          for (const line of outcome.text.split('\n')) if (/^[^:\n]+-\d+- /.test(line)) assert.ok(given.has(line), `context line "${line}" is in structured`);
        }
        c.check?.(s, outcome);
      } finally {
        if (typeof s.fullOutputPath === 'string') await rm(s.fullOutputPath, { force: true });
      }
    }));
}

test('bash whose shell is killed by a signal: reported, as the first process of the command sees it, as exit 128+9, the same in text and structured', () =>
  inSandbox({}, async (box) => {
    useBashIsolation({ kind: 'process-group', reason: 'forced by the test' });
    try {
      const r = await bashTool({ command: 'kill -KILL $$' }, box.ctx);
      assert.ok(validators.get('bash')?.(r.structured), 'fits the schema');
      assert.match(r.text, /Command exited with code 137$/);
      assert.equal([r.structured?.exitCode, r.structured?.signal], [137, null]);
    } finally {
      useBashIsolation(await probeBashIsolation());
    }
  }));

test('every tool that returns structuredContent declares an outputSchema (all eight do)', () => {
  for (const def of Object.values(toolCatalog)) assert.ok(def.outputSchema, `${def.name} declares an outputSchema`);
});

test('the table runs every local tool and every notice-bearing mode the tools have', () => {
  assert.equal([...new Set(cases.map((c) => c.tool))].sort(), Object.keys(bodies).sort());
});

test.run();

// End to end: the official SDK Client (which checks every structuredContent against the tool's declared
// outputSchema, and refuses a result without one) calls each tool over stdio, truncated modes included.

import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Connected, connectStdio, makeSandbox, type Sandbox, textOf } from './fixtures.ts';

const e2e = suite('structured results over stdio with the SDK client');
let box: Sandbox;
let c: Connected;

e2e.before(async () => {
  box = await makeSandbox();
  await writeFile(path.join(box.ws, 'long.txt'), Array.from({ length: 2100 }, (_, i) => `row ${i + 1}`).join('\n') + '\n');
  c = await connectStdio(box.ws);
});
e2e.after(async () => {
  await c?.close();
  await box?.cleanup();
});

type Structured = Record<string, unknown> & { notices?: string[] };

async function call(name: string, args: Record<string, unknown>): Promise<{ text: string; s: Structured; isError: boolean }> {
  const r = await c.client.callTool({ name, arguments: args });
  assert.ok(r.structuredContent, `${name} returns structuredContent: ${textOf(r)}`);
  return { text: textOf(r), s: r.structuredContent as Structured, isError: r.isError === true };
}

e2e('every tool lists an outputSchema', async () => {
  const { tools } = await c.client.listTools();
  assert.equal(tools.filter((t) => !t.outputSchema).map((t) => t.name), []);
});

e2e('read: the window and the continuation notice are structured', async () => {
  const whole = await call('read', { path: 'src/greet.ts' });
  assert.is(whole.s.content, whole.text);
  const cut = await call('read', { path: 'long.txt' });
  assert.equal([cut.s.truncated, cut.s.nextOffset, cut.s.totalLines], [true, 2001, 2100]);
  assert.equal(cut.s.notices, ['Showing lines 1-2000 of 2100. Use offset=2001 to continue.']);
});

e2e('write: the path and bytes written are structured', async () => {
  const r = await call('write', { path: 'notes/a.md', content: 'abc\n' });
  assert.equal(r.s, { path: 'notes/a.md', bytes: 4 });
});

e2e('edit: the diff summary is structured', async () => {
  const r = await call('edit', { path: 'src/math.ts', oldText: 'a + b', newText: 'b + a' });
  assert.is(r.s.replacements, 1);
});

e2e('bash: exit code and output are structured, for a failing command too', async () => {
  const ok = await call('bash', { command: 'echo out' });
  assert.equal([ok.s.exitCode, ok.s.output], [0, 'out\n']);
  const bad = await call('bash', { command: 'echo no; exit 3' });
  assert.is(bad.isError, true);
  assert.equal([bad.s.exitCode, bad.s.output], [3, 'no\n']);
  const long = await call('bash', { command: 'seq 1 3000' });
  assert.equal([long.s.truncated, typeof long.s.fullOutputPath], [true, 'string']);
  await rm(long.s.fullOutputPath as string, { force: true });
  assert.ok(long.s.notices?.[0]?.startsWith('Showing lines 1001-3000 of 3000. Full output: '), JSON.stringify(long.s.notices));
});

e2e('grep: context lines and the limit notice are structured', async () => {
  const r = await call('grep', { pattern: 'return', path: 'src/greet.ts', context: 1 });
  assert.equal(r.s.matches, [{
    path: 'src/greet.ts', line: 2, text: '  return `hello ${name}`;',
    context: { before: [{ line: 1, text: 'export function greet(name: string) {' }], after: [{ line: 3, text: '}' }] },
  }]);
  const capped = await call('grep', { pattern: 'row', path: 'long.txt', limit: 2 });
  assert.equal(capped.s.notices, ['2 matches limit reached. Use limit=4 for more, or refine pattern']);
});

e2e('find and ls: the limit notices are structured', async () => {
  const f = await call('find', { pattern: '*.ts', limit: 1 });
  assert.equal(f.s.notices, ['1 results limit reached. Use limit=2 for more, or refine pattern']);
  const l = await call('ls', { path: 'src', limit: 1 });
  assert.equal(l.s.notices, ['1 entries limit reached. Use limit=2 for more']);
});

e2e.run();

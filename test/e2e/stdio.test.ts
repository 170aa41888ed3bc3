// End to end: the official SDK Client drives `examples/stdio.ts` over stdio in a temporary workspace.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Connected, connectStdio, makeSandbox, type Sandbox, textOf } from './fixtures.ts';

const e2e = suite('stdio server with the SDK client');
let box: Sandbox;
let c: Connected;

e2e.before(async () => {
  box = await makeSandbox();
  c = await connectStdio(box.ws);
});
e2e.after(async () => {
  await c?.close();
  await box?.cleanup();
});

e2e('initializes at 2025-11-25 (the newest the SDK client asks for) and says which workspace and harness it serves', () => {
  assert.is(c.client.getServerVersion()?.name, 'super-pi');
  assert.match(c.client.getServerVersion()?.description ?? '', /workspace/);
  assert.match(c.client.getInstructions() ?? '', /super-pi-code/);
  assert.ok(c.client.getServerCapabilities()?.tools);
});

e2e('lists the eight tools with schemas, annotations and output schemas where structured', async () => {
  const { tools } = await c.client.listTools();
  assert.equal(tools.map((t) => t.name), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
  for (const name of ['ls', 'grep', 'find', 'edit']) assert.ok(tools.find((t) => t.name === name)?.outputSchema, `${name} declares an outputSchema`);
  assert.is(tools.find((t) => t.name === 'read')?.annotations?.readOnlyHint, true);
  assert.is(tools.find((t) => t.name === 'bash')?.annotations?.destructiveHint, true);
});

e2e('read returns the file text', async () => {
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } });
  assert.not.ok(r.isError);
  assert.match(textOf(r), /export function greet/);
});

e2e('write creates a file (and its directories) in the workspace', async () => {
  const r = await c.client.callTool({ name: 'write', arguments: { path: 'notes/todo.md', content: '- ship it\n' } });
  assert.not.ok(r.isError, textOf(r));
  assert.is(await readFile(path.join(box.ws, 'notes/todo.md'), 'utf8'), '- ship it\n');
});

e2e('edit replaces an exact match and reports a diff summary', async () => {
  const r = await c.client.callTool({ name: 'edit', arguments: { path: 'src/math.ts', oldText: 'a + b', newText: 'a + b + 0' } });
  assert.not.ok(r.isError, textOf(r));
  assert.ok(r.structuredContent, 'edit returns structuredContent');
  assert.match(await readFile(path.join(box.ws, 'src/math.ts'), 'utf8'), /a \+ b \+ 0/);
});

e2e('edit refuses a missing match and says so', async () => {
  const r = await c.client.callTool({ name: 'edit', arguments: { path: 'src/math.ts', oldText: 'no such text', newText: 'x' } });
  assert.is(r.isError, true);
  assert.match(textOf(r), /not found|could not find/i);
});

e2e('ls lists entries with structured data', async () => {
  const r = await c.client.callTool({ name: 'ls', arguments: { path: 'src' } });
  assert.not.ok(r.isError, textOf(r));
  assert.match(textOf(r), /greet\.ts/);
  const entries = (r.structuredContent as { entries: { name: string }[] }).entries.map((e) => e.name);
  assert.ok(entries.includes('greet.ts') && entries.includes('math.ts'));
});

e2e('grep finds matches and respects .gitignore', async () => {
  const r = await c.client.callTool({ name: 'grep', arguments: { pattern: 'greet' } });
  assert.not.ok(r.isError, textOf(r));
  const paths = (r.structuredContent as { matches: { path: string }[] }).matches.map((m) => m.path);
  assert.ok(paths.includes('src/greet.ts'));
  assert.not.ok(paths.some((p) => p.startsWith('build/') || p.endsWith('.log')), `ignored files leaked: ${paths.join(', ')}`);
});

e2e('find matches a glob and respects .gitignore', async () => {
  const r = await c.client.callTool({ name: 'find', arguments: { pattern: '*.ts' } });
  assert.not.ok(r.isError, textOf(r));
  const paths = (r.structuredContent as { paths: string[] }).paths;
  assert.ok(paths.includes('src/greet.ts') && paths.includes('src/math.ts'));
  assert.not.ok(paths.some((p) => p.startsWith('build/')));
});

e2e('bash runs in the workspace and reports a failing exit code as a tool error', async () => {
  const ok = await c.client.callTool({ name: 'bash', arguments: { command: 'pwd && echo out && echo err 1>&2' } });
  assert.not.ok(ok.isError, textOf(ok));
  assert.match(textOf(ok), new RegExp(box.ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  assert.match(textOf(ok), /out/);
  const bad = await c.client.callTool({ name: 'bash', arguments: { command: 'exit 3' } });
  assert.is(bad.isError, true);
  assert.match(textOf(bad), /code 3/);
});

e2e('harness_task without a configured model says exactly how to configure one', async () => {
  const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } });
  assert.is(r.isError, true);
  assert.match(textOf(r), /SUPERPI_MODEL_URL/);
});

e2e('bad arguments are an isError tool result naming what is wrong (SEP-1303), so the model can correct its call', async () => {
  const r = await c.client.callTool({ name: 'read', arguments: { path: 42 } });
  assert.is(r.isError, true);
  assert.match(textOf(r), /^Invalid arguments for read: .*path/);
});

e2e('escape attempts are refused with a clear error', async () => {
  for (const p of ['../outside/secret.txt', 'src/../../outside/secret.txt', path.join(box.base, 'outside/secret.txt'), path.join(box.base, 'ws-evil/secret.txt')]) {
    const r = await c.client.callTool({ name: 'read', arguments: { path: p } });
    assert.is(r.isError, true, `read ${p} must be refused`);
    assert.match(textOf(r), /outside the workspace/, p);
    assert.not.match(textOf(r), /(outside|sibling) secret/, 'the file content must not leak');
  }
  const w = await c.client.callTool({ name: 'write', arguments: { path: '../ws-evil/pwned.txt', content: 'x' } });
  assert.is(w.isError, true);
});

e2e('gets every prompt', async () => {
  const { prompts } = await c.client.listPrompts();
  assert.equal(prompts.map((p) => p.name), ['super-pi-code', 'super-pi-assistant', 'super-pi-librarian', 'super-pi-planner', 'plan_architecture']);
  for (const p of prompts) {
    const args = Object.fromEntries((p.arguments ?? []).filter((a) => a.required).map((a) => [a.name, 'do the thing']));
    const got = await c.client.getPrompt({ name: p.name, arguments: args });
    assert.ok(got.messages.length > 0, p.name);
    assert.match(JSON.stringify(got.messages[0]), /do the thing/);
  }
});

e2e('lists and reads every resource; the transcript template is listed', async () => {
  const { resources } = await c.client.listResources();
  assert.ok(resources.length >= 2);
  for (const r of resources) {
    const read = await c.client.readResource({ uri: r.uri });
    assert.ok(read.contents.length > 0, r.uri);
  }
  const ws = await c.client.readResource({ uri: 'superpi://workspace' });
  const text = (ws.contents[0] as { text: string }).text;
  assert.match(text, /Git branch: main/);
  assert.match(text, /Demo project/);
  const { resourceTemplates } = await c.client.listResourceTemplates();
  assert.equal(resourceTemplates.map((t) => t.uriTemplate), ['superpi://conversation/{id}/transcript']);
  try {
    await c.client.readResource({ uri: 'superpi://conversation/nope/transcript' });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.is((err as { code?: number }).code, -32002);
  }
});

e2e('completes workspace paths and harness ids for prompt arguments', async () => {
  const paths = await c.client.complete({ ref: { type: 'ref/prompt', name: 'super-pi-code' }, argument: { name: 'path', value: 'sr' } });
  assert.equal(paths.completion.values, ['src/']);
  const inner = await c.client.complete({ ref: { type: 'ref/prompt', name: 'super-pi-code' }, argument: { name: 'path', value: 'src/g' } });
  assert.equal(inner.completion.values, ['src/greet.ts']);
  const h = await c.client.complete({ ref: { type: 'ref/prompt', name: 'super-pi-planner' }, argument: { name: 'executor', value: 'super-pi-l' } });
  assert.equal(h.completion.values, ['super-pi-librarian']);
});

e2e('sends progress for a long bash call that carries a progress token', async () => {
  const seen: number[] = [];
  const r = await c.client.callTool({ name: 'bash', arguments: { command: 'for i in 1 2 3 4; do echo tick $i; sleep 0.3; done' } }, undefined, {
    onprogress: (p) => seen.push(p.progress),
  });
  assert.not.ok(r.isError, textOf(r));
  assert.ok(seen.length >= 1, 'expected at least one progress notification');
});

e2e('a cancelled bash call stops its process and the session goes on', async () => {
  const controller = new AbortController();
  const marker = path.join(box.ws, 'cancel-marker');
  const call = c.client.callTool({ name: 'bash', arguments: { command: `sleep 3 && touch ${marker}` } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort('test cancels'), 300);
  try {
    await call;
    assert.unreachable('the cancelled call should reject on the client');
  } catch (err) {
    assert.ok(String(err).length > 0);
  }
  await new Promise((r) => setTimeout(r, 3500));
  const exists = await readFile(marker).then(() => true, () => false);
  assert.is(exists, false, 'the cancelled command must not have finished');
  assert.equal(await c.client.ping(), {});
});

e2e.run();

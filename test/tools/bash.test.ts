import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { bashTool, FULL_OUTPUT_PREFIX, MAX_FULL_OUTPUT_FILES } from '../../src/tools/bash.ts';
import { bashDefinition } from '../../src/tools/definitions/bash.ts';
import type { ToolOutcome, ToolProgress } from '../../src/tools/contract.ts';
import { context, inSandbox, isRunning } from './sandbox.ts';


async function gone(pid: number, withinMs = 2000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !isRunning(pid);
}

test('bash returns stdout and stderr interleaved', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'echo out1; echo err1 >&2; sleep 0.05; echo out2' }, context(ws));
    assert.is(r.text, 'out1\nerr1\nout2\n');
    assert.not.ok(r.isError);
  }));

test('bash says "(no output)" for a silent command', () =>
  inSandbox({}, async ({ ws }) => {
    assert.equal(await bashTool({ command: 'true' }, context(ws)), { text: '(no output)' });
  }));

test('bash runs in the workspace root', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'pwd -P' }, context(ws));
    assert.is(r.text.trim(), ws);
  }));

test('a non-zero exit code is an error ending in "Command exited with code N"', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'echo oops; exit 3' }, context(ws));
    assert.is(r.isError, true);
    assert.is(r.text, 'oops\n\nCommand exited with code 3');
  }));

test('a timeout kills the whole process group and reports "Command timed out after N seconds"', () =>
  inSandbox({}, async ({ ws }) => {
    const started = Date.now();
    const r = await bashTool({ command: 'sleep 100 & echo $!; sleep 100; wait', timeout: 1 }, context(ws));
    const elapsed = Date.now() - started;
    assert.is(r.isError, true);
    assert.ok(r.text.endsWith('Command timed out after 1 seconds'), r.text);
    assert.ok(elapsed < 4000, `took ${elapsed} ms`);
    const grandchild = Number(r.text.split('\n')[0]);
    assert.ok(Number.isInteger(grandchild) && grandchild > 1, r.text);
    assert.ok(await gone(grandchild), `background sleep ${grandchild} is still running`);
  }));

test('background processes do not outlive a command that finishes normally', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'sleep 100 & echo $!' }, context(ws));
    assert.not.ok(r.isError);
    const pid = Number(r.text.trim());
    assert.ok(Number.isInteger(pid) && pid > 1, r.text);
    assert.ok(await gone(pid), `background sleep ${pid} is still running`);
  }));

test('an abort through the signal kills the command and reports "Command aborted" with the output so far', () =>
  inSandbox({}, async ({ ws }) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const r = await bashTool({ command: 'echo started; sleep 100 & echo $!; wait' }, context(ws, { signal: controller.signal }));
    assert.ok(Date.now() - started < 3000);
    assert.is(r.isError, true);
    const lines = r.text.split('\n');
    assert.is(lines[0], 'started');
    assert.ok(r.text.endsWith('\n\nCommand aborted'), r.text);
    assert.ok(await gone(Number(lines[1])), 'background sleep is still running');
  }));

test('an already aborted signal runs nothing', () =>
  inSandbox({}, async ({ ws }) => {
    const controller = new AbortController();
    controller.abort();
    const r = await bashTool({ command: 'touch ran' }, context(ws, { signal: controller.signal }));
    assert.equal(r, { text: 'Command aborted', isError: true });
    let exists = true;
    await readFile(path.join(ws, 'ran')).catch(() => (exists = false));
    assert.is(exists, false);
  }));

test('big output keeps the last 2000 lines and saves the full output to a temp file', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'seq 1 100000' }, context(ws));
    assert.not.ok(r.isError);
    const [body, notice] = r.text.split('\n\n');
    const lines = (body as string).split('\n');
    assert.is(lines.length, 2000);
    assert.is(lines[0], '98001');
    assert.is(lines[1999], '100000');
    const m = /^\[Showing lines 98001-100000 of 100000\. Full output: (.+)\]$/.exec(notice as string);
    assert.ok(m, notice);
    const file = (m as RegExpExecArray)[1] as string;
    try {
      assert.is(path.dirname(file), os.tmpdir());
      const full = await readFile(file, 'utf8');
      assert.is(full, Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join(''));
    } finally {
      await rm(file, { force: true });
    }
  }));

test('one huge line keeps its last 50KB and says how long the line was', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: "head -c 200000 /dev/zero | tr '\\0' a" }, context(ws));
    const [body, notice] = r.text.split('\n\n');
    assert.is(body, 'a'.repeat(50 * 1024));
    const m = /^\[Showing last 50\.0KB of line 1 \(line is 195\.3KB\)\. Full output: (.+)\]$/.exec(notice as string);
    assert.ok(m, notice);
    const file = (m as RegExpExecArray)[1] as string;
    try {
      assert.is((await readFile(file, 'utf8')).length, 200000);
    } finally {
      await rm(file, { force: true });
    }
  }));

test('output over the byte limit with short lines reports the 50KB limit', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'for i in $(seq 1 1500); do printf "%099d\\n" $i; done' }, context(ws));
    const [body, notice] = r.text.split('\n\n');
    const lines = (body as string).split('\n');
    assert.is(lines[lines.length - 1], `${'0'.repeat(95)}1500`);
    assert.ok(Buffer.byteLength(body as string) <= 50 * 1024);
    const m = /^\[Showing lines (\d+)-1500 of 1500 \(50\.0KB limit\)\. Full output: (.+)\]$/.exec(notice as string);
    assert.ok(m, notice);
    assert.is(Number((m as RegExpExecArray)[1]), 1500 - lines.length + 1);
    await rm((m as RegExpExecArray)[2] as string, { force: true });
  }));

test('keeps the newest MAX_FULL_OUTPUT_FILES full-output files and deletes older ones, nothing else', () =>
  inSandbox({}, async ({ root, ws }) => {
    // A temp directory of its own (os.tmpdir() follows TMPDIR), so no other test's files are in play.
    const tmp = path.join(root, 'tmp');
    await mkdir(tmp);
    const seeded = Array.from({ length: MAX_FULL_OUTPUT_FILES + 5 }, (_, i) => `${FULL_OUTPUT_PREFIX}seed${String(i).padStart(2, '0')}.log`);
    const anHourAgo = Date.now() / 1000 - 3600;
    for (const [i, name] of seeded.entries()) {
      await writeFile(path.join(tmp, name), 'old output');
      await utimes(path.join(tmp, name), anHourAgo + i, anHourAgo + i);
    }
    await writeFile(path.join(tmp, 'unrelated.log'), '');
    await writeFile(path.join(tmp, `${FULL_OUTPUT_PREFIX}notes.txt`), '');
    await mkdir(path.join(tmp, `${FULL_OUTPUT_PREFIX}dir.log`));

    const savedTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    let r: ToolOutcome;
    try {
      r = await bashTool({ command: 'seq 1 3000' }, context(ws));
    } finally {
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
    }

    const newest = /Full output: (.+)\]$/.exec(r.text)?.[1];
    assert.ok(newest !== undefined && path.dirname(newest) === tmp, r.text);
    assert.is(await readFile(newest, 'utf8'), Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(''));
    const kept = seeded.slice(seeded.length - (MAX_FULL_OUTPUT_FILES - 1));
    const expected = [...kept, path.basename(newest), 'unrelated.log', `${FULL_OUTPUT_PREFIX}notes.txt`, `${FULL_OUTPUT_PREFIX}dir.log`];
    assert.equal((await readdir(tmp)).sort(), expected.sort());
  }));

test('progress is reported as bytes of output, throttled', () =>
  inSandbox({}, async ({ ws }) => {
    const reports: ToolProgress[] = [];
    const r = await bashTool(
      { command: 'for i in 1 2 3 4; do echo tick$i; sleep 0.2; done' },
      context(ws, { onProgress: (p) => reports.push(p) }),
    );
    assert.is(r.text, 'tick1\ntick2\ntick3\ntick4\n');
    assert.ok(reports.length >= 2 && reports.length <= 4, `reports: ${reports.length}`);
    for (let i = 1; i < reports.length; i++) assert.ok((reports[i] as ToolProgress).progress > (reports[i - 1] as ToolProgress).progress);
    assert.ok((reports[reports.length - 1] as ToolProgress).progress <= 24);
  }));

test('the bash input schema accepts command and timeout and rejects bad or unknown ones', () => {
  const validate = new Ajv({ strict: true }).compile(bashDefinition.inputSchema);
  assert.ok(validate({ command: 'ls', timeout: 0 }), JSON.stringify(validate.errors));
  assert.ok(validate({ command: 'ls', timeout: 2.5 }), JSON.stringify(validate.errors));
  for (const bad of [{}, { command: '' }, { command: 'ls', timeout: -1 }, { command: 'ls', cwd: '/' }]) {
    assert.not.ok(validate(bad), JSON.stringify(bad));
  }
});

test.run();

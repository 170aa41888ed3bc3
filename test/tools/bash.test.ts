import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { bashTool, FULL_OUTPUT_PREFIX, PROGRESS_INTERVAL_MS } from '../../src/tools/bash.ts';
import { MAX_FULL_OUTPUT_FILE_BYTES, MAX_FULL_OUTPUT_FILES, MAX_FULL_OUTPUT_TOTAL_BYTES, TAIL_KEEP_BYTES } from '../../src/limits.ts';
import { type BashIsolation, bashIsolation, knownBashIsolation, probeBashIsolation, useBashIsolation } from '../../src/tools/bash-isolation.ts';
import { allowedEnvironment } from '../../src/tools/sandbox/policy.ts';
import { bashDefinition } from '../../src/tools/definitions/bash.ts';
import { BASH_DEFAULT_TIMEOUT_SECONDS } from '../../src/limits.ts';
import type { ToolOutcome, ToolProgress } from '../../src/tools/contract.ts';
import { guarded } from '../hang-guard.ts';
import { context, inSandbox } from './sandbox.ts';
import { allGone, killLeftovers, uniqueSleep } from './processes.ts';

/** Runs `body` with a fresh `sleep` marker and kills whatever still carries it afterwards, pass or fail. */
async function withMarker(body: (arg: string) => Promise<void>): Promise<void> {
  const arg = uniqueSleep();
  try {
    await body(arg);
  } finally {
    killLeftovers(arg);
  }
}

/** Runs `body` with the full-output files in a temp directory of its own (os.tmpdir() follows TMPDIR). */
async function withTmpdir<T>(tmp: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/** Runs `body` under `isolation`, then restores the probed one. */
async function under(isolation: BashIsolation, body: () => Promise<void>): Promise<void> {
  useBashIsolation(isolation);
  try {
    await body();
  } finally {
    useBashIsolation(await probeBashIsolation());
  }
}

// The tests below find the edges through these constants; this ties them to the README's `bash` row,
// written as literals.
test('the bash limits are the README\'s: 180 s timeout, 100 KB tail, 20 full-output files of 64 MiB, 256 MiB in all', () => {
  assert.equal(
    { BASH_DEFAULT_TIMEOUT_SECONDS, TAIL_KEEP_BYTES, MAX_FULL_OUTPUT_FILES, MAX_FULL_OUTPUT_FILE_BYTES, MAX_FULL_OUTPUT_TOTAL_BYTES },
    { BASH_DEFAULT_TIMEOUT_SECONDS: 180, TAIL_KEEP_BYTES: 102_400, MAX_FULL_OUTPUT_FILES: 20, MAX_FULL_OUTPUT_FILE_BYTES: 67_108_864, MAX_FULL_OUTPUT_TOTAL_BYTES: 268_435_456 },
  );
});

test('bash returns stdout and stderr interleaved', () =>
  inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'echo out1; echo err1 >&2; sleep 0.05; echo out2' }, context(ws));
    // stdout and stderr are two pipes: which of out1 and err1 is read first is the scheduler's choice
    // (a loaded machine reorders them), so the check is the content and each stream's own order.
    const lines = r.text.split('\n');
    assert.equal([...lines].sort(), ['', 'err1', 'out1', 'out2']);
    assert.is(lines.at(-1), '');
    assert.ok(lines.indexOf('out1') < lines.indexOf('out2'), r.text);
    assert.not.ok(r.isError);
  }));

test('bash says "(no output)" for a silent command', () =>
  inSandbox({}, async ({ ws }) => {
    assert.equal(await bashTool({ command: 'true' }, context(ws)), { text: '(no output)', structured: { exitCode: 0, signal: null, timedOut: false, aborted: false, output: '', truncated: false, notices: [] } });
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

// PIDs a command prints are its namespace's, not ours: the tests find processes by a unique marker instead.
test('a timeout kills the whole process tree and reports "Command timed out after N seconds"', () =>
  inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    // The command would sleep 300 s: only the 1 s timeout can end it within the guard.
    const r = await guarded(bashTool({ command: `sleep ${arg} & echo started; sleep ${arg}; wait`, timeout: 1 }, context(ws)), 'the timed-out command');
    assert.is(r.isError, true);
    // As the first process of its namespace the shell outlives the SIGTERM (and may say "Terminated").
    assert.ok(r.text.startsWith('started\n') && r.text.endsWith('\n\nCommand timed out after 1 seconds'), r.text);
    assert.ok(await allGone(arg), `background sleep ${arg} is still running`);
  })));

test('background processes do not outlive a command that finishes normally', () =>
  inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    const r = await bashTool({ command: `sleep ${arg} & sleep 0.2; echo started` }, context(ws));
    assert.equal(r, { text: 'started\n', structured: { exitCode: 0, signal: null, timedOut: false, aborted: false, output: 'started\n', truncated: false, notices: [] } });
    assert.ok(await allGone(arg), `background sleep ${arg} is still running`);
  })));

test('an abort through the signal kills the command and reports "Command aborted" with the output so far', () =>
  inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    // The command would wait 300 s: only the abort can end it within the guard.
    const r = await guarded(bashTool({ command: `echo started; sleep ${arg} & wait` }, context(ws, { signal: controller.signal })), 'the aborted command');
    assert.is(r.isError, true);
    assert.is(r.text, 'started\n\nCommand aborted');
    assert.ok(await allGone(arg), `background sleep ${arg} is still running`);
  })));

test('on Linux with namespaces, a command runs in a PID namespace of its own and sees only its own processes', async () => {
  const isolation = await bashIsolation();
  if (isolation.kind === 'process-group') {
    console.log(`  (no PID namespace here: ${isolation.reason})`);
    return;
  }
  await inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: 'echo $$; ls /proc | grep -c "^[0-9]"' }, context(ws));
    const [pid, count] = r.text.trim().split('\n').map(Number);
    // Under the stopper (PID 1, or 2 under bwrap's init): the shell's number is the namespace's, a small one.
    assert.is(pid, isolation.kind === 'bubblewrap' ? 3 : 2);
    // bwrap's init, the stopper and its watcher, the shell, ls, grep (and the subshell of the pipe): a handful, not the machine's process list.
    assert.ok((count as number) <= 7, r.text);
  });
});

test('as a user other than root, the probe runs commands in a PID namespace inside a user namespace (or says why not)', async () => {
  if (process.getuid?.() !== 0) {
    console.log('  (not root: the other tests already ran the probe as this user)');
    return;
  }
  const asNobody = ['--reuid=65534', '--regid=65534', '--clear-groups'];
  // The other user must reach the checkout and tsx: a clone inside a private folder (mktemp -d, 0700) is not theirs to read.
  const needed = [path.resolve('src/tools/bash-isolation.ts'), fileURLToPath(import.meta.resolve('tsx'))];
  const unreadable = needed.filter((file) => spawnSync('setpriv', [...asNobody, 'test', '-r', file]).status !== 0);
  if (unreadable.length > 0) {
    console.log(`  (skipped: user 65534 cannot read ${unreadable.join(' and ')}: the checkout lies where only its owner may go)`);
    return;
  }
  const probe = `const m = await import(${JSON.stringify(path.resolve('src/tools/bash-isolation.ts'))}); console.log(JSON.stringify(await m.probeBashIsolation()))`;
  const r = spawnSync('setpriv', [...asNobody, process.execPath, '--import', 'tsx', '-e', probe], {
    encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: os.tmpdir() },
  });
  assert.is(r.status, 0, r.stderr);
  const isolation = JSON.parse(r.stdout.trim().split('\n').pop() as string) as BashIsolation;
  if (isolation.kind === 'bubblewrap') {
    assert.is(isolation.root, false);
  } else if (isolation.kind === 'pid-namespace') {
    assert.is(isolation.userNamespace, true);
    assert.ok(isolation.launcher.includes('--map-root-user'), JSON.stringify(isolation));
  } else {
    assert.match(isolation.reason, /--user --map-root-user/);
  }
});

test('the isolation in force is known synchronously once probed (health reports it)', async () => {
  const isolation = await bashIsolation();
  assert.equal(knownBashIsolation(), isolation);
});

test('the process-group fallback still kills background processes that stay in the group, and runs the command normally', () =>
  under({ kind: 'process-group', reason: 'forced by the test' }, () =>
    inSandbox({}, ({ ws }) => withMarker(async (arg) => {
      const r = await bashTool({ command: `sleep ${arg} & sleep 0.2; pwd -P; [ $$ -ne 1 ] && echo not-pid-1` }, context(ws));
      assert.equal(r.text, `${ws}\nnot-pid-1\n`);
      assert.ok(await allGone(arg), `background sleep ${arg} is still running`);
      const t = await bashTool({ command: `sleep ${arg} & echo started; sleep ${arg}`, timeout: 1 }, context(ws));
      assert.is(t.text, 'started\n\nCommand timed out after 1 seconds');
      assert.ok(await allGone(arg), `sleep ${arg} outlived the timeout`);
    }))));

test('the command environment is an allow-list: PATH, HOME, LANG, LC_*, TERM, USER, SHELL, TZ, TMPDIR and the names given, nothing else', () => {
  assert.equal(
    allowedEnvironment(['MY_VAR'], { PATH: '/bin', HOME: '/h', LC_ALL: 'C', TZ: 'UTC', SUPERPI_API_KEY: 'k', PGPASSWORD: 'p', AWS_SECRET_ACCESS_KEY: 'a', GITHUB_TOKEN: 't', OPENAI_API_KEY: 'o', MY_VAR: 'kept', OTHER: 'dropped' }),
    { PATH: '/bin', HOME: '/h', LC_ALL: 'C', TZ: 'UTC', MY_VAR: 'kept' },
  );
});

test('an already aborted signal runs nothing', () =>
  inSandbox({}, async ({ ws }) => {
    const controller = new AbortController();
    controller.abort();
    const r = await bashTool({ command: 'touch ran' }, context(ws, { signal: controller.signal }));
    assert.equal(r, { text: 'Command aborted', isError: true, structured: { exitCode: null, signal: null, timedOut: false, aborted: true, output: '', truncated: false, notices: [] } });
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

    const r: ToolOutcome = await withTmpdir(tmp, () => bashTool({ command: 'seq 1 3000' }, context(ws)));

    const newest = /Full output: (.+)\]$/.exec(r.text)?.[1];
    assert.ok(newest !== undefined && path.dirname(newest) === tmp, r.text);
    assert.is(await readFile(newest, 'utf8'), Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(''));
    const kept = seeded.slice(seeded.length - (MAX_FULL_OUTPUT_FILES - 1));
    const expected = [...kept, path.basename(newest), 'unrelated.log', `${FULL_OUTPUT_PREFIX}notes.txt`, `${FULL_OUTPUT_PREFIX}dir.log`];
    assert.equal((await readdir(tmp)).sort(), expected.sort());
  }));

test('full-output files beyond MAX_FULL_OUTPUT_TOTAL_BYTES in all are deleted, oldest first, whatever their count', () =>
  inSandbox({}, async ({ root, ws }) => {
    const tmp = path.join(root, 'tmp');
    await mkdir(tmp);
    // Sparse files: their size counts, their blocks cost nothing. Four of a third of the cap: two fit beside a new one.
    const third = Math.floor(MAX_FULL_OUTPUT_TOTAL_BYTES / 3);
    const seeded = ['a', 'b', 'c', 'd'].map((x) => `${FULL_OUTPUT_PREFIX}big-${x}.log`);
    const anHourAgo = Date.now() / 1000 - 3600;
    for (const [i, name] of seeded.entries()) {
      await writeFile(path.join(tmp, name), '');
      await truncate(path.join(tmp, name), third);
      await utimes(path.join(tmp, name), anHourAgo + i, anHourAgo + i);
    }
    const r = await withTmpdir(tmp, () => bashTool({ command: 'seq 1 3000' }, context(ws)));
    const newest = /Full output: (.+)\]$/.exec(r.text)?.[1];
    assert.ok(newest !== undefined, r.text);
    assert.equal((await readdir(tmp)).sort(), [path.basename(newest), seeded[2], seeded[3]].sort());
  }));

test('a full-output file stops growing at MAX_FULL_OUTPUT_FILE_BYTES and the notice says it holds only the beginning', () =>
  inSandbox({}, async ({ root, ws }) => {
    const tmp = path.join(root, 'tmp');
    await mkdir(tmp);
    const total = MAX_FULL_OUTPUT_FILE_BYTES + 1024 * 1024;
    // Lines of 1 KiB, numbered, so the tail shows the end of the output and the file its beginning.
    const r = await withTmpdir(tmp, () => bashTool({ command: `seq -f '%01023.0f' 1 ${total / 1024}` }, context(ws)));
    assert.not.ok(r.isError, r.text.slice(-300));
    const m = /\[Showing lines (\d+)-(\d+) of (\d+) \(50\.0KB limit\)\. Full output \(only its first 64\.0MB of 65\.0MB: the file is capped at 64\.0MB\): (.+)\]$/.exec(r.text);
    assert.ok(m, r.text.slice(-300));
    const [, , last, count, file] = m as RegExpExecArray;
    assert.is(Number(last), total / 1024);
    assert.is(Number(count), total / 1024);
    assert.ok(r.text.includes(`${String(total / 1024).padStart(1023, '0')}\n`), 'the tail has the last line');
    assert.is((await stat(file as string)).size, MAX_FULL_OUTPUT_FILE_BYTES);
    const head = (await readFile(file as string, 'utf8')).slice(0, 2048);
    assert.is(head, `${'1'.padStart(1023, '0')}\n${'2'.padStart(1023, '0')}\n`);
  }));

test('progress is reported as bytes of output, throttled', () =>
  inSandbox({}, async ({ ws }) => {
    const reports: ToolProgress[] = [];
    const times: number[] = [];
    const r = await bashTool(
      { command: 'for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 0.1; done' },
      context(ws, { onProgress: (p) => { reports.push(p); times.push(Date.now()); } }),
    );
    assert.is(r.text, 'tick1\ntick2\ntick3\ntick4\ntick5\ntick6\ntick7\ntick8\n');
    // How many reports a loaded machine lets through varies (ticks read together make one); what holds
    // is their content and order: bytes of whole lines so far (6 a line), rising, at most the 48 total,
    // and never two within PROGRESS_INTERVAL_MS (a lower bound, which load cannot break; the ticks come
    // every 100 ms, so reports without the throttle would be closer).
    assert.ok(reports.length >= 1 && reports.length <= 8, `reports: ${reports.length}`);
    for (const [i, p] of reports.entries()) {
      assert.ok(p.progress > 0 && p.progress <= 48 && p.progress % 6 === 0, `report ${i}: ${p.progress}`);
      assert.match(p.message ?? '', new RegExp(`of output, ${p.progress / 6} lines$`));
      if (i === 0) continue;
      assert.ok(p.progress > (reports[i - 1] as ToolProgress).progress, `report ${i} rises`);
      assert.ok((times[i] as number) - (times[i - 1] as number) >= PROGRESS_INTERVAL_MS - 5, `report ${i} came ${(times[i] as number) - (times[i - 1] as number)} ms after the last`);
    }
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

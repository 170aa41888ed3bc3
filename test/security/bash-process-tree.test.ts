// Threat-model rule: `bash` runs in its own process tree that is killed as a whole — no process a command
// starts outlives the call (its normal end, its timeout, its cancellation) or the server (even SIGKILLed),
// however it detaches (setsid, double fork, nohup, disown); and a command never sees the server's own
// secrets (SUPERPI_* variables: model API keys, bearer tokens).
// Caller classes: every caller that may run `bash` — the local stdio user, a token principal with
// confirmation, an anonymous remote caller where the operator allowed it — and workspace content (a build
// script run by `bash` is the repository's code).
// Needs Linux PID namespaces (root, or unprivileged user namespaces): where the server falls back to the
// process group, setsid escapes by design and these tests say so and stop.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bashTool } from '../../src/tools/bash.ts';
import { bashIsolation, describeIsolation } from '../../src/tools/bash-isolation.ts';
import { defaultPolicy, useSandboxPolicy } from '../../src/tools/sandbox/policy.ts';
import { bashCall, initialize, initialized, startStdio } from '../cli/stdio-process.ts';
import { context, inSandbox } from '../tools/sandbox.ts';
import { allGone, atLeast, escapingCommand, killLeftovers, uniqueSleep } from '../tools/processes.ts';

/** False (with a note) where the process-group fallback is in force: nothing here can hold there. */
async function namespacesInForce(): Promise<boolean> {
  const isolation = await bashIsolation();
  if (isolation.kind === 'bubblewrap' || (isolation.kind === 'pid-namespace' && isolation.diesWithServer)) return true;
  console.log(`  (bash isolation here: ${describeIsolation(isolation)}; process-tree rules not checked)`);
  return false;
}

/** Runs `body` with a fresh marker, and kills whatever still carries it afterwards, pass or fail. */
async function withMarker(body: (arg: string) => Promise<void>): Promise<void> {
  const arg = uniqueSleep();
  try {
    await body(arg);
  } finally {
    killLeftovers(arg);
  }
}

test('setsid, double-forked, nohup and disowned children are killed when the command ends normally', async () => {
  if (!(await namespacesInForce())) return;
  await inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    const r = await bashTool({ command: escapingCommand(arg, false) }, context(ws));
    assert.is(r.text, 'started\n');
    assert.not.ok(r.isError);
    assert.ok(await allGone(arg), `still running: sleep ${arg}`);
  }));
});

test('they are killed when the command times out', async () => {
  if (!(await namespacesInForce())) return;
  await inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    const r = await bashTool({ command: escapingCommand(arg, true), timeout: 1 }, context(ws));
    assert.is(r.isError, true);
    assert.ok(r.text.startsWith('started\n') && r.text.endsWith('\n\nCommand timed out after 1 seconds'), r.text);
    assert.ok(await allGone(arg), `still running: sleep ${arg}`);
  }));
});

test('they are killed when the call is cancelled', async () => {
  if (!(await namespacesInForce())) return;
  await inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    const controller = new AbortController();
    const call = bashTool({ command: escapingCommand(arg, true) }, context(ws, { signal: controller.signal }));
    await atLeast(arg, 5);
    controller.abort();
    const r = await call;
    assert.is(r.text, 'started\n\nCommand aborted');
    assert.ok(await allGone(arg), `still running: sleep ${arg}`);
  }));
});

test('they are killed when the server running the command is SIGKILLed', async () => {
  if (!(await namespacesInForce())) return;
  await inSandbox({}, ({ ws }) => withMarker(async (arg) => {
    // node --import tsx: the server is this very process, no wrapper between (kill -9 must hit the server).
    const server = startStdio(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws]);
    try {
      server.send(initialize);
      await server.reply(1);
      server.send(initialized);
      server.send(bashCall(2, escapingCommand(arg, true)));
      await atLeast(arg, 5);
      server.child.kill('SIGKILL');
      await server.exited;
      assert.ok(await allGone(arg), `still running after the server was SIGKILLed: sleep ${arg}`);
    } finally {
      server.cleanup();
    }
  }));
});

test('a command does not see the server\'s SUPERPI_* variables (API keys, tokens) but sees those the operator named', () =>
  inSandbox({}, async ({ ws }) => {
    const names = ['SUPERPI_API_KEY', 'SUPERPI_ANTHROPIC_API_KEY', 'SUPERPI_TOKENS', 'superpi_lowercase_key'];
    const saved = new Map<string, string | undefined>([...names, 'SUPERPI_TEST_ORDINARY_NEIGHBOUR'].map((n) => [n, process.env[n]]));
    for (const n of names) process.env[n] = `secret-${n}`;
    process.env.SUPERPI_TEST_ORDINARY_NEIGHBOUR = 'also-withheld';
    process.env.ORDINARY_VARIABLE_FOR_TEST = 'visible';
    useSandboxPolicy({ ...defaultPolicy(), env: ['ORDINARY_VARIABLE_FOR_TEST'] });
    try {
      const r = await bashTool({ command: 'env' }, context(ws));
      assert.not.ok(r.isError, r.text);
      for (const n of names) assert.not.ok(r.text.includes(`secret-${n}`), `${n} leaked to the command`);
      assert.not.ok(/^SUPERPI_/im.test(r.text), r.text);
      assert.ok(r.text.includes('ORDINARY_VARIABLE_FOR_TEST=visible'), 'a variable named with --bash-env reaches the command');
    } finally {
      useSandboxPolicy(defaultPolicy());
      for (const [n, v] of saved) {
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
      }
      delete process.env.ORDINARY_VARIABLE_FOR_TEST;
    }
  }));

test.run();

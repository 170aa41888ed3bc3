// The stdio server as a host runs it, stopped by a signal: it stops reading, lets the request in flight
// finish, answers what is left with an error, and exits 0 with nothing of its process tree left — whether
// the host launched the server itself, the tsx wrapper, the bin, or `npx tsx examples/stdio.ts`.

import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allGone, atLeast, killLeftovers, uniqueSleep } from '../tools/processes.ts';
import { inSandbox } from '../tools/sandbox.ts';
import { bashCall, commandLineOf, groupGone, groupMembers, initialize, initialized, repoRoot, type StdioProcess, startStdio } from './stdio-process.ts';

/** Well within DRAIN_GRACE_MS, and short enough for a test. */
const EXIT_WITHIN_MS = 8000;

async function started(server: StdioProcess): Promise<void> {
  server.send(initialize);
  await server.reply(1);
  server.send(initialized);
}

/**
 * `sleep 1.<unique digits>; echo done` and its sleep's argument: a test signals the server once that sleep
 * runs (the call is in flight), not after a fixed wait a loaded machine could outlast before the call is read.
 */
function runningASecond(): { command: string; sleep: string } {
  const sleep = `1.${uniqueSleep().split('.')[1]}`;
  return { command: `sleep ${sleep}; echo done`, sleep };
}

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms); });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `text` shows up in the server's stderr. */
async function logged(server: StdioProcess, text: string, withinMs = EXIT_WITHIN_MS): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!server.stderr().includes(text)) {
    if (Date.now() > deadline) throw new Error(`"${text}" not logged; stderr:\n${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const launches: [string, (ws: string) => [string, string[]]][] = [
  ['the server itself (node --import tsx examples/stdio.ts)', (ws) => [process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws]]],
  ['the tsx wrapper (tsx examples/stdio.ts, which runs the server as its child)', (ws) => [path.join(repoRoot, 'node_modules/.bin/tsx'), ['examples/stdio.ts', '--workspace', ws]]],
  ['the bin (super-pi --stdio)', (ws) => [process.execPath, ['bin/super-pi.js', '--stdio', '--workspace', ws]]],
];

for (const [name, command] of launches) {
  test(`SIGTERM to ${name}: the bash call in flight is answered, exit code 0, no process of the tree left`, () =>
    inSandbox({}, async ({ ws }) => {
      const [file, args] = command(ws);
      const server = startStdio(file, args);
      try {
        await started(server);
        const call = runningASecond();
        server.send(bashCall(2, call.command));
        await atLeast(call.sleep, 1);
        server.child.kill('SIGTERM');
        const reply = await server.reply(2, EXIT_WITHIN_MS);
        assert.equal((reply.result as { content?: unknown } | undefined)?.content, [{ type: 'text', text: 'done\n' }]);
        const exit = await within(server.exited, EXIT_WITHIN_MS, 'exit after SIGTERM');
        assert.equal(exit, { code: 0, signal: null }, server.stderr());
        assert.match(server.stderr(), /SIGTERM: draining/);
        assert.ok(await groupGone(server.group, EXIT_WITHIN_MS), `left: ${groupMembers(server.group).join(', ')}`);
      } finally {
        server.cleanup();
      }
    }));
}

test('SIGINT drains the same way', () =>
  inSandbox({}, async ({ ws }) => {
    const server = startStdio(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws]);
    try {
      await started(server);
      const call = runningASecond();
      server.send(bashCall(2, call.command));
      await atLeast(call.sleep, 1);
      server.child.kill('SIGINT');
      assert.equal(((await server.reply(2, EXIT_WITHIN_MS)).result as { content?: unknown } | undefined)?.content, [{ type: 'text', text: 'done\n' }]);
      assert.equal(await within(server.exited, EXIT_WITHIN_MS, 'exit after SIGINT'), { code: 0, signal: null });
    } finally {
      server.cleanup();
    }
  }));

test('a second SIGTERM cuts the drain short: the call still in flight gets an error, its command is killed, exit code 0', () =>
  inSandbox({}, async ({ ws }) => {
    const arg = uniqueSleep();
    const server = startStdio(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws]);
    try {
      await started(server);
      server.send(bashCall(2, `sleep ${arg}`));
      await atLeast(arg, 1);
      server.child.kill('SIGTERM');
      await logged(server, 'SIGTERM: draining');
      server.child.kill('SIGTERM');
      const reply = await server.reply(2, EXIT_WITHIN_MS);
      const error = reply.error as { code: number; message: string };
      assert.is(error.code, -32010);
      assert.match(error.message, /the server is shutting down/);
      assert.equal(await within(server.exited, EXIT_WITHIN_MS, 'exit after two SIGTERMs'), { code: 0, signal: null });
      assert.ok(await allGone(arg), `sleep ${arg} outlived the server`);
      // Exactly one answer to the request: the late "Command aborted" result must not follow the error.
      const answers = server.stdout().split('\n').filter((l) => l !== '' && (JSON.parse(l) as { id?: unknown }).id === 2);
      assert.is(answers.length, 1, server.stdout());
    } finally {
      server.cleanup();
      killLeftovers(arg);
    }
  }));

test('SIGTERM to npx (npx tsx examples/stdio.ts, over real pipes as most hosts use): the server drains and its whole tree ends', () =>
  inSandbox({}, async ({ ws }) => {
    // `cat |` puts a real pipe (not Node's socketpair) between this test and npx, as a Python or Go host would.
    const host = startStdio('/bin/sh', ['-c', `cat | exec npx tsx examples/stdio.ts --workspace '${ws}'`]);
    try {
      await started(host);
      const call = runningASecond();
      host.send(bashCall(2, call.command));
      await atLeast(call.sleep, 1);
      const npx = groupMembers(host.group).find((pid) => commandLineOf(pid)?.startsWith('npm exec'));
      assert.ok(npx !== undefined, 'npx is running');
      process.kill(npx, 'SIGTERM');
      const reply = await host.reply(2, EXIT_WITHIN_MS);
      assert.equal((reply.result as { content?: unknown } | undefined)?.content, [{ type: 'text', text: 'done\n' }], `${JSON.stringify(reply)}\n${host.stderr()}`);
      await logged(host, 'drained; exiting');
      // npm itself ends by the signal (its shell died of it and npm re-raises it); what matters is what is
      // left: only this test's `sh` and `cat`, which still hold the host's end of the pipe.
      const deadline = Date.now() + EXIT_WITHIN_MS;
      const rest = () => groupMembers(host.group).filter((pid) => pid !== host.group && (commandLineOf(pid) ?? 'cat\0') !== 'cat\0');
      while (rest().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(rest(), [], host.stderr());
    } finally {
      host.cleanup();
    }
  }));

test('a wrapper between the host and the server (sharing its stdin) that is SIGKILLed makes the server drain and exit', () =>
  inSandbox({}, async ({ ws }) => {
    // The inner sh is the wrapper (`; :` keeps it from exec-ing node); a SIGKILL to it is passed on to no
    // one. `cat |` keeps the server's stdin open after it dies, as a host that has not noticed yet would.
    const host = startStdio('/bin/sh', ['-c', `cat | /bin/sh -c "${process.execPath} --import tsx examples/stdio.ts --workspace '${ws}'; :"`]);
    try {
      await started(host);
      const call = runningASecond();
      host.send(bashCall(2, call.command));
      await atLeast(call.sleep, 1);
      const wrapper = groupMembers(host.group).find((pid) => commandLineOf(pid)?.startsWith('/bin/sh\0-c\0/'));
      assert.ok(wrapper !== undefined, 'the inner sh runs');
      process.kill(wrapper, 'SIGKILL');
      const reply = await host.reply(2, EXIT_WITHIN_MS);
      assert.equal((reply.result as { content?: unknown } | undefined)?.content, [{ type: 'text', text: 'done\n' }], `${JSON.stringify(reply)}\n${host.stderr()}`);
      await logged(host, 'the process the host launched has ended: draining');
      await logged(host, 'drained; exiting');
      const deadline = Date.now() + EXIT_WITHIN_MS;
      const rest = () => groupMembers(host.group).filter((pid) => pid !== host.group && (commandLineOf(pid) ?? 'cat\0') !== 'cat\0');
      while (rest().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(rest(), [], host.stderr());
    } finally {
      host.cleanup();
    }
  }));

test.run();

// A stopped command ends whole: once a call is cancelled or times out, no command after it in the command
// line runs, whatever joins them (`;`, `&&`, `||`, a newline, a subshell) and even when the shell ignores
// SIGTERM. The old stop sent SIGTERM to the group: the sleep died and the shell ran the next command.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { bashTool } from '../../src/tools/bash.ts';
import { type BashIsolation, findExecutable, probeBashIsolation, SYSTEM_BIN_DIRS, useBashIsolation } from '../../src/tools/bash-isolation.ts';
import { guarded } from '../hang-guard.ts';
import { context, inSandbox } from './sandbox.ts';

/** Each writes `f` in the workspace after a 2 s sleep unless the whole command was stopped first. */
const COMMANDS: Record<string, string> = {
  ';': 'sleep 2; echo ran > f',
  '&&': 'sleep 2 && echo ran > f',
  '||': 'sleep 2 || echo ran > f',
  newline: 'sleep 2\necho ran > f',
  subshell: '(sleep 2; echo ran > f)',
  'a trap that ignores TERM': "trap '' TERM; sleep 2; echo ran > f",
  'a trap that runs a command on TERM': "trap 'echo trapped > f' TERM; sleep 2; echo ran > f",
};

/** Past the sleep of every command, with room: a command that was not stopped whole has written `f` by then. */
const AFTER_SLEEP_MS = 3000;

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/** Runs every command at once (each in its own workspace), stopped by `how`; resolves to those that wrote `f`. */
async function survivors(how: 'timeout' | 'cancel'): Promise<string[]> {
  const wrote: string[] = [];
  await Promise.all(Object.entries(COMMANDS).map(([name, command]) => inSandbox({}, async ({ ws }) => {
    const controller = new AbortController();
    if (how === 'cancel') setTimeout(() => controller.abort(), 700);
    const r = await guarded(bashTool({ command, ...(how === 'timeout' ? { timeout: 1 } : {}) }, context(ws, { signal: controller.signal })), name);
    assert.is(r.isError, true, `${name}: ${r.text}`);
    assert.ok(r.text.endsWith(how === 'timeout' ? 'Command timed out after 1 seconds' : 'Command aborted'), `${name}: ${r.text}`);
    await new Promise((done) => setTimeout(done, AFTER_SLEEP_MS));
    if (await exists(path.join(ws, 'f'))) wrote.push(name);
  })));
  return wrote;
}

async function under(isolation: BashIsolation | null, body: () => Promise<void>): Promise<void> {
  if (isolation !== null) useBashIsolation(isolation);
  try {
    await body();
  } finally {
    useBashIsolation(await probeBashIsolation());
  }
}

test('a timeout ends the whole command line: nothing after ;, &&, ||, a newline, in a subshell or past a TERM trap runs', () =>
  under(null, async () => assert.equal(await survivors('timeout'), []))
);

test('a cancel ends the whole command line the same way', () =>
  under(null, async () => assert.equal(await survivors('cancel'), []))
);

test('the process-group fallback ends the whole command line too, on timeout and on cancel', () =>
  under({ kind: 'process-group', reason: 'forced by the test' }, async () => {
    assert.equal(await survivors('timeout'), []);
    assert.equal(await survivors('cancel'), []);
  })
);

test('the PID-namespace fallback (no bwrap) ends the whole command line too, on timeout and on cancel', async () => {
  const unshare = await findExecutable('unshare', SYSTEM_BIN_DIRS);
  if (unshare === null || process.platform !== 'linux') return;
  const root = process.getuid?.() === 0;
  const launcher = [unshare, ...(root ? [] : ['--user', '--map-root-user']), '--pid', '--fork', '--kill-child', '--mount-proc'];
  await under({ kind: 'pid-namespace', reason: 'forced by the test', launcher, userNamespace: !root, diesWithServer: false }, async () => {
    assert.equal(await survivors('timeout'), []);
    assert.equal(await survivors('cancel'), []);
  });
});

/**
 * The stopper's listener is the command's sibling (the other child of $PPID), a process of the same user:
 * this kills it. The sleep ends after the cancel (700 ms) and before the SIGKILL that follows it (KILL_GRACE_MS).
 */
const SABOTAGE: Record<string, string> = {
  'kills the listener': 'for k in $(cat /proc/$PPID/task/$PPID/children); do [ "$k" != $$ ] && kill -9 "$k"; done; sleep 0.95; echo ran > f',
};

test('a command that kills the stopper\'s listener is still frozen on cancel: nothing after ; runs (every mode)', async () => {
  if (process.platform !== 'linux') return;
  const modes: (BashIsolation | null)[] = [null, { kind: 'process-group', reason: 'forced by the test' }];
  for (const mode of modes) {
    await under(mode, async () => {
      const wrote: string[] = [];
      for (const [name, command] of Object.entries(SABOTAGE)) {
        await inSandbox({}, async ({ ws }) => {
          const controller = new AbortController();
          setTimeout(() => controller.abort(), 700);
          const r = await guarded(bashTool({ command }, context(ws, { signal: controller.signal })), name);
          assert.ok(r.text.endsWith('Command aborted'), `${name}: ${r.text}`);
          await new Promise((done) => setTimeout(done, 1000));
          if (await exists(path.join(ws, 'f'))) wrote.push(name);
        });
      }
      assert.equal(wrote, [], `${mode?.kind ?? 'probed'}: ${wrote.join(', ')}`);
    });
  }
});

test.run();

// Where no sandbox can be built, remote callers are refused `bash` unless the operator opted in; the local
// user and every other tool are untouched.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { probeBashIsolation, useBashIsolation, type BashIsolation } from '../../../src/tools/bash-isolation.ts';
import type { ToolExecutor } from '../../../src/tools/contract.ts';
import { guardUnsandboxedBash, UNSANDBOXED_BASH_REFUSAL } from '../../../src/tools/sandbox/unsandboxed-guard.ts';

const ran: string[] = [];
const inner: ToolExecutor = async (tool) => {
  ran.push(tool);
  return { text: `ran ${tool}` };
};
const ctx = { workspace: '/w', signal: new AbortController().signal };

async function under(isolation: BashIsolation, body: () => Promise<void>): Promise<void> {
  useBashIsolation(isolation);
  try {
    await body();
  } finally {
    useBashIsolation(await probeBashIsolation());
  }
}

test('without a sandbox: a remote caller\'s bash is refused, naming the flag; its other tools run', () =>
  under({ kind: 'process-group', reason: 'forced by the test' }, async () => {
    ran.length = 0;
    const guarded = guardUnsandboxedBash(inner, true, false);
    assert.equal(await guarded('bash', { command: 'id' }, 'super-pi-code', ctx), { text: UNSANDBOXED_BASH_REFUSAL, isError: true });
    assert.match(UNSANDBOXED_BASH_REFUSAL, /--unsafe-bash-without-sandbox/);
    assert.equal(await guarded('read', { path: 'a' }, 'super-pi-code', ctx), { text: 'ran read' });
    assert.equal(ran, ['read']);
  }));

test('without a sandbox: the local user, and a remote one with --unsafe-bash-without-sandbox, run bash', () =>
  under({ kind: 'process-group', reason: 'forced by the test' }, async () => {
    ran.length = 0;
    await guardUnsandboxedBash(inner, false, false)('bash', { command: 'id' }, 'super-pi-code', ctx);
    await guardUnsandboxedBash(inner, true, true)('bash', { command: 'id' }, 'super-pi-code', ctx);
    assert.equal(ran, ['bash', 'bash']);
  }));

test('with the bubblewrap sandbox: a remote caller runs bash', () =>
  under({ kind: 'bubblewrap', bwrap: '/usr/bin/bwrap', root: true }, async () => {
    ran.length = 0;
    assert.equal(await guardUnsandboxedBash(inner, true, false)('bash', { command: 'id' }, 'super-pi-code', ctx), { text: 'ran bash' });
  }));

test.run();

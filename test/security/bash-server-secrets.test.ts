// Threat-model rule: a `bash` command cannot read a secret the server read from a file. The tokens file and
// SUPERPI_HOME were hidden, but the --state-key-file (which seals 2026-07-28 requestState: whoever holds
// it can forge a confirmation's state) and the --oauth-introspection-secret-file (this server's client
// secret at the issuers) were readable where they lay.
// Caller classes: every caller that may run `bash`, and workspace content a command runs.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clientCredentialsFrom } from '../../src/auth/client-credentials.ts';
import { bashIsolation } from '../../src/tools/bash-isolation.ts';
import { resolveMounts } from '../../src/tools/sandbox/mounts.ts';
import { defaultPolicy } from '../../src/tools/sandbox/policy.ts';
import { connectStdio, textOf } from '../e2e/fixtures.ts';

const STATE_KEY = 'STATE-KEY-SECRET-6c1d-0123456789abcdef0123456789abcdef';

/** Outside /tmp: the sandbox's /tmp is a private one, which would hide a path there for the wrong reason. */
async function ground(): Promise<{ base: string; ws: string }> {
  const base = await realpath(await mkdtemp('/var/tmp/superpi-secrets-'));
  const ws = path.join(base, 'ws');
  await mkdir(ws);
  return { base, ws };
}

test('a command cannot read the --state-key-file, by its path or through a link in the workspace', async () => {
  if ((await bashIsolation()).kind !== 'bubblewrap') {
    console.log('  (no bubblewrap sandbox here: server-secret rule not checked)');
    return;
  }
  const { base, ws } = await ground();
  const keyFile = path.join(base, 'state.key');
  await writeFile(keyFile, `${STATE_KEY}\n`, { mode: 0o600 });
  await symlink(keyFile, path.join(ws, 'key-link'));
  const c = await connectStdio(ws, ['--state-key-file', keyFile], {}, (x) => x, { SUPERPI_HOME: path.join(base, 'sp-home') });
  try {
    const r = textOf(await c.client.callTool({ name: 'bash', arguments: { command: `cat ${keyFile} key-link; echo end` } }));
    assert.ok(r.includes('end'), r);
    assert.not.ok(r.includes(STATE_KEY), `the command read the state key: ${r}`);
  } finally {
    await c.close();
    await rm(base, { recursive: true, force: true });
  }
});

test('the --oauth-introspection-secret-file the server read is hidden from commands', async () => {
  const { base, ws } = await ground();
  try {
    const secretFile = path.join(base, 'introspection.secret');
    await writeFile(secretFile, 'client-secret\n', { mode: 0o600 });
    clientCredentialsFrom({ clientId: 'super-pi', secretFile });
    const mounts = resolveMounts(defaultPolicy({}), ws);
    assert.ok(mounts.some((m) => m.kind === 'hide-file' && m.path === secretFile), JSON.stringify(mounts));
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test.run();

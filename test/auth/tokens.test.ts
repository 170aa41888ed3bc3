// Static bearer tokens: a refused configuration names the pair, never its text — a token and its principal
// written the wrong way round put the token in the message (on the operator's stderr, in a CI log).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseTokenList, readTokenFile, TokenConfigError } from '../../src/auth/tokens.ts';

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    assert.instance(err, TokenConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a TokenConfigError');
}

test('property: a refused SUPERPI_TOKENS pair is named by its place, and the secret written where its principal goes is not in the message', () => {
  fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9!#%+/^_~-]{8,40}$/), fc.stringMatching(/^[a-z]{1,7}$/), (secret, name) => {
    // The secret where the principal goes (not a principal name, or a token too short): refused, unquoted.
    const message = refusal(() => parseTokenList(`goodtoken1=alice,${name}=${secret}!`));
    assert.match(message, /^SUPERPI_TOKENS pair 2: /);
    assert.not.ok(message.includes(secret), message);
  }));
});

test('a refused line of a tokens file is named by file and line, without its text', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tokens-'));
  try {
    const file = path.join(dir, 'tokens.txt');
    await writeFile(file, '# tokens\ngoodtoken1 alice\nbob.builder s3cret-token-value/x\n');
    let message = '';
    await readTokenFile(file).catch((err: unknown) => (message = (err as Error).message));
    assert.is(message, `${file}:3: the principal name must be 1-64 characters of letters, digits, . _ @ - (token first, then principal)`);
    await writeFile(file, 'short alice\n');
    message = '';
    await readTokenFile(file).catch((err: unknown) => (message = (err as Error).message));
    assert.is(message, `${file}:1: the token is shorter than 8 characters`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();

// Where the requestState key comes from: SUPERPI_STATE_KEY or --state-key-file; too short or missing on a
// PostgreSQL store (a cluster) stops the start; a single node may go without (a random key per process).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OptionsError, parseOptions } from '../../src/cli/options.ts';
import { StateKeyError, stateKeyFrom } from '../../src/cli/state-key.ts';
import { MIN_STATE_KEY_BYTES } from '../../src/limits.ts';

const PG = { kind: 'postgres', url: 'postgres://u:p@db/x', label: 'postgres://db/x' } as const;
const SQLITE = { kind: 'sqlite' } as const;
const LONG = 'x'.repeat(MIN_STATE_KEY_BYTES);

test('a single node without a key gets none here (the application draws a random one)', () => {
  assert.is(stateKeyFrom({}, SQLITE), undefined);
  assert.is(stateKeyFrom({ env: '' }, SQLITE), undefined);
});

test('a PostgreSQL node without a key is a start-up error that says how to make one', () => {
  assert.throws(() => stateKeyFrom({}, PG), (e: Error) => e instanceof StateKeyError && /needs SUPERPI_STATE_KEY/.test(e.message) && /every node/.test(e.message));
  assert.throws(() => parseOptions(['--store', PG.url], {}, '/cwd'), (e: Error) => e instanceof OptionsError && /SUPERPI_STATE_KEY/.test(e.message));
});

test('a key shorter than MIN_STATE_KEY_BYTES is refused on any store, and its value is not echoed', () => {
  const short = 'secret-but-short';
  for (const store of [SQLITE, PG]) {
    assert.throws(() => stateKeyFrom({ env: short }, store), (e: Error) => /at least MIN_STATE_KEY_BYTES/.test(e.message) && !e.message.includes(short));
  }
  assert.throws(() => stateKeyFrom({ env: 'é'.repeat(15) }, SQLITE), /30 bytes/, 'counted in UTF-8 bytes, not characters');
});

test('SUPERPI_STATE_KEY gives the key bytes: two nodes given the same text hold the same key', () => {
  assert.equal(stateKeyFrom({ env: LONG }, PG), new TextEncoder().encode(LONG));
  const options = parseOptions(['--store', PG.url], { SUPERPI_STATE_KEY: LONG }, '/cwd');
  assert.equal(options.kind === 'serve' ? options.options.stateKey : null, new TextEncoder().encode(LONG));
});

test('--state-key-file is read (without its trailing newline) and wins over the variable; an unreadable file is an error', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-key-'));
  try {
    const file = path.join(dir, 'key');
    await writeFile(file, `${LONG}\n`);
    assert.equal(stateKeyFrom({ file, env: 'y'.repeat(40) }, PG), new TextEncoder().encode(LONG));
    assert.throws(() => stateKeyFrom({ file: path.join(dir, 'missing') }, PG), /--state-key-file .*cannot read it/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();

// The confined path's own rules: size bounds on whole reads and excerpts, the identity check other
// platforms get instead of /proc/self/fd, and removal inside a checked directory.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fstatSync, openSync, closeSync } from 'node:fs';
import { readdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  checkIdentity, FileRefusedError, openConfined, readConfinedFile, readHead, removeConfinedFile,
} from '../../src/tools/confined-file.ts';
import { closeStep, runAsync, runSync } from '../../src/tools/fs-steps.ts';
import { sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

test('a whole read refuses a file over its bound, naming the bound', async () => {
  await writeFile(path.join(box.ws, 'big.txt'), 'x'.repeat(2048));
  const err = await readConfinedFile(box.ws, 'big.txt', 1024).then(() => null, (e: unknown) => e);
  assert.instance(err, FileRefusedError);
  assert.is((err as FileRefusedError).reason, 'too-large');
  assert.match((err as Error).message, /larger than 1\.0KB/);
  assert.is((await readConfinedFile(box.ws, 'big.txt', 4096)).bytes.length, 2048);
});

test('an excerpt reads at most its bound, whatever the size', async () => {
  await writeFile(path.join(box.ws, 'long.txt'), 'y'.repeat(100_000));
  const head = await runAsync((function* () {
    const opened = yield* openConfined(box.ws, 'long.txt');
    try {
      return yield* readHead(opened, 1000);
    } finally {
      yield* closeStep(opened.file);
    }
  })());
  assert.is(head.length, 1000);
});

test('the identity check (platforms without /proc) refuses a descriptor that is not the file its name now names', async () => {
  await writeFile(path.join(box.ws, 'inside.txt'), 'inside');
  await writeFile(path.join(box.outside, 'secret.txt'), 'secret');
  const real = path.join(box.ws, 'inside.txt');
  const fd = openSync(path.join(box.outside, 'secret.txt'), 'r');
  try {
    // As if the open had gone through a directory swapped for a link: the descriptor is the outside file.
    assert.throws(() => runSync(checkIdentity(box.ws, real, fstatSync(fd), 'inside.txt')), /led outside the workspace/);
  } finally {
    closeSync(fd);
  }
  const own = openSync(real, 'r');
  try {
    runSync(checkIdentity(box.ws, real, fstatSync(own), 'inside.txt'));
  } finally {
    closeSync(own);
  }
});

test('the identity check refuses a name that now leads outside', async () => {
  await writeFile(path.join(box.ws, 'f.txt'), 'inside');
  const real = path.join(box.ws, 'f.txt');
  const fd = openSync(real, 'r');
  try {
    await rename(real, path.join(box.ws, 'moved.txt'));
    await symlink(path.join(box.outside, 'gone.txt'), real);
    assert.throws(() => runSync(checkIdentity(box.ws, real, fstatSync(fd), 'f.txt')), /outside the workspace/);
  } finally {
    closeSync(fd);
  }
});

test('removal unlinks the file inside its checked directory, and reports a missing one', async () => {
  await writeFile(path.join(box.ws, 'gone.txt'), 'x');
  assert.is(await removeConfinedFile(box.ws, 'gone.txt'), true);
  assert.is(await removeConfinedFile(box.ws, 'gone.txt'), false);
  assert.equal(await readdir(box.ws), []);
});

test.run();

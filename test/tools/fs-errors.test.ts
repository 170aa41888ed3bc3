// The shared wording of file-system failures and cancellation for read, write, edit and ls.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolError } from '../../src/tools/contract.ts';
import { errnoCode, fsError, throwIfCancelled } from '../../src/tools/fs-errors.ts';

function errno(code: string, message = `${code}: something happened`): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

test('a permission failure names the action and the path, whatever the tool', () => {
  for (const code of ['EACCES', 'EPERM']) {
    const err = fsError(errno(code), 'a.txt', 'read directory');
    assert.instance(err, ToolError);
    assert.is(err.message, 'Permission denied: cannot read directory a.txt');
  }
});

test('a missing path gets the tool\'s own message, or the generic one when the tool has none', () => {
  const notFound = (shown: string): string => `File not found: ${shown}`;
  assert.is(fsError(errno('ENOENT'), 'x', 'read', { notFound }).message, 'File not found: x');
  assert.is(fsError(errno('ENOTDIR'), 'x/y', 'read', { notFound }).message, 'File not found: x/y');
  assert.is(fsError(errno('ENOENT', 'ENOENT: gone'), 'x', 'open').message, 'Cannot open x: ENOENT: gone');
});

test('ELOOP reads as a swapped-in link only for tools that say how they were using the file', () => {
  assert.is(fsError(errno('ELOOP'), 'a', 'write', { swappedWhile: 'written' }).message, 'a changed into a symbolic link while being written; refused');
  assert.is(fsError(errno('ELOOP', 'ELOOP: loop'), 'a', 'read directory').message, 'Cannot read directory a: ELOOP: loop');
});

test('EISDIR uses the tool\'s message when it has one', () => {
  const isDirectory = (shown: string): string => `${shown} is a directory`;
  assert.is(fsError(errno('EISDIR'), 'd', 'open', { isDirectory }).message, 'd is a directory');
  assert.is(fsError(errno('EISDIR', 'EISDIR: dir'), 'd', 'write').message, 'Cannot write d: EISDIR: dir');
});

test('the original error is kept as the cause, and anything that is not an Error is still described', () => {
  const original = errno('EIO');
  assert.is(fsError(original, 'f', 'read').cause, original);
  assert.is(fsError('disk on fire', 'f', 'read').message, 'Cannot read f: disk on fire');
});

test('errnoCode reads the code of a system-call error only', () => {
  assert.is(errnoCode(errno('ENOENT')), 'ENOENT');
  assert.is(errnoCode(new Error('plain')), undefined);
  assert.is(errnoCode({ code: 42 }), undefined);
  assert.is(errnoCode(null), undefined);
  assert.is(errnoCode('ENOENT'), undefined);
});

test('throwIfCancelled throws a "cancelled" ToolError once the signal is aborted, and nothing before', () => {
  const controller = new AbortController();
  throwIfCancelled(controller.signal);
  controller.abort();
  assert.throws(() => throwIfCancelled(controller.signal), (err: unknown) => err instanceof ToolError && err.message === 'cancelled');
});

test.run();

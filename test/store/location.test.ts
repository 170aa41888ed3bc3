// Where the store lives: SUPERPI_HOME, else ~/.super-pi; the directory made on first use, owner-only;
// and the in-memory store for tests.

import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DATABASE_FILE_NAME, databasePath, IN_MEMORY, openExistingStore, openStore, storeHome } from '../../src/store/location.ts';
import { removeHome, tempHome, throwsStoreError } from './helpers.ts';

let tmp: string;
test.before.each(async () => {
  tmp = await tempHome();
});
test.after.each(async () => {
  await removeHome(tmp);
});

test('SUPERPI_HOME names the directory; unset or empty means ~/.super-pi', () => {
  assert.is(storeHome({ SUPERPI_HOME: '/srv/superpi' }), '/srv/superpi');
  assert.is(storeHome({ SUPERPI_HOME: 'rel/dir' }), path.resolve('rel/dir'));
  assert.is(storeHome({}), path.join(os.homedir(), '.super-pi'));
  assert.is(storeHome({ SUPERPI_HOME: '' }), path.join(os.homedir(), '.super-pi'));
  assert.is(databasePath('/srv/superpi'), '/srv/superpi/super-pi.db');
});

test('the first open creates the directory (with parents), owner-only, and super-pi.db in it', async () => {
  const home = path.join(tmp, 'a', 'b', 'home');
  const store = openStore({ env: { SUPERPI_HOME: home } });
  store.createConversation({ principal: 'p', sessionId: 's', harness: 'h' });
  store.close();
  assert.is(statSync(home).mode & 0o777, 0o700);
  assert.ok(existsSync(path.join(home, DATABASE_FILE_NAME)));
  const second = openStore({ home });
  assert.is(second.listConversations('p').items.length, 1, 'the same file on the next open');
  second.close();
});

test('a home that cannot be a directory is a clear open_failed', async () => {
  openStore({ home: tmp }).close(); // makes tmp/super-pi.db, a file
  const error = throwsStoreError(() => openStore({ home: path.join(tmp, DATABASE_FILE_NAME, 'below') }), 'open_failed');
  assert.match(error.message, 'cannot create the store directory');
  assert.match(error.message, 'SUPERPI_HOME');
  assert.instance(error.cause, Error);
});

test('IN_MEMORY: a private database per store, nothing on disk', async () => {
  const before = await readdir(process.cwd());
  const one = openStore({ home: IN_MEMORY });
  const two = openStore({ home: IN_MEMORY });
  const c = one.createConversation({ principal: 'p', sessionId: 's', harness: 'h' });
  assert.is(one.getConversation(c.id, 'p')?.id, c.id);
  assert.is(two.getConversation(c.id, 'p'), null);
  one.close();
  two.close();
  assert.equal(await readdir(process.cwd()), before);
});

test('openExistingStore makes nothing: null without a database, the store once there is one', async () => {
  const home = path.join(tmp, 'never-made');
  assert.is(openExistingStore({ home }), null);
  assert.not.ok(existsSync(home), 'no directory was created by a read');
  const made = openStore({ home });
  const c = made.createConversation({ principal: 'p', sessionId: 's', harness: 'super-pi-code' });
  made.close();
  const found = openExistingStore({ home });
  assert.is(found?.getConversation(c.id, 'p')?.id, c.id);
  found?.close();
});

test('bad limits are refused before a file is made', () => {
  const home = path.join(tmp, 'never');
  throwsStoreError(() => openStore({ home, busyTimeoutMs: -1 }), 'invalid_argument');
  throwsStoreError(() => openStore({ home, maxPayloadBytes: 0 }), 'invalid_argument');
  assert.not.ok(existsSync(databasePath(home)));
});

test.run();

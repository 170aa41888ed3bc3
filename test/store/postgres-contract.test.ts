// The store contract (contract.ts) against the PostgreSQL store, on a server this file starts
// (postgres-server.ts): each test gets its own database. Without PostgreSQL binaries on the machine
// every contract test is reported skipped, with the reason printed; CI installs them (.ci/run).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from './backends.ts';
import { registerContract, registerSkipped } from './contract.ts';
import { findPostgres, postgresBinDirs } from './postgres-server.ts';

const found = findPostgres();
if (found.ok) {
  registerContract(test, postgresBackend(test, found));
} else {
  console.log(`  (skipped: the PostgreSQL store contract needs a PostgreSQL server: ${found.reason})`);
  registerSkipped(test);
  // The runner counts a file that ran no test as failed; this one checks that the reason names where it looked.
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
    assert.ok(postgresBinDirs().length > 0);
  });
}

test.run();

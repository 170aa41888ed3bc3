// The retention contract (retention-contract.ts) against the PostgreSQL store, on a server this file starts
// (postgres-server.ts), each test on its own database. Without PostgreSQL binaries every test is reported
// skipped, with the reason printed.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from './backends.ts';
import { registerRetentionContract, registerRetentionSkipped } from './retention-contract.ts';
import { findPostgres, postgresBinDirs } from './postgres-server.ts';

const found = findPostgres();
if (found.ok) {
  registerRetentionContract(test, postgresBackend(test, found));
} else {
  console.log(`  (skipped: the PostgreSQL retention contract needs a PostgreSQL server: ${found.reason})`);
  registerRetentionSkipped(test);
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
  });
}

test.run();

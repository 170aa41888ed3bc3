// The transcript page contract (entry-pages-contract.ts) against the PostgreSQL store, on a server this file
// starts (postgres-server.ts), each test on its own database. Without PostgreSQL binaries every test is
// reported skipped, with the reason printed.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from './backends.ts';
import { registerEntryPagesContract, registerEntryPagesSkipped } from './entry-pages-contract.ts';
import { findPostgres, postgresBinDirs } from './postgres-server.ts';

const found = findPostgres();
if (found.ok) {
  registerEntryPagesContract(test, postgresBackend(test, found));
} else {
  console.log(`  (skipped: the PostgreSQL transcript page contract needs a PostgreSQL server: ${found.reason})`);
  registerEntryPagesSkipped(test);
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
  });
}

test.run();

// The store contract (contract.ts) against the PostgreSQL store, on a server this file starts
// (postgres-server.ts): each test gets its own database. Without PostgreSQL binaries on the machine
// every contract test is reported skipped, with the reason printed; CI installs them (.ci/run).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import { registerContract, registerSkipped } from './contract.ts';
import { findPostgres, postgresBinDirs, type PostgresServer, startPostgres } from './postgres-server.ts';

const found = findPostgres();
if (found.ok) {
  let server: PostgresServer | null = null;
  test.before(async () => {
    server = await startPostgres(found);
  });
  test.after(async () => {
    await server?.stop();
  });
  const running = (): PostgresServer => {
    if (server === null) throw new Error('the PostgreSQL server did not start');
    return server;
  };
  registerContract(test, {
    async database() {
      const s = running();
      const url = await s.createDatabase();
      const name = new URL(url).pathname.slice(1);
      return {
        // The contract moves leases with its own clock: an injected `now` is the lease clock too here
        // (a node's default is the database's clock, postgres-lease-clock.test.ts).
        open: (options) => PostgresConversationStore.open(url, options.now === undefined ? options : { ...options, leaseClock: options.now }),
        drop: async () => {
          await s.query('postgres', `DROP DATABASE ${name}`);
        },
      };
    },
  });
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

// The retention contract (retention-contract.ts) against the PostgreSQL store, on a server this file starts
// (postgres-server.ts), each test on its own database. Without PostgreSQL binaries every test is reported
// skipped, with the reason printed.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import { registerRetentionContract, registerRetentionSkipped } from './retention-contract.ts';
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
  registerRetentionContract(test, {
    async database() {
      const s = running();
      const url = await s.createDatabase();
      const name = new URL(url).pathname.slice(1);
      return {
        open: (options) => PostgresConversationStore.open(url, options.now === undefined ? options : { ...options, leaseClock: options.now }),
        drop: async () => {
          await s.query('postgres', `DROP DATABASE ${name}`);
        },
      };
    },
  });
} else {
  console.log(`  (skipped: the PostgreSQL retention contract needs a PostgreSQL server: ${found.reason})`);
  registerRetentionSkipped(test);
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
  });
}

test.run();

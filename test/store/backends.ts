// The backends the store contracts run on (contract.ts, retention-contract.ts): SQLite, each database a
// file in a temporary directory, and PostgreSQL, each database its own on a server the suite starts
// before its tests and stops after (postgres-server.ts). Any number of stores may be open on one database
// at once, as processes or nodes would open it. Not a *.test.ts file.

import type { Test } from 'uvu';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { StoreBackend } from './contract.ts';
import { removeHome, tempHome } from './helpers.ts';
import { type PostgresAvailability, postgresForSuite } from './postgres-server.ts';

export const sqliteBackend: StoreBackend = {
  async database() {
    const home = await tempHome();
    const file = databasePath(home);
    return {
      async open(options) {
        return new SyncStoreAdapter(SqliteConversationStore.open(file, options));
      },
      drop: () => removeHome(home),
    };
  },
};

/** PostgreSQL on a server `suite` starts (its `before`) and stops (its `after`). */
export function postgresBackend(suite: Test, found: PostgresAvailability & { ok: true }): StoreBackend {
  const server = postgresForSuite(suite, found);
  return {
    async database() {
      const s = server();
      const url = await s.createDatabase();
      const name = new URL(url).pathname.slice(1);
      return {
        // The contracts move leases with their own clock: an injected `now` is the lease clock too here
        // (a node's default is the database's clock, postgres-lease-clock.test.ts).
        open: (options) => PostgresConversationStore.open(url, options.now === undefined ? options : { ...options, leaseClock: options.now }),
        drop: async () => {
          await s.query('postgres', `DROP DATABASE ${name}`);
        },
      };
    },
  };
}

// The store contract (contract.ts) against the SQLite store, through the adapter that puts its
// synchronous interface behind the asynchronous one: each database is a file in a temporary directory.

import { test } from 'uvu';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { registerContract } from './contract.ts';
import { removeHome, tempHome } from './helpers.ts';

registerContract(test, {
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
});

test.run();

// The retention contract (retention-contract.ts) against the SQLite store: each database a file in a
// temporary directory, several stores on it as several processes would open it.

import { test } from 'uvu';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { registerRetentionContract } from './retention-contract.ts';
import { removeHome, tempHome } from './helpers.ts';

registerRetentionContract(test, {
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

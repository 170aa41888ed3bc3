// A contract run against every store backend, each test on a fresh database with its stores closed and the
// database dropped after: how the smaller contracts beside contract.ts are registered (entry-pages-contract.ts,
// retention-contract.ts). Not a *.test.ts file.

import type { Test } from 'uvu';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';
import type { ContractStoreOptions, StoreBackend } from './contract.ts';
import { ManualClock } from './helpers.ts';

export interface SuiteContext {
  /** The clock every store of the test reads, unless opened with its own. */
  readonly clock: ManualClock;
  /** A store on the test's fresh database. */
  readonly store: AsyncConversationStore;
  /** Another store on the same database, as another process or node (closed after the test). */
  open(options?: ContractStoreOptions): Promise<AsyncConversationStore>;
}

export interface ContractSuite {
  /** Adds a test to the contract. */
  add(name: string, run: (ctx: SuiteContext) => Promise<void>): void;
  /** Registers every test on `suite` against `backend`. */
  register(suite: Test, backend: StoreBackend): void;
  /** Registers every test as skipped (no backend on this machine). */
  skip(suite: Test): void;
}

/** An empty contract; `storeOptions`: how each test's first store (`store`) is opened. */
export function contractSuite(storeOptions: ContractStoreOptions = {}): ContractSuite {
  const tests: { name: string; run: (ctx: SuiteContext) => Promise<void> }[] = [];
  return {
    add(name, run) {
      tests.push({ name, run });
    },
    register(suite, backend) {
      for (const t of tests) {
        suite(t.name, async () => {
          const clock = new ManualClock();
          const db = await backend.database();
          const stores: AsyncConversationStore[] = [];
          const open = async (options: ContractStoreOptions = {}) => {
            const store = await db.open({ now: clock.now, ...options });
            stores.push(store);
            return store;
          };
          try {
            await t.run({ clock, store: await open(storeOptions), open });
          } finally {
            for (const s of stores) await s.close();
            await db.drop();
          }
        });
      }
    },
    skip(suite) {
      for (const t of tests) suite.skip(t.name, () => undefined);
    },
  };
}

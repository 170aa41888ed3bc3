// The transcript page contract (entry-pages-contract.ts) against the SQLite store: each database a file in a
// temporary directory, several stores on it as several processes would open it.

import { test } from 'uvu';
import { sqliteBackend } from './backends.ts';
import { registerEntryPagesContract } from './entry-pages-contract.ts';

registerEntryPagesContract(test, sqliteBackend);

test.run();

// The store contract (contract.ts) against the SQLite store, through the adapter that puts its
// synchronous interface behind the asynchronous one: each database is a file in a temporary directory.

import { test } from 'uvu';
import { sqliteBackend } from './backends.ts';
import { registerContract } from './contract.ts';

registerContract(test, sqliteBackend);

test.run();

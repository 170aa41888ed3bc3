// The retention contract (retention-contract.ts) against the SQLite store: each database a file in a
// temporary directory, several stores on it as several processes would open it.

import { test } from 'uvu';
import { sqliteBackend } from './backends.ts';
import { registerRetentionContract } from './retention-contract.ts';

registerRetentionContract(test, sqliteBackend);

test.run();

// A database that stops answering on an open connection (its backend paused: a stalled server, a network
// cut with no reset) does not hold the store's calls: a real PostgreSQL whose backends serving the store
// are stopped with SIGSTOP. The call fails once the statement timeout passes, its connection is dropped,
// and once the backends run again the store serves on a fresh connection. The call waited as long as
// the database stayed silent: a node answered a POST for a session it does not hold (the store is asked
// where that session lives) only when the database woke, so any caller could pin every pooled connection.
// Skipped, with the reason, without PostgreSQL binaries.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import { POSTGRES_QUERY_TIMEOUT_MS } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { findPostgres, postgresForSuite } from './postgres-server.ts';

const NAME = 'a statement the database leaves unanswered fails after the query timeout, and the store serves again once the database answers';
/** Far below the hang guard, far above a loopback round trip on a loaded machine. */
const QUERY_TIMEOUT_MS = 1500;
const found = findPostgres();

if (found.ok) {
  const postgres = postgresForSuite(test, found);

  test(NAME, async () => {
    const pg = postgres();
    assert.ok(POSTGRES_QUERY_TIMEOUT_MS >= 1000, 'the default leaves a slow statement its time');
    const url = await pg.createDatabase();
    const database = new URL(url).pathname.slice(1);
    const store = await PostgresConversationStore.open(url, { queryTimeoutMs: QUERY_TIMEOUT_MS, poolSize: 1, onIdleError: () => undefined });
    /** The backends serving the store's database, not the one asking. */
    const backends = async () => (await pg.query<{ pid: number }>(database, 'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rows.map((r) => r.pid);
    let stopped: number[] = [];
    try {
      assert.is(await store.loadCheckpoint('no-such-session', 'anonymous'), null);
      stopped = await backends();
      assert.ok(stopped.length > 0, 'the store holds a connection');
      for (const pid of stopped) process.kill(pid, 'SIGSTOP');
      const outcome = await guarded(store.loadCheckpoint('no-such-session', 'anonymous').then(() => 'answered', (err: Error) => `failed: ${err.message}`), 'a call to a silent database');
      assert.match(outcome, /^failed: .*timeout/i);
      for (const pid of stopped.splice(0)) process.kill(pid, 'SIGCONT');
      assert.is(await guarded(store.loadCheckpoint('no-such-session', 'anonymous'), 'a call once the database answers'), null, 'the store serves on a fresh connection');
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
      await store.close();
    }
  });
} else {
  console.log(`  (skipped: the query-timeout test needs a PostgreSQL server: ${found.reason})`);
  test.skip(NAME, () => undefined);
}

test.run();

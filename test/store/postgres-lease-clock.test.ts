// Task leases on a PostgreSQL store are set and compared on the database's clock, so the nodes' own
// clocks need not agree: a node whose clock runs far ahead does not take a live task over, and a node
// whose clock runs far behind still sees a lapsed lease as lapsed. The nodes here are stores on one
// database whose `now` (their wall clock) is skewed by an hour. Skipped, with the reason, without
// PostgreSQL binaries.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeOwnership } from '../../src/store/node-ownership.ts';
import { PostgresConversationStore, type PostgresStoreOptions } from '../../src/store/postgres-store.ts';
import { guarded } from '../hang-guard.ts';
import { findPostgres, type PostgresServer, startPostgres } from './postgres-server.ts';

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };
/** Far more than any lease term: a skew no lease survives if lease times were the node's. */
const HOUR_MS = 3_600_000;
const found = findPostgres();
let server: PostgresServer | null = null;
const stores: PostgresConversationStore[] = [];

function running(): PostgresServer {
  if (server === null) throw new Error('the PostgreSQL server did not start');
  return server;
}

async function open(url: string, options: PostgresStoreOptions): Promise<PostgresConversationStore> {
  const store = await PostgresConversationStore.open(url, options);
  stores.push(store);
  return store;
}

/** The database's clock in milliseconds, read apart from any store. */
async function databaseNow(url: string): Promise<number> {
  const { rows } = await running().query<{ ms: string }>(new URL(url).pathname.slice(1), 'SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms');
  return Number(rows[0]?.ms);
}

const cases: [string, () => Promise<void>][] = [];
const pgTest = (name: string, fn: () => Promise<void>) => cases.push([name, fn]);

pgTest('a node whose clock runs an hour ahead still sees a live lease as live, and does not take the task over', async () => {
  const url = await running().createDatabase();
  const holder = await open(url, { ownership: nodeOwnership('holder'), leaseMs: 60_000 });
  const ahead = await open(url, { ownership: nodeOwnership('ahead'), leaseMs: 60_000, now: () => Date.now() + HOUR_MS });
  const c = await holder.createConversation(alice);
  const { epoch } = await holder.claimTask(c.id, { maxTurns: 3 });
  assert.equal(await ahead.expiredTasks(10), []);
  assert.is(await ahead.takeOverTask(c.id, epoch), null);
  assert.is(await holder.ownedTasks(), 1);
  assert.is((await holder.append(c.id, 'model', { text: 'still mine' }, epoch)).seq, 1);
});

pgTest('a node whose clock runs an hour behind holds a lease of one term on the database clock, and sees it lapse there', async () => {
  const url = await running().createDatabase();
  const LEASE = 200;
  const behind = await open(url, { ownership: nodeOwnership('behind'), leaseMs: LEASE, now: () => Date.now() - HOUR_MS });
  const other = await open(url, { ownership: nodeOwnership('other'), leaseMs: LEASE, now: () => Date.now() - HOUR_MS });
  const c = await behind.createConversation(alice);
  const before = await databaseNow(url);
  const lease = await behind.claimTask(c.id, {});
  const after = await databaseNow(url);
  assert.ok(lease.expiresAt >= before + LEASE && lease.expiresAt <= after + LEASE, `expires at ${lease.expiresAt}: one term after the database's ${before}..${after}`);
  // Wait on the database's clock (not a sleep of a guessed length) until the term has passed there.
  await guarded((async () => {
    while (await databaseNow(url) <= lease.expiresAt) await new Promise((r) => setTimeout(r, 20));
  })(), 'the database clock passing the lease');
  // Its own clock says the lease has an hour to go; the database says it lapsed.
  assert.equal((await other.expiredTasks(10)).map((t) => [t.conversationId, t.epoch]), [[c.id, lease.epoch]]);
  assert.is((await other.takeOverTask(c.id, lease.epoch))?.epoch, lease.epoch + 1);
});

pgTest('renewing on a skewed node extends the lease from the database clock, not its own', async () => {
  const url = await running().createDatabase();
  const LEASE = 60_000;
  const behind = await open(url, { ownership: nodeOwnership('behind'), leaseMs: LEASE, now: () => Date.now() - HOUR_MS });
  const c = await behind.createConversation(alice);
  const { epoch } = await behind.claimTask(c.id, {});
  const before = await databaseNow(url);
  const renewed = await behind.renewLease(c.id, epoch);
  assert.ok(renewed.expiresAt >= before + LEASE, `renewed to ${renewed.expiresAt}, not before the database's ${before} + one term`);
});

if (found.ok) {
  test.before(async () => {
    server = await startPostgres(found);
  });
  test.after.each(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  test.after(async () => {
    await server?.stop();
  });
  for (const [name, fn] of cases) test(name, fn);
} else {
  console.log(`  (skipped: the lease-clock tests need a PostgreSQL server: ${found.reason})`);
  for (const [name] of cases) test.skip(name, () => undefined);
  test('without PostgreSQL binaries the skip says why', () => {
    assert.match(found.reason, 'PostgreSQL');
  });
}

test.run();

// The fencing rule as a property over any interleaving: three holders (stores of three owners on one
// database) claim, take over, renew and append in a random order while the clock moves; whatever the
// order, an append lands exactly when its writer's epoch is the current one, a takeover wins exactly
// when the lease has lapsed at the epoch it saw, and the transcript numbers what landed 1..N. Checked on
// SQLite (fast); the same statements' PostgreSQL twins are checked by the contract suite.

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { StoreError } from '../../src/store/errors.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { fakeOwnership } from './contract.ts';
import { ManualClock, removeHome, tempHome } from './helpers.ts';

const LEASE = 100;
const HOLDERS = ['a', 'b', 'c'] as const;

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constantFrom('claim' as const, 'takeover' as const, 'renew' as const, 'append' as const), who: fc.integer({ min: 0, max: HOLDERS.length - 1 }) }),
    fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 2 * LEASE }) }),
  ),
  { minLength: 1, maxLength: 40 },
);

const outcome = (p: Promise<unknown>) => p.then((v) => ({ ok: true as const, v }), (e: unknown) => {
  if (e instanceof StoreError) return { ok: false as const, code: e.code };
  throw e;
});

test('whatever the interleaving of claims, takeovers, renewals, appends and time: only the current epoch writes, one taker wins, seqs are 1..N', async () => {
  const home = await tempHome();
  let round = 0;
  try {
    await fc.assert(fc.asyncProperty(ops, async (script) => {
      const clock = new ManualClock();
      const dir = path.join(home, String(round++));
      await mkdir(dir);
      const file = databasePath(dir);
      const stores = HOLDERS.map((h) => new SyncStoreAdapter(SqliteConversationStore.open(file, { ownership: fakeOwnership(h), now: clock.now, leaseMs: LEASE })));
      try {
        const c = await stores[0]!.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
        // The model: the current epoch, holder and lease; what each holder believes its epoch is.
        let epoch = 0;
        let holder = 0;
        // A new conversation is its creator's (a) at epoch 0 for one term.
        let expires = clock.now() + LEASE;
        const believed: (number | null)[] = HOLDERS.map(() => null);
        believed[0] = 0;
        let landed = 0;
        for (const step of script) {
          if (step.op === 'tick') {
            clock.tick(step.ms);
            continue;
          }
          const store = stores[step.who]!;
          // A holder that never claimed writes as the creator would, at epoch 0.
          const mine = believed[step.who] ?? 0;
          if (step.op === 'claim') {
            const lease = await store.claimTask(c.id, {});
            epoch += 1;
            holder = step.who;
            expires = clock.now() + LEASE;
            assert.equal(lease, { conversationId: c.id, epoch, expiresAt: expires });
            believed[step.who] = epoch;
          } else if (step.op === 'takeover') {
            const seen = epoch;
            const wins = expires < clock.now() && holder !== step.who;
            const lease = await store.takeOverTask(c.id, seen);
            assert.is(lease !== null, wins, `takeover by ${HOLDERS[step.who]} at epoch ${seen}`);
            if (lease !== null) {
              epoch += 1;
              holder = step.who;
              expires = clock.now() + LEASE;
              believed[step.who] = epoch;
            }
          } else if (step.op === 'renew') {
            const r = await outcome(store.renewLease(c.id, mine));
            assert.is(r.ok, mine === epoch, `renewal by ${HOLDERS[step.who]} (epoch ${mine}, current ${epoch})`);
            if (r.ok) expires = clock.now() + LEASE;
            else assert.is(r.code, 'fenced');
          } else {
            const r = await outcome(store.append(c.id, 'model', { by: step.who, epoch: mine }, mine));
            assert.is(r.ok, mine === epoch, `append by ${HOLDERS[step.who]} (epoch ${mine}, current ${epoch})`);
            if (r.ok) landed += 1;
            else assert.is(r.code, 'fenced');
          }
        }
        const entries = (await stores[0]!.entries(c.id, 'alice')) ?? [];
        assert.equal(entries.map((e) => e.seq), Array.from({ length: landed }, (_, i) => i + 1));
      } finally {
        for (const s of stores) await s.close();
      }
    }), { numRuns: 60 });
  } finally {
    await removeHome(home);
  }
});

test.run();

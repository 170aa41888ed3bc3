import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CheckpointSaver } from '../../src/cluster/checkpoint-saver.ts';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';
import { StoreError } from '../../src/store/errors.ts';
import { createLogger } from '../../src/log/logger.ts';

const logger = createLogger('error', { write: () => true });

/** A store whose saveCheckpoint waits until the test releases each call, recording what it was given. */
function gatedStore(refuse: (n: number) => Error | null = () => null) {
  const saved: number[][] = [];
  const gates: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const store = {
    saveCheckpoint: async (_id: string, _epoch: number, bytes: Uint8Array) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
      const error = refuse(saved.length + 1);
      saved.push([...bytes]);
      if (error) throw error;
    },
  } as unknown as AsyncConversationStore;
  const release = async () => {
    for (let i = 0; i < 20 && gates.length === 0; i++) await new Promise((r) => setImmediate(r));
    gates.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { store, saved, release, most: () => most };
}

test('checkpoints are saved in order, one in flight at a time, and the latest replaces any still waiting', async () => {
  const s = gatedStore();
  const saver = new CheckpointSaver({ store: s.store, sessionId: 's', epoch: 1, logger, onFenced: () => assert.unreachable('not fenced') });
  saver.save(new Uint8Array([1]));
  saver.save(new Uint8Array([2]));
  saver.save(new Uint8Array([3]));
  await s.release();
  await s.release();
  await saver.settled();
  assert.equal(s.saved, [[1], [3]], '2 was replaced by 3 before it was sent');
  assert.is(s.most(), 1, 'never two saves of one session at once');
});

test('a save refused as fenced calls onFenced once, and nothing more is saved', async () => {
  const s = gatedStore((n) => (n === 1 ? new StoreError('fenced', 'claimed again') : null));
  let fenced = 0;
  const saver = new CheckpointSaver({ store: s.store, sessionId: 's', epoch: 1, logger, onFenced: () => fenced++ });
  saver.save(new Uint8Array([1]));
  saver.save(new Uint8Array([2]));
  await s.release();
  await saver.settled();
  saver.save(new Uint8Array([3]));
  await saver.settled();
  assert.is(fenced, 1);
  assert.is(saver.fenced, true);
  assert.equal(s.saved, [[1]], 'the waiting checkpoint and later ones are dropped');
});

test('a store that cannot be reached is not a fence: the next checkpoint is saved', async () => {
  const s = gatedStore((n) => (n === 1 ? new Error('connection refused') : null));
  const saver = new CheckpointSaver({ store: s.store, sessionId: 's', epoch: 1, logger, onFenced: () => assert.unreachable('not fenced') });
  saver.save(new Uint8Array([1]));
  await s.release();
  await saver.settled();
  saver.save(new Uint8Array([2]));
  await s.release();
  await saver.settled();
  assert.equal(s.saved, [[1], [2]]);
  assert.is(saver.fenced, false);
});

test.run();

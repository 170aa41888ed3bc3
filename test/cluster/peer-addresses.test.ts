// The addresses of a node's peers (src/cluster/peer-addresses.ts): the hosts of the live nodes' advertise
// URLs, IP literals as they are and names resolved (a name that fails adds nothing), this node's own entry
// left out; read again every renewal period on the node's clock, a failed read keeping the last set.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PeerAddresses, peerAddresses } from '../../src/cluster/peer-addresses.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { ClusterNode } from '../../src/store/cluster-nodes.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { pollUntil } from '../hang-guard.ts';

const resolve = async (host: string): Promise<readonly string[]> => {
  if (host === 'node-b.internal') return ['10.0.0.7', '::ffff:10.0.0.8'];
  throw new Error(`getaddrinfo ENOTFOUND ${host}`);
};

test('IP literals (v4, v6 in brackets) are kept, names resolved (IPv4-mapped as IPv4), unresolvable names add nothing and are reported', async () => {
  const failed: string[] = [];
  const set = await peerAddresses(['http://10.0.0.5:8080', 'https://[fd00::5]:443/base', 'http://node-b.internal:8080', 'http://gone.internal', 'not a url'], resolve, (host) => failed.push(host));
  assert.equal([...set].sort(), ['10.0.0.5', '10.0.0.7', '10.0.0.8', 'fd00::5']);
  assert.equal(failed, ['gone.internal']);
});

test('the live nodes but this one are published at start and again each renewal period; a failed read keeps the last set', async () => {
  const clock = new FakeClock();
  const node = (owner: string, url: string): ClusterNode => ({ owner, node: owner, advertiseUrl: url, fresh: true, remainingMs: 3000 });
  let nodes: ClusterNode[] | Error = [node('self', 'http://10.0.0.1:1'), node('b', 'http://10.0.0.2:1')];
  const published: string[][] = [];
  const peers = new PeerAddresses({
    store: { liveNodes: async () => { if (nodes instanceof Error) throw nodes; return nodes; } },
    self: 'self', leaseMs: 3000, clock, logger: createLogger('error', { write: () => {} }), resolve,
    publish: (set) => published.push([...set].sort()),
  });
  await peers.start();
  assert.equal(published, [['10.0.0.2']]);
  nodes = [node('self', 'http://10.0.0.1:1'), node('b', 'http://10.0.0.2:1'), node('c', 'http://node-b.internal:1')];
  clock.advance(1000);
  await pollUntil('the second set', () => (published.length === 2 ? true : null), 10_000, 5);
  assert.equal(published[1], ['10.0.0.2', '10.0.0.7', '10.0.0.8']);
  nodes = new Error('the store did not answer');
  clock.advance(1000);
  await peers.refresh();
  assert.is(published.length, 2, 'nothing published when the registry could not be read');
  peers.stop();
  nodes = [node('self', 'http://10.0.0.1:1')];
  clock.advance(5000);
  await peers.refresh();
  assert.is(published.length, 2, 'stopped: nothing published');
});

test.run();

// The lookup gate of the egress proxies, over a lookup the test answers by hand: how many run at once,
// in what order the rest start, and that one whose connection is gone never starts.

import type { LookupAddress, LookupOptions } from 'node:dns';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLookupGate } from '../../../src/tools/sandbox/lookup-gate.ts';

type Answer = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A lookup that records each name it is asked and holds its answer until the test gives it. */
function heldLookup() {
  const held = new Map<string, Answer>();
  const asked: string[] = [];
  const lookup = (hostname: string, _options: LookupOptions, callback: Answer): void => {
    asked.push(hostname);
    held.set(hostname, callback);
  };
  const answer = (hostname: string): void => held.get(hostname)?.(null, '127.0.0.1', 4);
  return { lookup, asked, answer };
}

test('past the limit a lookup waits; each answer lets the next waiting one start, first come first served', () => {
  const dns = heldLookup();
  const gate = createLookupGate(2, dns.lookup);
  const answered: string[] = [];
  for (const name of ['a', 'b', 'c', 'd']) gate(new AbortController().signal)(name, {}, () => answered.push(name));
  assert.equal(dns.asked, ['a', 'b']);
  dns.answer('b');
  assert.equal(answered, ['b']);
  assert.equal(dns.asked, ['a', 'b', 'c']);
  dns.answer('a');
  dns.answer('c');
  dns.answer('d');
  assert.equal(dns.asked, ['a', 'b', 'c', 'd']);
  assert.equal(answered, ['b', 'a', 'c', 'd']);
});

test('a waiting lookup whose connection is gone (its signal aborted) leaves the queue and never runs', () => {
  const dns = heldLookup();
  const gate = createLookupGate(1, dns.lookup);
  const gone = new AbortController();
  gate(new AbortController().signal)('a', {}, () => undefined);
  gate(gone.signal)('b', {}, () => undefined);
  gate(new AbortController().signal)('c', {}, () => undefined);
  gone.abort();
  dns.answer('a');
  assert.equal(dns.asked, ['a', 'c']);
});

test.run();

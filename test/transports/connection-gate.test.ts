// The connection gate's accounting and its log, without sockets: the counts never pass either limit
// whatever the order of opens and closes (a property), and a burst of refusals is one log line at once
// and one count per window after it, on a fake clock. The sockets themselves: test/e2e/connection-limits.test.ts.

import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { ConnectionCounts, type RefusalReport, RefusalLog } from '../../src/transports/connection-gate.ts';

const counts = suite('ConnectionCounts');

counts('admits up to the per-address limit, then refuses that address only', () => {
  const c = new ConnectionCounts({ maxConnections: 10, maxPerAddress: 2 });
  assert.is(c.admit('10.0.0.1'), null);
  assert.is(c.admit('10.0.0.1'), null);
  assert.equal(c.admit('10.0.0.1'), { limit: 'connections per address', max: 2 });
  assert.is(c.admit('10.0.0.2'), null, 'another address is still admitted');
  assert.is(c.total, 3, 'a refusal is not counted');
});

counts('refuses every address once the total is reached, and admits again after a close', () => {
  const c = new ConnectionCounts({ maxConnections: 2, maxPerAddress: 2 });
  assert.is(c.admit('a'), null);
  assert.is(c.admit('b'), null);
  assert.equal(c.admit('c'), { limit: 'connections', max: 2 });
  c.release('a');
  assert.is(c.admit('c'), null);
  assert.is(c.from('a'), 0);
});

counts('a release of an address with nothing open changes nothing', () => {
  const c = new ConnectionCounts({ maxConnections: 2, maxPerAddress: 1 });
  c.release('a');
  assert.is(c.total, 0);
  assert.is(c.admit('a'), null);
});

counts('refuses limits that are not positive whole numbers', () => {
  assert.throws(() => new ConnectionCounts({ maxConnections: 0, maxPerAddress: 1 }), /maxConnections/);
  assert.throws(() => new ConnectionCounts({ maxConnections: 1, maxPerAddress: 1.5 }), /maxPerAddress/);
});

counts('whatever the opens and closes, neither limit is passed and the counts add up (property)', () => {
  const step = fc.record({ open: fc.boolean(), address: fc.constantFrom('a', 'b', 'c', 'd') });
  fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 200 }), (max, perAddress, steps) => {
    const c = new ConnectionCounts({ maxConnections: max, maxPerAddress: perAddress });
    const open = new Map<string, number>();
    for (const s of steps) {
      if (s.open) {
        const refusal = c.admit(s.address);
        const had = open.get(s.address) ?? 0;
        const total = [...open.values()].reduce((x, y) => x + y, 0);
        // Refused exactly when a limit is reached, never otherwise.
        assert.is(refusal !== null, total >= max || had >= perAddress);
        if (refusal === null) open.set(s.address, had + 1);
      } else if ((open.get(s.address) ?? 0) > 0) {
        c.release(s.address);
        open.set(s.address, (open.get(s.address) ?? 0) - 1);
      }
      const total = [...open.values()].reduce((x, y) => x + y, 0);
      assert.is(c.total, total);
      assert.ok(c.total <= max);
      for (const [a, n] of open) assert.is(c.from(a), n);
    }
  }));
});

counts.run();

const log = suite('RefusalLog');

log('a burst is one line at once, then one count per window, then nothing once quiet', () => {
  const clock = new FakeClock();
  const reports: RefusalReport[] = [];
  const l = new RefusalLog(clock, (r) => reports.push(r), 1000);
  for (let i = 0; i < 50; i++) l.refused('10.0.0.1', { limit: 'connections', max: 5 });
  assert.equal(reports, [{ kind: 'refused', address: '10.0.0.1', refusal: { limit: 'connections', max: 5 } }], 'the first refusal at once, alone');
  clock.advance(1000);
  assert.equal(reports.slice(1), [{ kind: 'more refused', count: 49, windowMs: 1000 }]);
  l.refused('10.0.0.2', { limit: 'connections per address', max: 2 });
  clock.advance(1000);
  assert.equal(reports.slice(2), [{ kind: 'more refused', count: 1, windowMs: 1000 }]);
  clock.advance(1000);
  assert.is(reports.length, 3, 'a quiet window logs nothing and ends the burst');
  l.refused('10.0.0.3', { limit: 'connections', max: 5 });
  assert.equal(reports[3], { kind: 'refused', address: '10.0.0.3', refusal: { limit: 'connections', max: 5 } }, 'the next burst starts with a line at once');
  l.stop();
  clock.advance(5000);
  assert.is(reports.length, 4, 'stopped: no timer left');
});

log.run();

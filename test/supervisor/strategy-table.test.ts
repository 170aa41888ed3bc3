// Strategy × restart type × exit reason: the middle child b of [a, b, c] exits; which children are
// stopped and started again, in what order, and where each lifecycle ends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RestartType } from '../../src/supervisor/child-spec.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { crash, type ExitReason, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import type { Strategy } from '../../src/supervisor/supervisor-flags.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, settle } from './fake-child.ts';

const strategies: Strategy[] = ['one_for_one', 'one_for_all', 'rest_for_one'];
const restartTypes: RestartType[] = ['permanent', 'transient', 'temporary'];
const reasons: [string, ExitReason][] = [
  ['normal', normal],
  ['shutdown', shutdown],
  ['crash', crash(new Error('boom'))],
  ['killed', killed],
];

/** What happens after b exits, when it is restarted: siblings stopped newest first, then the scope started in order. */
const onRestart: Record<Strategy, string[]> = {
  one_for_one: ['start:b'],
  one_for_all: ['stop:c', 'stop:a', 'start:a', 'start:b', 'start:c'],
  rest_for_one: ['stop:c', 'start:b', 'start:c'],
};
const restartedIds: Record<Strategy, string[]> = { one_for_one: ['b'], one_for_all: ['a', 'b', 'c'], rest_for_one: ['b', 'c'] };

function restarts(restart: RestartType, reason: string): boolean {
  return restart === 'permanent' || (restart === 'transient' && (reason === 'crash' || reason === 'killed'));
}

for (const strategy of strategies) {
  for (const restart of restartTypes) {
    for (const [reasonName, reason] of reasons) {
      const expectRestart = restarts(restart, reasonName);
      const journalAfter = expectRestart ? onRestart[strategy] : [];
      const what = expectRestart ? journalAfter.join(', ') : restart === 'temporary' ? 'nothing; b is removed' : 'nothing; b stays stopped';
      test(`${strategy} × ${restart} b × ${reasonName}: ${what}`, async () => {
        const { journal, a, b, c } = abc();
        const events: SupervisorEvent[] = [];
        const sup = await Supervisor.start({ strategy, name: 'sup' }, [a.spec(), b.spec({ restart }), c.spec()], {
          clock: new FakeClock(),
          onEvent: (e) => events.push(e),
        });
        assert.equal(journal, ['start:a', 'start:b', 'start:c']);
        journal.length = 0;

        b.exit(reason);
        await settle();

        assert.equal(journal, journalAfter);
        const exited = events.find((e) => e.type === 'child-exited');
        assert.equal(exited, { type: 'child-exited', supervisor: 'sup', id: 'b', reason, willRestart: expectRestart });
        const restarted = events.flatMap((e) => (e.type === 'child-restarted' ? [[e.id, e.trigger, e.reason.kind]] : []));
        assert.equal(restarted, expectRestart ? restartedIds[strategy].map((id) => [id, 'b', reasonName]) : []);
        const states = sup.whichChildren().map((ch) => `${ch.id}:${ch.state}`);
        if (expectRestart) assert.equal(states, ['a:running', 'b:running', 'c:running']);
        else if (restart === 'temporary') assert.equal(states, ['a:running', 'c:running']);
        else assert.equal(states, ['a:running', 'b:stopped', 'c:running']);
        // Every live incarnation is the newest one: nothing was left running twice.
        for (const child of [a, b, c]) assert.is(child.incarnations.filter((i) => i.alive).length, sup.whichChildren().some((w) => w.id === child.id && w.state === 'running') ? 1 : 0, child.id);

        sup.stop();
        assert.equal(await sup.exited, shutdown);
      });
    }
  }
}

test('one_for_all: a temporary sibling is stopped with the others and removed, not restarted', async () => {
  const { journal, a, b, c } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_all' }, [a.spec({ restart: 'temporary' }), b.spec(), c.spec()], { clock: new FakeClock() });
  journal.length = 0;
  b.exit(crash(new Error('boom')));
  await settle();
  assert.equal(journal, ['stop:c', 'stop:a', 'start:b', 'start:c']);
  assert.equal(sup.whichChildren().map((w) => w.id), ['b', 'c']);
});

test('rest_for_one: the first child exiting takes every child along', async () => {
  const { journal, a, b, c } = abc();
  await Supervisor.start({ strategy: 'rest_for_one' }, [a.spec(), b.spec(), c.spec()], { clock: new FakeClock() });
  journal.length = 0;
  a.exit(crash(new Error('boom')));
  await settle();
  assert.equal(journal, ['stop:c', 'stop:b', 'start:a', 'start:b', 'start:c']);
});

test('rest_for_one: the last child exiting takes only itself', async () => {
  const { journal, a, b, c } = abc();
  await Supervisor.start({ strategy: 'rest_for_one' }, [a.spec(), b.spec(), c.spec()], { clock: new FakeClock() });
  journal.length = 0;
  c.exit(killed);
  await settle();
  assert.equal(journal, ['start:c']);
});

test('one_for_all: a terminated sibling is started again by a restart, as in OTP', async () => {
  const { journal, a, b, c } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_all' }, [a.spec(), b.spec(), c.spec()], { clock: new FakeClock() });
  await sup.terminateChild('c');
  journal.length = 0;
  a.exit(crash(new Error('boom')));
  await settle();
  assert.equal(journal, ['stop:b', 'start:a', 'start:b', 'start:c']);
  assert.equal(sup.whichChildren().map((w) => w.state), ['running', 'running', 'running']);
});

test('one_for_all: siblings stopped by a restart are not exits of their own (one exit, one restart each)', async () => {
  const { a, b, c } = abc();
  const events: SupervisorEvent[] = [];
  await Supervisor.start({ strategy: 'one_for_all' }, [a.spec(), b.spec(), c.spec()], { clock: new FakeClock(), onEvent: (e) => events.push(e) });
  b.exit(crash(new Error('boom')));
  await settle();
  assert.equal(events.filter((e) => e.type === 'child-exited').length, 1);
  assert.equal([a.starts, b.starts, c.starts], [2, 2, 2]);
});

test.run();

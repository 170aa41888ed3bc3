// The observer's task list stays bounded when runs lose their task: a run fenced by a newer run of its
// conversation (a `conversation_id` continuation), by a `tasks/cancel` another node served, or by a takeover
// settles without writing a status on this node, and was kept `running` — never trimmed — for the life of
// the process (review wt/advhandles). Driven through TaskSupervision, as the server starts every task.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ServerObserver } from '../../src/observer/server-observer.ts';
import { MAX_FINISHED_TASKS } from '../../src/observer/observed-tasks.ts';
import type { ApplicationTree } from '../../src/server/application-tree.ts';
import { TaskSupervision } from '../../src/server/task-supervision.ts';
import type { TaskRun } from '../../src/task/task-run.ts';
import type { ToolOutcome } from '../../src/tools/contract.ts';
import { systemClock } from '../../src/time/clock.ts';

/** The tree's task supervisor, as far as TaskSupervision uses it: children start and are removed, none exits. */
const tree = {
  tasks: { startChild: async () => ({ exited: new Promise(() => undefined) }), terminateChild: async () => undefined },
  intensity: () => ({}),
  supervisorOptions: () => ({}),
} as unknown as ApplicationTree;

/** A run whose outcome the test settles: `lose` settles it as a fenced run does (no status written here). */
function fakeRun(conversationId: string): { run: TaskRun; settle: () => void } {
  let settle!: (o: ToolOutcome) => void;
  const outcome = new Promise<ToolOutcome>((resolve) => (settle = resolve));
  const run = { conversationId, harness: 'super-pi-code', outcome, start: () => undefined, gaveUp: () => undefined } as unknown as TaskRun;
  return { run, settle: () => settle({ text: 'this node no longer holds the task', isError: true }) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('runs that lose their conversation to a newer run (no status written here) leave the running list; the list stays bounded', async () => {
  const observer = new ServerObserver({ metrics: null, threads: () => [], flushInlineCalls: async () => undefined, started: 0 });
  const supervision = new TaskSupervision({ tree, observer, clock: systemClock });
  const rounds = MAX_FINISHED_TASKS * 3;
  let previous: ReturnType<typeof fakeRun> | null = null;
  for (let i = 0; i < rounds; i++) {
    // The same conversation continued while it runs: the new claim fences the previous run, which settles unwritten.
    const next = fakeRun('c-continued');
    await supervision.supervise(next.run, 'session-1', { kind: 'token', name: 'alice' }, 'token:alice');
    previous?.settle();
    previous = next;
    await tick();
  }
  const rows = observer.tasks.rows(() => 0);
  assert.is(rows.filter((r) => r.status === 'running').length, 1, 'only the run still going is running');
  assert.ok(rows.length <= MAX_FINISHED_TASKS + 1, `${rows.length} rows kept`);
  assert.is(observer.tasks.counts().get('running'), 1);
});

test('whatever order runs start, write their status or lose it and settle, running counts exactly the runs not settled (property)', async () => {
  type Op = { kind: 'start'; conversation: number } | { kind: 'write'; run: number } | { kind: 'settle'; run: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('start' as const), conversation: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ kind: fc.constant('write' as const), run: fc.nat(40) }),
    fc.record({ kind: fc.constant('settle' as const), run: fc.nat(40) }),
  );
  await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
    const observer = new ServerObserver({ metrics: null, threads: () => [], flushInlineCalls: async () => undefined, started: 0 });
    const supervision = new TaskSupervision({ tree, observer, clock: systemClock });
    const runs: { conversation: string; settle: () => void; settled: boolean }[] = [];
    for (const o of ops) {
      if (o.kind === 'start') {
        const r = fakeRun(`c${o.conversation}`);
        await supervision.supervise(r.run, 's', { kind: 'local' }, 'local');
        runs.push({ conversation: `c${o.conversation}`, settle: r.settle, settled: false });
        continue;
      }
      const r = runs[o.run % Math.max(1, runs.length)];
      if (r === undefined || r.settled) continue;
      // A run that finishes writes its status first (through the observed store), then settles; only the
      // newest run of a conversation can write (an older one is fenced), so an older one just settles.
      const newest = runs.filter((x) => x.conversation === r.conversation).at(-1) === r;
      if (o.kind === 'write' && newest) observer.tasks.statusSet(r.conversation, 'completed');
      r.settled = true;
      r.settle();
      await tick();
    }
    const open = runs.filter((r) => !r.settled).length;
    assert.is(observer.tasks.counts().get('running') ?? 0, open);
    assert.ok(observer.tasks.rows(() => 0).length <= open + MAX_FINISHED_TASKS);
  }), { numRuns: 200 });
});

test.run();

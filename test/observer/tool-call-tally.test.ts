// The per-call metrics counted on plain numbers: for any calls, their exposition is what prom-client
// itself prints for the same calls (same names, types, labels, cumulative buckets, sum and count), so
// a scraper cannot tell them apart from the registry's own metrics.

import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TOOL_CALL_BUCKETS } from '../../src/observer/metrics.ts';
import { type CallOutcome, escapeLabel, TOOL_CALL_DURATION_HELP, TOOL_CALL_DURATION_NAME, TOOL_CALLS_HELP, TOOL_CALLS_NAME, ToolCallTally } from '../../src/observer/tool-call-tally.ts';

interface Call {
  tool: string;
  harness: string;
  outcome: CallOutcome;
  seconds: number;
}

async function promClientText(calls: readonly Call[]): Promise<string> {
  const registry = new Registry();
  const counter = new Counter({ name: TOOL_CALLS_NAME, help: TOOL_CALLS_HELP, labelNames: ['tool', 'harness', 'outcome'] as const, registers: [registry] });
  const histogram = new Histogram({ name: TOOL_CALL_DURATION_NAME, help: TOOL_CALL_DURATION_HELP, labelNames: ['tool'] as const, buckets: TOOL_CALL_BUCKETS, registers: [registry] });
  for (const c of calls) {
    counter.inc({ tool: c.tool, harness: c.harness, outcome: c.outcome });
    histogram.observe({ tool: c.tool }, c.seconds);
  }
  return registry.metrics();
}

function tallyText(calls: readonly Call[]): string {
  const tally = new ToolCallTally(TOOL_CALL_BUCKETS);
  for (const c of calls) {
    tally.count(c.tool, c.harness, c.outcome);
    tally.observe(c.tool, c.seconds);
  }
  return tally.exposition();
}

/** The lines of each metric family, HELP and TYPE first, samples as a sorted set (series order is free). */
function families(text: string): Map<string, { head: string[]; samples: string[] }> {
  const out = new Map<string, { head: string[]; samples: string[] }>();
  for (const block of text.trim().split('\n\n')) {
    const lines = block.split('\n');
    const name = /^# HELP (\S+)/.exec(lines[0] as string)?.[1] as string;
    out.set(name, { head: lines.filter((l) => l.startsWith('#')), samples: lines.filter((l) => !l.startsWith('#')).sort() });
  }
  return out;
}

const call = fc.record({
  tool: fc.constantFrom('read', 'grep', 'bash', 'other'),
  harness: fc.constantFrom('super-pi-code', 'super-pi-planner', 'other'),
  outcome: fc.constantFrom<CallOutcome>('ok', 'error', 'denied'),
  // Bucket bounds themselves included: a value equal to a bound falls in that bound's bucket.
  seconds: fc.oneof(fc.constantFrom(...TOOL_CALL_BUCKETS), fc.double({ min: 0, max: 400, noNaN: true })),
});

test('property: for any calls, the exposition equals prom-client\'s for the same calls', async () => {
  await fc.assert(fc.asyncProperty(fc.array(call, { maxLength: 60 }), async (calls) => {
    assert.equal(families(tallyText(calls)), families(await promClientText(calls)));
  }), { numRuns: 150 });
});

test('with no calls yet, both metrics are announced by HELP and TYPE, as prom-client does', async () => {
  assert.equal(families(tallyText([])), families(await promClientText([])));
  assert.match(tallyText([]), `# TYPE ${TOOL_CALLS_NAME} counter`);
  assert.match(tallyText([]), `# TYPE ${TOOL_CALL_DURATION_NAME} histogram`);
});

test('a label value is escaped as the text format requires', () => {
  assert.is(escapeLabel('a"b\\c\nd'), 'a\\"b\\\\c\\nd');
  const tally = new ToolCallTally([1]);
  tally.count('x"y', 'h', 'ok');
  assert.match(tally.exposition(), `${TOOL_CALLS_NAME}{tool="x\\"y",harness="h",outcome="ok"} 1`);
});

test.run();

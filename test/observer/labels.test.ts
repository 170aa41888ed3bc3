// Metric labels come from fixed sets: whatever string reaches a label function, what comes out is a
// catalogue name or "other"; and the outcome of a call reads ok / error / denied from its result.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { harnessIds } from '../../src/harness/ids.ts';
import { harnessLabel, outcomeOf, supervisorLevel, toolLabel } from '../../src/observer/metrics.ts';
import { toolNames } from '../../src/tools/definition.ts';

const tools: ReadonlySet<string> = new Set([...toolNames, 'other']);
const harnesses: ReadonlySet<string> = new Set([...harnessIds, 'other']);
const levels: ReadonlySet<string> = new Set(['root', 'schedulers', 'tools', 'sessions', 'tasks', 'session', 'task', 'other']);

test('any string becomes a catalogue tool name or "other"', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.constantFrom(...toolNames)), (s) => tools.has(toolLabel(s)) && (toolLabel(s) === s || toolLabel(s) === 'other')));
  assert.is(toolLabel('read'), 'read');
  assert.is(toolLabel('../etc/passwd'), 'other');
});

test('any string becomes a harness id or "other"', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.constantFrom(...harnessIds)), (s) => harnesses.has(harnessLabel(s))));
  assert.is(harnessLabel('super-pi-planner'), 'super-pi-planner');
  assert.is(harnessLabel('super-pi-planner '), 'other');
});

test('supervisor names fold into a fixed set of levels (per-session and per-task supervisors into one each)', () => {
  fc.assert(fc.property(fc.string(), (s) => levels.has(supervisorLevel(s))));
  assert.is(supervisorLevel('session-12'), 'session');
  assert.is(supervisorLevel('task-3'), 'task');
  assert.is(supervisorLevel('schedulers'), 'schedulers');
  assert.is(supervisorLevel('session-12/../x'), 'other');
});

test('a call outcome is ok, error, or denied for a policy or person refusal', () => {
  assert.is(outcomeOf({ text: 'fine' }), 'ok');
  assert.is(outcomeOf({ text: 'ENOENT', isError: true }), 'error');
  assert.is(outcomeOf({ text: 'Denied by harness policy: no writes', isError: true }), 'denied');
  assert.is(outcomeOf({ text: 'Not run: the person did not allow write', isError: true }), 'denied');
});

test.run();

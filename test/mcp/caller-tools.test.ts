// tools/list and superpi://loadout tell each caller the truth: what it is shown is exactly what it may
// call (a golden table per caller: the local stdio user, a token principal, an anonymous remote caller,
// with and without elicitation and the operator's opt-ins), and anonymous harness_task is refused.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { harnessIds } from '../../src/harness/ids.ts';
import type { ConnectionConfig } from '../../src/mcp/state.ts';
import { toolNames } from '../../src/tools/definition.ts';
import { feed, ready, req } from './golden.ts';

type Over = Partial<ConnectionConfig>;
const local: Over = { principal: { kind: 'local' } };
const token: Over = { principal: { kind: 'token', name: 'alice' } };
const anonymous: Over = { principal: { kind: 'anonymous' } };
const elicits = { elicitation: {} };

const listed = (capabilities: object, over: Over): string[] => {
  const r = feed(ready('2025-06-18', capabilities, over), req(1, 'tools/list'));
  return (r.replies[0] as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
};

const args: Record<string, object> = {
  read: { path: 'a.txt' }, write: { path: 'a.txt', content: 'x' }, edit: { path: 'a.txt', oldText: 'x', newText: 'y' },
  bash: { command: 'true' }, grep: { pattern: 'x' }, find: { pattern: '*.ts' }, ls: {}, harness_task: { harness: 'super-pi-code', prompt: 'x' },
};

/** What a call of `tool` gets: refused (a tool error), asked (elicitation), or run (an effect). */
function callOutcome(capabilities: object, over: Over, tool: string): { kind: 'refused'; text: string } | { kind: 'asked' | 'run' } {
  const r = feed(ready('2025-06-18', capabilities, over), req(1, 'tools/call', { name: tool, arguments: args[tool] }));
  const first = r.replies[0] as { method?: string; result?: { isError?: boolean; content: { text: string }[] }; error?: { message: string } } | undefined;
  if (first?.error) throw new Error(`${tool}: ${first.error.message}`);
  if (first?.method === 'elicitation/create') return { kind: 'asked' };
  if (first?.result?.isError) return { kind: 'refused', text: first.result.content[0]?.text ?? '' };
  assert.ok(r.effects.some((e) => e.kind === 'runTool'), `${tool} is run`);
  return { kind: 'run' };
}

const golden = suite('tools/list per caller (super-pi-code)');

golden('the local stdio user, without elicitation, sees all eight (its host confirms `ask` tools itself)', () => {
  assert.equal(listed({}, local), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
});

golden('a token principal without elicitation does not see bash (`ask`, and it cannot be asked)', () => {
  assert.equal(listed({}, token), ['read', 'write', 'edit', 'grep', 'find', 'ls', 'harness_task']);
});

golden('a token principal that declared elicitation sees all eight', () => {
  assert.equal(listed(elicits, token), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
});

golden('an anonymous caller sees only the read-only tools: no write, edit, bash or harness_task', () => {
  assert.equal(listed({}, anonymous), ['read', 'grep', 'find', 'ls']);
  assert.equal(listed(elicits, anonymous), ['read', 'grep', 'find', 'ls'], 'elicitation does not lift the remote policy');
});

golden('an anonymous caller sees what the operator opted into: tasks with --allow-anonymous-tasks, writes with --allow-anonymous-writes', () => {
  assert.equal(listed({}, { ...anonymous, allowAnonymousTasks: true }), ['read', 'grep', 'find', 'ls', 'harness_task']);
  assert.equal(listed({}, { ...anonymous, allowAnonymousWrites: true }), ['read', 'write', 'edit', 'grep', 'find', 'ls']);
  assert.equal(listed(elicits, { ...anonymous, allowAnonymousWrites: true, allowAnonymousTasks: true }), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
});

golden('under super-pi-assistant (harness_task is `ask`) a remote caller that cannot be asked is shown no tool at all', () => {
  const assistant = { harness: 'super-pi-assistant' } as const;
  assert.equal(listed({}, { ...token, ...assistant }), []);
  assert.equal(listed(elicits, { ...token, ...assistant }), ['harness_task']);
  assert.equal(listed({}, { ...local, ...assistant }), ['harness_task']);
});

golden.run();

const truth = suite('what is listed is exactly what may be called');

truth('for every harness, caller and capability: a tool is listed if and only if calling it is not refused by policy', () => {
  const callers: [string, Over][] = [
    ['local', local], ['token', token], ['anonymous', anonymous],
    ['anonymous+writes', { ...anonymous, allowAnonymousWrites: true }], ['anonymous+tasks', { ...anonymous, allowAnonymousTasks: true }],
  ];
  for (const harness of harnessIds) {
    for (const [name, over] of callers) {
      for (const caps of [{}, elicits]) {
        const shown = listed(caps, { ...over, harness });
        for (const tool of toolNames) {
          const outcome = callOutcome(caps, { ...over, harness }, tool);
          const where = `${harness} / ${name} / ${Object.keys(caps).join('') || 'no elicitation'} / ${tool}`;
          assert.is(shown.includes(tool), outcome.kind !== 'refused', `${where}: ${outcome.kind === 'refused' ? outcome.text : outcome.kind}`);
        }
      }
    }
  }
});

truth.run();

const anon = suite('anonymous harness_task');

anon('is refused with a tool error that names --allow-anonymous-tasks and how to get a token; no task starts', () => {
  const r = feed(ready('2025-06-18', {}, anonymous), req(1, 'tools/call', { name: 'harness_task', arguments: args.harness_task }));
  const result = (r.replies[0] as { result: { isError: boolean; content: { text: string }[] } }).result;
  assert.is(result.isError, true);
  assert.match(result.content[0]?.text ?? '', /--allow-anonymous-tasks/);
  assert.match(result.content[0]?.text ?? '', /SUPERPI_ALLOW_ANONYMOUS_TASKS/);
  assert.match(result.content[0]?.text ?? '', /bearer token .*--tokens FILE or SUPERPI_TOKENS/);
  assert.equal(r.effects.filter((e) => e.kind === 'runTool'), []);
});

anon('with --allow-anonymous-tasks it starts', () => {
  const r = feed(ready('2025-06-18', {}, { ...anonymous, allowAnonymousTasks: true }), req(1, 'tools/call', { name: 'harness_task', arguments: args.harness_task }));
  assert.equal(r.replies, []);
  assert.equal(r.effects.map((e) => e.kind), ['runTool']);
});

anon.run();

const loadout = suite('superpi://loadout per caller');

const loadoutOf = (capabilities: object, over: Over) => {
  const r = feed(ready('2025-06-18', capabilities, over), req(1, 'resources/read', { uri: 'superpi://loadout' }));
  return JSON.parse((r.replies[0] as { result: { contents: { text: string }[] } }).result.contents[0]?.text ?? '') as {
    caller: string; tools: { name: string; verdict: string; rule: string; harnessVerdict?: string }[];
  };
};

loadout('an anonymous caller is told write, edit, bash and harness_task are denied to it, and why', () => {
  const doc = loadoutOf({}, anonymous);
  assert.is(doc.caller, 'anonymous');
  const byName = new Map(doc.tools.map((t) => [t.name, t]));
  assert.equal(doc.tools.filter((t) => t.verdict !== 'deny').map((t) => t.name), ['read', 'grep', 'find', 'ls']);
  assert.match(byName.get('write')?.rule ?? '', /anonymous remote callers cannot use write/);
  assert.is(byName.get('write')?.harnessVerdict, 'allow', 'the harness would allow it');
  assert.is(byName.get('bash')?.harnessVerdict, 'ask');
  assert.match(byName.get('harness_task')?.rule ?? '', /--allow-anonymous-tasks/);
});

loadout('a token principal without elicitation is told bash is denied because it cannot be asked; with elicitation, that it is asked', () => {
  const without = loadoutOf({}, token).tools.find((t) => t.name === 'bash');
  assert.is(without?.verdict, 'deny');
  assert.match(without?.rule ?? '', /cannot be asked/);
  assert.is(loadoutOf(elicits, token).tools.find((t) => t.name === 'bash')?.verdict, 'ask');
});

loadout('the local stdio user without elicitation is told bash is allowed (its host confirms)', () => {
  const bash = loadoutOf({}, local).tools.find((t) => t.name === 'bash');
  assert.is(bash?.verdict, 'allow');
  assert.is(bash?.harnessVerdict, 'ask');
});

loadout.run();

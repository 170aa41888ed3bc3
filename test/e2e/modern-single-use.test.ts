// End to end with raw JSON-RPC over Streamable HTTP, two server processes on one SQLite file: a person's
// confirmation over 2026-07-28 runs its call once. `bash` is `ask` under the default harness: a token
// caller that declares form elicitation gets `input_required` and a sealed `requestState`; the retry with
// the person's yes runs `echo x >> f.txt` on one node, and the identical retry — a network retry, or a
// replay by whoever saw it — sent to the other node is -32602 "already used", with f.txt holding one line.
// The same retry sent to both nodes at once runs once. A no leaves the state unspent. A stdio server (its
// own random state key, its SQLite store made on first use) refuses the replay the same way.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, stdioEntry } from './fixtures.ts';
import { type TwoNodes, startTwoNodes } from './two-nodes.ts';
import { httpAsk, type Message, stdioAsker } from './task-listen-wire.ts';

const ASKABLE = { elicitation: { form: {} } };
const ACCEPT = { action: 'accept', content: { allow: true } };

const post = (server: RunningServer, params: Record<string, unknown>): Promise<Message> => httpAsk(server, 'tools/call', params, 'alice', ASKABLE);
const bash = (command: string) => ({ name: 'bash', arguments: { command } });

const test = suite('a confirmed call runs once: the same accepted retry on another node of one SQLite file is -32602');
let nodes: TwoNodes;
let nodeA: RunningServer;
let nodeB: RunningServer;

test.before(async () => {
  nodes = await startTwoNodes([]);
  ({ nodeA, nodeB } = nodes);
});
test.after(async () => {
  await nodes?.stop();
});

const linesOf = async (file: string): Promise<string[]> => (await readFile(path.join(nodes.box.ws, file), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

/** Round 1 on `node`: input_required with the confirmation and a sealed state; nothing runs. */
async function asked(node: RunningServer, command: string): Promise<string> {
  const first = await post(node, bash(command));
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  assert.type(first.result?.requestState, 'string');
  return first.result?.requestState as string;
}

const ran = (m: Message) => m.result?.resultType === 'complete' && m.result.isError !== true;
const alreadyUsed = (m: Message) => m.error?.code === -32602 && /requestState was already used/.test(m.error.message);

test('accepted on node A, the identical retry on node B is -32602 "already used" and f.txt holds one line', async () => {
  const command = 'echo x >> f.txt';
  const requestState = await asked(nodeA, command);
  assert.equal(await linesOf('f.txt'), [], 'nothing runs before the answer');
  const retry = { ...bash(command), requestState, inputResponses: { confirm: ACCEPT } };

  const once = await post(nodeA, retry);
  assert.ok(ran(once), JSON.stringify(once));
  assert.equal(await linesOf('f.txt'), ['x']);

  const replayed = await post(nodeB, retry);
  assert.ok(alreadyUsed(replayed), JSON.stringify(replayed));
  assert.match(replayed.error!.message, /call the tool again without requestState/);
  assert.not.ok(replayed.result);
  const again = await post(nodeA, retry);
  assert.ok(alreadyUsed(again), `the node that ran it refuses too: ${JSON.stringify(again)}`);
  assert.equal(await linesOf('f.txt'), ['x'], 'one line: the command ran once');

  // Asking afresh (no requestState) is a new question, whose yes runs the call again: single use, not a ban.
  const fresh = await asked(nodeB, command);
  assert.ok(ran(await post(nodeB, { ...bash(command), requestState: fresh, inputResponses: { confirm: ACCEPT } })));
  assert.equal(await linesOf('f.txt'), ['x', 'x']);
});

test('the same accepted retry sent to both nodes at once runs once: one result, one -32602', async () => {
  const command = 'echo y >> g.txt';
  const requestState = await asked(nodeB, command);
  const retry = { ...bash(command), requestState, inputResponses: { confirm: ACCEPT } };
  const answers = await Promise.all([post(nodeA, retry), post(nodeB, retry), post(nodeA, retry), post(nodeB, retry)]);
  assert.is(answers.filter(ran).length, 1, JSON.stringify(answers));
  assert.is(answers.filter(alreadyUsed).length, 3, JSON.stringify(answers));
  assert.equal(await linesOf('g.txt'), ['y']);
});

test('a no spends nothing: the declined state later carrying a yes runs the call once', async () => {
  const command = 'echo z >> h.txt';
  const requestState = await asked(nodeA, command);
  const no = await post(nodeB, { ...bash(command), requestState, inputResponses: { confirm: { action: 'decline' } } });
  assert.is(no.result?.isError, true, JSON.stringify(no));
  assert.equal(await linesOf('h.txt'), []);
  const yes = await post(nodeB, { ...bash(command), requestState, inputResponses: { confirm: ACCEPT } });
  assert.ok(ran(yes), JSON.stringify(yes));
  assert.ok(alreadyUsed(await post(nodeA, { ...bash(command), requestState, inputResponses: { confirm: ACCEPT } })));
  assert.equal(await linesOf('h.txt'), ['z']);
});

test.run();

const stdio = suite('a confirmed call runs once over stdio (one process, its SQLite store)');
let box: Sandbox;
let home: string;
let child: ChildProcessWithoutNullStreams;
let ask: (method: string, params: Record<string, unknown>) => Promise<Message>;

stdio.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  // No SUPERPI_STATE_KEY: a single process seals with a random key of its own.
  const env: NodeJS.ProcessEnv = { ...process.env, SUPERPI_HOME: home };
  delete env.SUPERPI_STATE_KEY;
  child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', box.ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env });
  child.stderr.resume();
  ask = stdioAsker(child, ASKABLE);
});
stdio.after(async () => {
  if (child !== undefined) {
    child.stdin.end();
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }
  await box?.cleanup();
  await rm(home, { recursive: true, force: true });
});

stdio('the accepted retry runs the command; the same retry again is -32602 "already used" and the file holds one line', async () => {
  const command = 'echo s >> s.txt';
  const first = await ask('tools/call', bash(command));
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  const retry = { ...bash(command), requestState: first.result?.requestState, inputResponses: { confirm: ACCEPT } };
  const once = await ask('tools/call', retry);
  assert.ok(ran(once), JSON.stringify(once));
  const replayed = await ask('tools/call', retry);
  assert.ok(alreadyUsed(replayed), JSON.stringify(replayed));
  const lines = (await readFile(path.join(box.ws, 's.txt'), 'utf8')).split('\n').filter((l) => l !== '');
  assert.equal(lines, ['s']);
});

stdio.run();

// Golden tests of the client's roots choosing the session's workspace (src/mcp/roots.ts): lines in, the
// server's `roots/list` question, the `checkRoots` effect, and where tools, resources and completions run.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect } from '../../src/mcp/effects.ts';
import type { RootsPolicy } from '../../src/mcp/state.ts';
import { effectiveWorkspace } from '../../src/mcp/state.ts';
import { feed, fold, fresh, init, req } from './golden.ts';
import { handleMcpLine } from '../../src/mcp/handle.ts';
import { MAX_ROOTS_CONSIDERED, ROOTS_WAIT_MS } from '../../src/limits.ts';

const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const listChanged = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
const withRoots = { roots: { listChanged: true } };
const answerRoots = (id: string, uris: string[]) => ({ jsonrpc: '2.0', id, result: { roots: uris.map((uri) => ({ uri })) } });
const checkOf = (effects: Effect[]) => effects.find((e): e is Extract<Effect, { kind: 'checkRoots' }> => e.kind === 'checkRoots');
const logs = (effects: Effect[]) => effects.flatMap((e) => (e.kind === 'log' ? [`${e.level}: ${e.message}`] : []));

/** A session that initialized under `policy`, with or without the roots capability. */
function started(policy: RootsPolicy, capabilities: object = withRoots) {
  return feed(fresh({ roots: policy, workspace: '/srv/ws' }), init('2025-06-18', capabilities), initialized);
}

/** A session whose client answered roots/list with `uris`, before the runtime has checked them. */
function answered(policy: RootsPolicy, uris: string[]) {
  const s = started(policy);
  return feed(s.state, answerRoots('superpi-roots-1', uris));
}

const asking = suite('when roots are asked');

asking('a client declaring roots is asked roots/list right after notifications/initialized', () => {
  const s = feed(fresh({ roots: 'follow' }), init('2025-06-18', withRoots));
  assert.equal(s.replies.filter((r) => (r as { method?: string }).method === 'roots/list'), [], 'not before initialized');
  const after = feed(s.state, initialized);
  assert.equal(after.replies, [{ jsonrpc: '2.0', id: 'superpi-roots-1', method: 'roots/list', params: {} }]);
  assert.is(after.state.rootsAsked, 'superpi-roots-1');
});

asking('a client without the roots capability is never asked', () => {
  const s = started('follow', {});
  assert.equal(s.replies.slice(1), []);
  assert.equal(feed(s.state, listChanged).replies, []);
  assert.is(s.state.rootsAsked, null);
});

asking('with the workspace named by the operator (policy ignore) roots are never asked, nor on list_changed', () => {
  const s = started('ignore');
  assert.equal(s.replies.slice(1), []);
  const changed = feed(s.state, listChanged);
  assert.equal(changed.replies, []);
  assert.is(changed.state.rootsRound, 0);
});

asking('notifications/roots/list_changed asks again, in a new round', () => {
  const s = answered('follow', ['file:///a']);
  const again = feed(s.state, listChanged);
  assert.equal(again.replies, [{ jsonrpc: '2.0', id: 'superpi-roots-2', method: 'roots/list', params: {} }]);
  assert.is(again.state.rootsRound, 2);
});

asking('the instructions name the client\'s root when roots will be followed, the workspace otherwise', () => {
  const follow = feed(fresh({ roots: 'follow', workspace: '/srv/ws' }), init('2025-06-18', withRoots));
  const text = (follow.replies[0] as { result: { instructions: string } }).result.instructions;
  assert.match(text, /the client's root/);
  const ignore = feed(fresh({ roots: 'ignore', workspace: '/srv/ws' }), init('2025-06-18', withRoots));
  assert.match((ignore.replies[0] as { result: { instructions: string } }).result.instructions, /serves the workspace \/srv\/ws/);
});

const choosing = suite('which root becomes the workspace');

choosing('the answer\'s file: URIs go to the runtime to be checked; other schemes are refused with a logged reason', () => {
  const s = answered('follow', ['https://example.com/repo', 'file:///home/me/a', 'file:///home/me/b']);
  assert.equal(checkOf(s.effects), { kind: 'checkRoots', round: 1, uris: ['file:///home/me/a', 'file:///home/me/b'] });
  assert.ok(logs(s.effects).some((l) => l.startsWith('warning: client root refused: it is not a file:// URI')));
  assert.is(s.state.rootsAsked, null);
  assert.is(s.state.root, null, 'nothing chosen before the check');
});

choosing('the first checked directory becomes the session\'s workspace; earlier refused ones are logged', () => {
  const s = answered('follow', ['file:///gone', 'file:///home/me/a']);
  const f = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///gone', problem: 'it does not exist (ENOENT)' }, { uri: 'file:///home/me/a', path: '/home/me/a' }] });
  assert.is(f.state.root, '/home/me/a');
  assert.is(effectiveWorkspace(f.state), '/home/me/a');
  assert.ok(logs(f.effects).includes('warning: client root refused: it does not exist (ENOENT)'));
});

choosing('tools, the workspace resource and path completions then run in the chosen root', () => {
  const s = answered('follow', ['file:///home/me/a']);
  const f = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] });
  const calls = feed(f.state, req(1, 'tools/call', { name: 'ls', arguments: {} }), req(2, 'resources/read', { uri: 'superpi://workspace' }));
  assert.equal(calls.effects.map((e) => ('workspace' in e ? e.workspace : null)), ['/home/me/a', '/home/me/a']);
});

const waiting = suite('requests that need the workspace wait for the roots');

waiting('asking the roots arms a ROOTS_WAIT_MS deadline for the runtime', () => {
  const s = started('follow');
  assert.equal(s.effects.filter((e) => e.kind === 'rootsDeadline'), [{ kind: 'rootsDeadline', round: 1, ms: ROOTS_WAIT_MS }]);
});

waiting('a tool call before the roots are settled is held, then runs in the chosen root', () => {
  const s = answered('follow', ['file:///home/me/a']);
  const call = feed(s.state, req(1, 'tools/call', { name: 'ls', arguments: {} }), req(2, 'ping'));
  assert.equal(call.replies, [{ jsonrpc: '2.0', id: 2, result: {} }], 'ping is not held');
  assert.equal(call.effects.filter((e) => e.kind === 'runTool'), []);
  const f = fold(call.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] });
  const run = f.effects.filter((e) => e.kind === 'runTool');
  assert.equal(run.map((e) => [e.requestId, e.workspace]), [[1, '/home/me/a']]);
  assert.equal(f.state.rootsHeld, []);
});

waiting('past the deadline, held requests run in the configured workspace and the wait is logged', () => {
  const s = started('follow');
  const call = feed(s.state, req(1, 'tools/call', { name: 'ls', arguments: {} }));
  const over = fold(call.state, { kind: 'rootsWaitOver', round: 1 });
  const run = over.effects.filter((e) => e.kind === 'runTool');
  assert.equal(run.map((e) => [e.requestId, 'workspace' in e]), [[1, false]]);
  assert.ok(logs(over.effects).some((l) => l.startsWith('warning: the client\'s roots were not settled within ROOTS_WAIT_MS')));
  const late = feed(over.state, answerRoots('superpi-roots-1', ['file:///home/me/a']));
  const chosen = fold(late.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] });
  assert.is(chosen.state.root, '/home/me/a', 'a late answer still chooses the root');
});

waiting('a deadline of an older round releases nothing', () => {
  const s = feed(started('follow').state, listChanged, req(1, 'tools/call', { name: 'ls', arguments: {} }));
  const over = fold(s.state, { kind: 'rootsWaitOver', round: 1 });
  assert.equal(over.effects.filter((e) => e.kind === 'runTool'), []);
  assert.is(over.state.rootsHeld.length, 1);
});

waiting('a held request the client cancels is never run, and its id is free again', () => {
  const s = started('follow');
  const call = feed(s.state, req(1, 'tools/call', { name: 'ls', arguments: {} }), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
  const over = fold(call.state, { kind: 'rootsWaitOver', round: 1 });
  assert.equal(over.effects.filter((e) => e.kind === 'runTool'), []);
  assert.equal(over.replies, []);
});

waiting('a request reusing the id of a held one is refused as a reused id', () => {
  const s = started('follow');
  const twice = feed(s.state, req(1, 'tools/call', { name: 'ls', arguments: {} }), req(1, 'tools/call', { name: 'ls', arguments: {} }));
  assert.is((twice.replies[0] as { error: { code: number } }).error.code, -32600);
  assert.is(twice.state.rootsHeld.length, 1);
});

choosing('list_changed moves the workspace to the new first root; a check from the older round is ignored', () => {
  const s = answered('follow', ['file:///home/me/a']);
  const changed = feed(s.state, listChanged, answerRoots('superpi-roots-2', ['file:///home/me/b']));
  const stale = fold(changed.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] });
  assert.is(stale.state.root, null, 'round 1 no longer decides');
  const fresh2 = fold(stale.state, { kind: 'rootsChecked', round: 2, roots: [{ uri: 'file:///home/me/b', path: '/home/me/b' }] });
  assert.is(fresh2.state.root, '/home/me/b');
});

choosing('an empty roots list (or none usable) returns the session to the configured workspace', () => {
  const s = answered('follow', ['file:///home/me/a']);
  const chosen = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] });
  const emptied = feed(chosen.state, listChanged, answerRoots('superpi-roots-2', []));
  assert.is(emptied.state.root, null);
  assert.is(effectiveWorkspace(emptied.state), '/srv/ws');
  assert.is(checkOf(emptied.effects), undefined);
});

choosing('an error answer to roots/list keeps the workspace and logs why', () => {
  const s = started('follow');
  const f = feed(s.state, { jsonrpc: '2.0', id: 'superpi-roots-1', error: { code: -32601, message: 'no roots here' } });
  assert.is(f.state.root, null);
  assert.is(f.state.rootsAsked, null);
  assert.ok(logs(f.effects).some((l) => l.includes('no roots here')));
});

choosing(`at most MAX_ROOTS_CONSIDERED (${MAX_ROOTS_CONSIDERED}) roots are checked`, () => {
  const uris = Array.from({ length: MAX_ROOTS_CONSIDERED + 5 }, (_, i) => `file:///r/${i}`);
  const s = answered('follow', uris);
  assert.is(checkOf(s.effects)?.uris.length, MAX_ROOTS_CONSIDERED);
});

const remote = suite('a remote session\'s roots (policy narrow)');

remote('a root outside the configured workspace is refused; the session keeps the configured workspace', () => {
  const s = answered('narrow', ['file:///etc']);
  const f = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///etc', path: '/etc' }] });
  assert.is(f.state.root, null);
  assert.is(effectiveWorkspace(f.state), '/srv/ws');
  assert.ok(logs(f.effects).some((l) => l.includes("a remote session's root must lie inside the server's workspace /srv/ws")));
});

remote('a sibling sharing the workspace\'s name as a prefix is outside it', () => {
  const s = answered('narrow', ['file:///srv/ws-other']);
  const f = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///srv/ws-other', path: '/srv/ws-other' }] });
  assert.is(f.state.root, null);
});

remote('the first request held while roots/list is unanswered carries a fresh question on its own stream (an HTTP GET stream may not be open yet)', () => {
  const s = started('narrow');
  const step = handleMcpLine(JSON.stringify(req(5, 'tools/call', { name: 'ls', arguments: {} })), s.state);
  assert.equal(step.replies.map((r) => [JSON.parse(r.line), r.relatedTo]), [[{ jsonrpc: '2.0', id: 'superpi-roots-2', method: 'roots/list', params: {} }, 5]]);
  const second = handleMcpLine(JSON.stringify(req(6, 'tools/call', { name: 'ls', arguments: {} })), step.state);
  assert.equal(second.replies, [], 'asked once per wait');
  const local = feed(started('follow').state, req(5, 'tools/call', { name: 'ls', arguments: {} }));
  assert.equal(local.replies, [], 'a local (stdio) session has one channel: its question was delivered');
});

remote('a root inside the configured workspace narrows the session to it', () => {
  const s = answered('narrow', ['file:///srv/ws/pkg']);
  const f = fold(s.state, { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///srv/ws/pkg', path: '/srv/ws/pkg' }] });
  assert.is(f.state.root, '/srv/ws/pkg');
});

asking.run();
choosing.run();
waiting.run();
remote.run();

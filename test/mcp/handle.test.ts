import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { feed, fold, fresh, init, ready, req } from './golden.ts';

// ---------------------------------------------------------------------------------------------
const jsonrpc = suite('JSON-RPC framing and errors');

jsonrpc('answers broken JSON with -32700 and id null', () => {
  const r = feed(fresh(), '{"jsonrpc":"2.0","id":1,');
  assert.equal(r.replies.length, 1);
  const reply = r.replies[0] as { id: unknown; error: { code: number } };
  assert.is(reply.id, null);
  assert.is(reply.error.code, -32700);
});

jsonrpc('answers a non-object message with -32600', () => {
  const r = feed(fresh(), '42');
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32600);
});

jsonrpc('answers a message without jsonrpc "2.0" with -32600, keeping its id', () => {
  const r = feed(fresh(), { id: 7, method: 'ping' });
  assert.equal(r.replies, [{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid request: jsonrpc must be "2.0"' } }]);
});

jsonrpc('answers params that are not an object with -32600', () => {
  const r = feed(ready(), { jsonrpc: '2.0', id: 3, method: 'tools/list', params: [1, 2] });
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32600);
});

jsonrpc('rejects a batch array in 2025-06-18 with -32600 and id null', () => {
  const r = feed(ready('2025-06-18'), [req(1, 'ping'), req(2, 'ping')]);
  assert.equal(r.replies.length, 1);
  assert.is((r.replies[0] as { id: unknown }).id, null);
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32600);
});

jsonrpc('answers each element of a batch in 2025-03-26', () => {
  const r = feed(ready('2025-03-26'), [req(1, 'ping'), { jsonrpc: '2.0', method: 'notifications/initialized' }, req(2, 'ping')]);
  assert.equal(r.replies, [{ jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 2, result: {} }]);
});

jsonrpc('never replies to a notification, even an unknown or malformed one', () => {
  const r = feed(ready(), { jsonrpc: '2.0', method: 'notifications/whatever' }, { jsonrpc: '2.0', method: 'tools/call', params: { name: 'nope' } });
  assert.equal(r.replies, []);
});

jsonrpc('answers an unknown method with -32601', () => {
  const r = feed(ready(), req(5, 'tools/dance'));
  assert.equal(r.replies, [{ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found: tools/dance' } }]);
});

jsonrpc('keeps request id 1 and "1" apart', () => {
  const r = feed(ready(), req(1, 'ping'), req('1', 'ping'));
  assert.equal(r.replies.map((x) => (x as { id: unknown }).id), [1, '1']);
  // Also while both are in flight: "1" is not "already used" by 1.
  const calls = feed(ready(), req(1, 'tools/call', { name: 'read', arguments: { path: 'a' } }), req('1', 'tools/call', { name: 'read', arguments: { path: 'b' } }));
  assert.equal(calls.replies, []);
  assert.is(calls.effects.filter((e) => e.kind === 'runTool').length, 2);
});

jsonrpc.run();

// ---------------------------------------------------------------------------------------------
const lifecycle = suite('initialize and the session lifecycle');

for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['2026-07-28', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
  lifecycle(`answers protocolVersion ${asked} with ${answered}`, () => {
    const r = feed(fresh(), init(asked));
    const result = (r.replies[0] as { result: { protocolVersion: string } }).result;
    assert.is(result.protocolVersion, answered);
    assert.is(r.state.protocolVersion, answered);
  });
}

lifecycle('logs the requested version at debug level', () => {
  const r = feed(fresh(), init('2024-11-05'));
  const log = r.effects.find((e) => e.kind === 'log');
  assert.ok(log && log.kind === 'log' && log.level === 'debug');
  assert.is((log as { data?: Record<string, unknown> }).data?.requestedVersion, '2024-11-05');
});

lifecycle('declares tools, prompts, resources, logging and completions', () => {
  const r = feed(fresh(), init());
  const result = (r.replies[0] as { result: { capabilities: Record<string, unknown>; serverInfo: { name: string } } }).result;
  assert.equal(Object.keys(result.capabilities).sort(), ['completions', 'logging', 'prompts', 'resources', 'tools']);
  assert.is(result.serverInfo.name, 'super-pi');
});

lifecycle('refuses requests before initialize with a clear error', () => {
  const r = feed(fresh(), req(1, 'tools/list'));
  const error = (r.replies[0] as { error: { code: number; message: string } }).error;
  assert.is(error.code, -32600);
  assert.match(error.message, /not initialized.*initialize/i);
});

lifecycle('answers ping before initialize', () => {
  assert.equal(feed(fresh(), req(1, 'ping')).replies, [{ jsonrpc: '2.0', id: 1, result: {} }]);
});

lifecycle('refuses a second initialize', () => {
  const r = feed(ready(), init());
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32600);
});

lifecycle('refuses initialize without a protocolVersion with -32602', () => {
  const r = feed(fresh(), { jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } });
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32602);
  assert.is(r.state.phase, 'awaiting-initialize');
});

lifecycle('takes the connection harness from initialize _meta and refuses an unknown one', () => {
  const ok = feed(fresh(), init('2025-06-18', {}, { _meta: { 'superpi/harness': 'super-pi-planner' } }));
  assert.is(ok.state.harness, 'super-pi-planner');
  const bad = feed(fresh(), init('2025-06-18', {}, { _meta: { 'superpi/harness': 'evil' } }));
  assert.is((bad.replies[0] as { error: { code: number } }).error.code, -32602);
});

lifecycle('logging/setLevel takes a level and refuses an unknown one', () => {
  const r = feed(ready(), req(1, 'logging/setLevel', { level: 'debug' }), req(2, 'logging/setLevel', { level: 'loud' }));
  assert.equal(r.replies[0], { jsonrpc: '2.0', id: 1, result: {} });
  assert.is((r.replies[1] as { error: { code: number } }).error.code, -32602);
  assert.is(r.state.logLevel, 'debug');
});

lifecycle('sends log records to a client that set a level', () => {
  const s = feed(ready(), req(1, 'logging/setLevel', { level: 'debug' })).state;
  const r = feed(s, { jsonrpc: '2.0', id: 9, result: {} }); // a stray response logs at debug
  const note = r.replies.find((x) => (x as { method?: string }).method === 'notifications/message');
  assert.ok(note, 'expected a notifications/message');
});

lifecycle.run();

// ---------------------------------------------------------------------------------------------
const tools = suite('tools/list and tools/call');

tools('lists all eight tools for super-pi-code, with schemas and the four annotations', () => {
  const r = feed(ready(), req(1, 'tools/list'));
  const list = (r.replies[0] as { result: { tools: { name: string; inputSchema: { type: string }; annotations: Record<string, boolean> }[] } }).result.tools;
  assert.equal(list.map((t) => t.name), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
  for (const t of list) {
    assert.is(t.inputSchema.type, 'object');
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) assert.type(t.annotations[hint], 'boolean', `${t.name}.${hint}`);
  }
});

tools('lists only the planner loadout under super-pi-planner', () => {
  const r = feed(ready('2025-06-18', {}, { harness: 'super-pi-planner' }), req(1, 'tools/list'));
  const names = (r.replies[0] as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
  assert.equal(names, ['read', 'grep', 'find', 'ls']);
});

tools('omits outputSchema, titles and annotations for versions that predate them', () => {
  const r = feed(ready('2024-11-05'), req(1, 'tools/list'));
  const t = (r.replies[0] as { result: { tools: Record<string, unknown>[] } }).result.tools[0] as Record<string, unknown>;
  assert.equal(Object.keys(t).sort(), ['description', 'inputSchema', 'name']);
});

tools('paginates with an opaque cursor and rejects a forged one', () => {
  const s = ready('2025-06-18', {}, { pageSize: 3 });
  const p1 = feed(s, req(1, 'tools/list')).replies[0] as { result: { tools: { name: string }[]; nextCursor?: string } };
  assert.equal(p1.result.tools.map((t) => t.name), ['read', 'write', 'edit']);
  assert.type(p1.result.nextCursor, 'string');
  const p2 = feed(s, req(2, 'tools/list', { cursor: p1.result.nextCursor })).replies[0] as { result: { tools: { name: string }[]; nextCursor?: string } };
  assert.equal(p2.result.tools.map((t) => t.name), ['bash', 'grep', 'find']);
  const p3 = feed(s, req(3, 'tools/list', { cursor: p2.result.nextCursor })).replies[0] as { result: { tools: { name: string }[]; nextCursor?: string } };
  assert.equal(p3.result.tools.map((t) => t.name), ['ls', 'harness_task']);
  assert.is(p3.result.nextCursor, undefined);
  const bad = feed(s, req(4, 'tools/list', { cursor: 'not-a-cursor' })).replies[0] as { error: { code: number } };
  assert.is(bad.error.code, -32602);
});

tools('answers an unknown tool with -32602', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'rm', arguments: {} }));
  assert.equal(r.replies, [{ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: rm' } }]);
});

/** The text of an `isError` tool result, or a failure naming what came instead. */
function toolErrorText(reply: unknown): string {
  const r = reply as { result?: { isError?: boolean; content?: { type: string; text: string }[] }; error?: unknown };
  assert.is(r.error, undefined, 'a tool result, not a JSON-RPC error');
  assert.is(r.result?.isError, true);
  assert.is(r.result?.content?.length, 1);
  return r.result?.content?.[0]?.text ?? '';
}

tools('validates arguments against the schema before anything runs; a bad call is an isError result the model reads (SEP-1303)', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'read', arguments: { path: 5 } }), req(2, 'tools/call', { name: 'read', arguments: { path: 'a', bogus: 1 } }), req(3, 'tools/call', { name: 'read', arguments: {} }), req(4, 'tools/call', { name: 'read', arguments: [1] }));
  assert.equal(r.effects.filter((e) => e.kind === 'runTool'), []);
  assert.equal(r.replies.map((x) => (x as { id: unknown }).id), [1, 2, 3, 4]);
  const texts = r.replies.map(toolErrorText);
  assert.match(texts[0]!, /^Invalid arguments for read: /);
  assert.match(texts[1]!, /unknown property "bogus"/);
  assert.match(texts[2]!, /missing the required property "path"/);
  assert.match(texts[3]!, /arguments must be an object/);
});

tools('the same bad arguments are an isError result under every version we speak', () => {
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    const r = feed(ready(version), req(1, 'tools/call', { name: 'read', arguments: { path: 5 } }));
    assert.match(toolErrorText(r.replies[0]), /Invalid arguments for read/, version);
  }
});

tools('an unknown tool stays a JSON-RPC -32602 (it is not a call the model can correct by its arguments)', () => {
  const r = feed(ready('2025-11-25'), req(1, 'tools/call', { name: 'nope', arguments: {} }));
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32602);
});

tools('turns a valid call into a runTool effect and its result into the reply', () => {
  const r = feed(ready(), req(7, 'tools/call', { name: 'read', arguments: { path: 'a.txt' } }));
  assert.equal(r.replies, []);
  const effect = r.effects.find((e) => e.kind === 'runTool');
  assert.ok(effect && effect.kind === 'runTool');
  assert.equal(effect.args, { path: 'a.txt' });
  assert.is(effect.harness, 'super-pi-code');
  const done = fold(r.state, { kind: 'toolDone', ticket: effect.ticket, outcome: { text: 'hello', structured: { x: 1 } } });
  assert.equal(done.replies, [{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'hello' }], structuredContent: { x: 1 } } }]);
  assert.is(done.state.pending.size, 0);
});

tools('carries an image block after the text note under every version we speak (read of an image)', () => {
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    const r = feed(ready(version), req(8, 'tools/call', { name: 'read', arguments: { path: 'a.png' } }));
    const effect = r.effects.find((e) => e.kind === 'runTool');
    assert.ok(effect && effect.kind === 'runTool');
    const image = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } as const;
    const done = fold(r.state, { kind: 'toolDone', ticket: effect.ticket, outcome: { text: 'Read image file', content: [image] } });
    assert.equal(done.replies, [{ jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: 'Read image file' }, image] } }], version);
  }
});

tools('marks a failed tool result isError and leaves structuredContent out before 2025-06-18', () => {
  const r = feed(ready('2025-03-26'), req(1, 'tools/call', { name: 'ls', arguments: {} }));
  const effect = r.effects.find((e) => e.kind === 'runTool')!;
  const done = fold(r.state, { kind: 'toolDone', ticket: (effect as { ticket: number }).ticket, outcome: { text: 'nope', structured: { a: 1 }, isError: true } });
  assert.equal((done.replies[0] as { result: unknown }).result, { content: [{ type: 'text', text: 'nope' }], isError: true });
});

tools('refuses a tool call whose id is already in flight', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'ls', arguments: {} }), req(1, 'tools/call', { name: 'ls', arguments: {} }));
  assert.is(r.effects.filter((e) => e.kind === 'runTool').length, 1);
  assert.is((r.replies[0] as { error: { code: number } }).error.code, -32600);
});

tools('denies a tool the harness forbids, naming the harness and the rule', () => {
  const r = feed(ready('2025-06-18', {}, { harness: 'super-pi-planner' }), req(1, 'tools/call', { name: 'write', arguments: { path: 'x', content: 'y' } }));
  const result = (r.replies[0] as { result: { isError: boolean; content: { text: string }[] } }).result;
  assert.is(result.isError, true);
  assert.match(result.content[0]!.text, /super-pi-planner: write is denied \(the planner cannot write\)/);
  assert.equal(r.effects.filter((e) => e.kind === 'runTool'), []);
});

tools('harness_task runs as an effect; the conversation it started becomes this connection\'s resource', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  const run = r.effects.find((e) => e.kind === 'runTool') as { ticket: number; tool: string };
  assert.is(run.tool, 'harness_task');
  const done = fold(r.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'the plan', structured: { conversation_id: 'c1', harness: 'super-pi-planner', status: 'completed', turns: 1, tool_calls: 0 } } });
  assert.equal(done.state.conversations, ['c1']);
  const listed = feed(done.state, req(2, 'resources/list'));
  assert.ok((listed.replies[0] as { result: { resources: { uri: string }[] } }).result.resources.some((x) => x.uri === 'superpi://conversation/c1/transcript'));
  const read = feed(done.state, req(3, 'resources/read', { uri: 'superpi://conversation/c1/transcript' }));
  const effect = read.effects.find((e) => e.kind === 'readTranscript') as { ticket: number; conversationId: string };
  assert.is(effect.conversationId, 'c1');
  const text = fold(read.state, { kind: 'transcript', ticket: effect.ticket, jsonl: '{"seq":1}' });
  assert.equal((text.replies[0] as { result: unknown }).result, { contents: [{ uri: 'superpi://conversation/c1/transcript', mimeType: 'application/jsonl', text: '{"seq":1}' }] });
  const gone = fold(read.state, { kind: 'transcript', ticket: effect.ticket, jsonl: null });
  assert.is((gone.replies[0] as { error: { code: number } }).error.code, -32002);
});

tools('validates harness_task arguments: harness is an enum of the harness ids', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'nope', prompt: 'x' } }));
  assert.match(toolErrorText(r.replies[0]), /super-pi-code/);
});

tools('asks the person through elicitation when the policy says ask and the client can be asked', () => {
  const s = ready('2025-06-18', { elicitation: {} });
  const r = feed(s, req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  const ask = r.replies[0] as { id: string; method: string; params: { message: string } };
  assert.is(ask.method, 'elicitation/create');
  assert.match(ask.params.message, /run the command: ls/);
  assert.equal(r.effects.filter((e) => e.kind === 'runTool'), []);
  const yes = feed(r.state, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { allow: true } } });
  assert.is(yes.effects.filter((e) => e.kind === 'runTool').length, 1);
  const no = feed(r.state, { jsonrpc: '2.0', id: ask.id, result: { action: 'decline' } });
  assert.match((no.replies[0] as { result: { content: { text: string }[] } }).result.content[0]!.text, /Not run: bash/);
});

tools('accept means run: a generic host form accepted as shown (allow defaults to true) or with no content runs the call; unticked, decline and cancel do not', () => {
  const s = ready('2025-06-18', { elicitation: {} });
  const r = feed(s, req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  const ask = r.replies[0] as { id: string; params: { requestedSchema: { properties: { allow: { default: unknown } }; required?: string[] } } };
  assert.is(ask.params.requestedSchema.properties.allow.default, true, 'the box is ticked by default');
  assert.is(ask.params.requestedSchema.required, undefined, 'nothing must be filled in to accept');
  const answers: [unknown, boolean][] = [
    [{ action: 'accept', content: { allow: true } }, true],
    [{ action: 'accept', content: {} }, true],
    [{ action: 'accept' }, true],
    [{ action: 'accept', content: { allow: false } }, false],
    [{ action: 'accept', content: 'yes' }, false],
    [{ action: 'decline' }, false],
    [{ action: 'cancel' }, false],
    [{}, false],
  ];
  for (const [answer, runs] of answers) {
    const out = feed(r.state, { jsonrpc: '2.0', id: ask.id, result: answer });
    assert.is(out.effects.filter((e) => e.kind === 'runTool').length, runs ? 1 : 0, JSON.stringify(answer));
    if (!runs) assert.match((out.replies[0] as { result: { content: { text: string }[] } }).result.content[0]!.text, /^Not run: bash/);
  }
});

tools('every tool has annotations.title (hosts show it), equal to its title', () => {
  const r = feed(ready('2025-11-25'), req(1, 'tools/list'));
  const tools = (r.replies[0] as { result: { tools: { name: string; title?: string; annotations?: { title?: string } }[] } }).result.tools;
  assert.is(tools.length, 8);
  for (const t of tools) {
    assert.type(t.annotations?.title, 'string', t.name);
    assert.is(t.annotations?.title, t.title, t.name);
  }
});

tools('runs an ask tool for the local user when the client cannot elicit (the host confirms calls)', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  assert.is(r.effects.filter((e) => e.kind === 'runTool').length, 1);
});

tools('denies an ask tool for a remote caller that cannot be asked', () => {
  const r = feed(ready('2025-06-18', {}, { principal: { kind: 'anonymous' } }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  assert.is((r.replies[0] as { result: { isError: boolean } }).result.isError, true);
});

tools('forwards progress for a call that carries a progressToken, and only then', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'bash', arguments: { command: 'x' }, _meta: { progressToken: 'p1' } }), req(2, 'tools/call', { name: 'ls', arguments: {} }));
  const [withToken, without] = r.effects.filter((e) => e.kind === 'runTool') as { ticket: number }[];
  const p = fold(r.state, { kind: 'toolProgress', ticket: withToken!.ticket, progress: { progress: 1, total: 3, message: 'working' } }, { kind: 'toolProgress', ticket: without!.ticket, progress: { progress: 1 } });
  assert.equal(p.replies, [{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p1', progress: 1, total: 3, message: 'working' } }]);
});

tools('a cancelled call stops its work and sends no reply', () => {
  const r = feed(ready(), req(4, 'tools/call', { name: 'bash', arguments: { command: 'sleep 10' } }), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4, reason: 'user' } });
  const run = r.effects.find((e) => e.kind === 'runTool') as { ticket: number };
  assert.ok(r.effects.some((e) => e.kind === 'cancel' && e.ticket === run.ticket));
  assert.equal(r.replies, []);
  const late = fold(r.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'too late' } });
  assert.equal(late.replies, []);
});

tools.run();

// ---------------------------------------------------------------------------------------------
const prompts = suite('prompts');

prompts('lists one prompt per harness plus plan_architecture', () => {
  const r = feed(ready(), req(1, 'prompts/list'));
  const names = (r.replies[0] as { result: { prompts: { name: string }[] } }).result.prompts.map((p) => p.name);
  assert.equal(names, ['super-pi-code', 'super-pi-assistant', 'super-pi-librarian', 'super-pi-planner', 'plan_architecture']);
});

prompts('renders a prompt with its harness system prompt and the task', () => {
  const r = feed(ready(), req(1, 'prompts/get', { name: 'super-pi-code', arguments: { task: 'fix the bug', path: 'src/a.ts' } }));
  const result = (r.replies[0] as { result: { messages: { role: string; content: { text: string } }[] } }).result;
  assert.is(result.messages[0]!.role, 'user');
  assert.match(result.messages[0]!.content.text, /Super-Pi Code/);
  assert.match(result.messages[0]!.content.text, /Task: fix the bug/);
  assert.match(result.messages[0]!.content.text, /Focus on: src\/a\.ts/);
});

prompts('plan_architecture renders the planner prompt', () => {
  const r = feed(ready(), req(1, 'prompts/get', { name: 'plan_architecture', arguments: { goal: 'split the server' } }));
  assert.match((r.replies[0] as { result: { messages: { content: { text: string } }[] } }).result.messages[0]!.content.text, /Super-Pi Planner/);
});

prompts('refuses an unknown prompt, a missing required argument and an unknown argument with -32602', () => {
  const r = feed(ready(), req(1, 'prompts/get', { name: 'nope' }), req(2, 'prompts/get', { name: 'super-pi-code', arguments: {} }), req(3, 'prompts/get', { name: 'super-pi-code', arguments: { task: 'x', colour: 'red' } }));
  assert.equal(r.replies.map((x) => (x as { id: unknown }).id), [1, 2, 3]);
  const errors = r.replies.map((x) => (x as { error: { code: number; message: string } }).error);
  assert.ok(errors.every((e) => e.code === -32602));
  assert.match(errors[1]!.message, /"task"/);
  assert.match(errors[2]!.message, /colour/);
});

prompts.run();

// ---------------------------------------------------------------------------------------------
const resources = suite('resources and completion');

resources('lists the workspace and loadout resources, and the transcript template', () => {
  const r = feed(ready(), req(1, 'resources/list'), req(2, 'resources/templates/list'));
  const uris = (r.replies[0] as { result: { resources: { uri: string }[] } }).result.resources.map((x) => x.uri);
  assert.equal(uris, ['superpi://workspace', 'superpi://loadout']);
  const t = (r.replies[1] as { result: { resourceTemplates: { uriTemplate: string }[] } }).result.resourceTemplates;
  assert.equal(t.map((x) => x.uriTemplate), ['superpi://conversation/{id}/transcript']);
});

resources('reads the loadout of the connection harness with the rule for each tool', () => {
  const r = feed(ready('2025-06-18', {}, { harness: 'super-pi-librarian' }), req(1, 'resources/read', { uri: 'superpi://loadout' }));
  const doc = JSON.parse((r.replies[0] as { result: { contents: { text: string }[] } }).result.contents[0]!.text);
  assert.is(doc.harness, 'super-pi-librarian');
  assert.is(doc.tools.find((t: { name: string }) => t.name === 'bash').verdict, 'deny');
});

resources('reads the workspace context through an effect', () => {
  const r = feed(ready(), req(1, 'resources/read', { uri: 'superpi://workspace' }));
  const effect = r.effects.find((e) => e.kind === 'readWorkspace') as { ticket: number };
  const done = fold(r.state, { kind: 'workspaceContext', ticket: effect.ticket, context: { root: '/ws', git: { branch: 'main', status: '' }, layout: ['src/'], readme: null } });
  const text = (done.replies[0] as { result: { contents: { text: string }[] } }).result.contents[0]!.text;
  assert.match(text, /Git branch: main/);
  assert.match(text, /- src\//);
});

resources('an unknown resource is -32002 at once; an unknown conversation is -32002 once the store says so', () => {
  const r = feed(ready(), req(1, 'resources/read', { uri: 'superpi://nope' }), req(2, 'resources/read', { uri: 'superpi://conversation/abc/transcript' }));
  assert.is(r.replies.length, 1);
  assert.equal(r.replies[0], { jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'Resource not found: superpi://nope', data: { uri: 'superpi://nope' } } });
  const effect = r.effects.find((e) => e.kind === 'readTranscript') as { ticket: number };
  const gone = fold(r.state, { kind: 'transcript', ticket: effect.ticket, jsonl: null });
  assert.is((gone.replies[0] as { error: { code: number } }).error.code, -32002);
});

resources('completes harness ids for the planner executor argument', () => {
  const r = feed(ready(), req(1, 'completion/complete', { ref: { type: 'ref/prompt', name: 'super-pi-planner' }, argument: { name: 'executor', value: 'super-pi-c' } }));
  assert.equal((r.replies[0] as { result: unknown }).result, { completion: { values: ['super-pi-code'], total: 1, hasMore: false } });
});

resources('completes path arguments through an effect', () => {
  const r = feed(ready(), req(1, 'completion/complete', { ref: { type: 'ref/prompt', name: 'super-pi-code' }, argument: { name: 'path', value: 'sr' } }));
  const effect = r.effects.find((e) => e.kind === 'completePath') as { ticket: number; prefix: string };
  assert.is(effect.prefix, 'sr');
  const done = fold(r.state, { kind: 'pathCompletions', ticket: effect.ticket, values: ['src/'], hasMore: false });
  assert.equal((done.replies[0] as { result: unknown }).result, { completion: { values: ['src/'], total: 1, hasMore: false } });
});

resources('refuses completion for an unknown prompt or argument with -32602', () => {
  const r = feed(ready(), req(1, 'completion/complete', { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: '' } }), req(2, 'completion/complete', { ref: { type: 'ref/prompt', name: 'super-pi-code' }, argument: { name: 'zzz', value: '' } }));
  // Both are answered: a loop over the replies alone would pass with none.
  assert.equal(r.replies.map((x) => (x as { id: unknown }).id), [1, 2]);
  for (const x of r.replies) assert.is((x as { error: { code: number } }).error.code, -32602);
});

resources('resources/subscribe on a transcript the store finds, then updates; one it does not find is not found', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  const run = r.effects.find((e) => e.kind === 'runTool') as { ticket: number };
  const uri = 'superpi://conversation/c9/transcript';
  const progress = fold(r.state, { kind: 'resourceUpdated', uri });
  assert.equal(progress.replies, [], 'no subscription yet, no notification');
  const done = fold(r.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'ok', structured: { conversation_id: 'c9' } } });
  const asked = feed(done.state, req(2, 'resources/subscribe', { uri }), req(3, 'resources/subscribe', { uri: 'superpi://conversation/other/transcript' }));
  const [mine, other] = asked.effects.filter((e) => e.kind === 'watchTranscript') as { ticket: number; conversationId: string }[];
  assert.equal([mine?.conversationId, other?.conversationId], ['c9', 'other']);
  const sub = fold(asked.state, { kind: 'transcriptFound', ticket: mine!.ticket, found: true }, { kind: 'transcriptFound', ticket: other!.ticket, found: false });
  assert.equal(sub.replies[0], { jsonrpc: '2.0', id: 2, result: {} });
  assert.is((sub.replies[1] as { error: { code: number } }).error.code, -32002);
  const note = fold(sub.state, { kind: 'resourceUpdated', uri });
  assert.equal(note.replies, [{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } }]);
  const off = feed(sub.state, req(4, 'resources/unsubscribe', { uri }));
  assert.equal(fold(off.state, { kind: 'resourceUpdated', uri }).replies, []);
});

resources.run();

const schemas = suite('argument schemas (draft 2020-12)');

schemas('edit needs oldText and newText together (dependentRequired)', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'edit', arguments: { path: 'a', oldText: 'x' } }));
  const result = (r.replies[0] as { result: { isError: boolean; content: { text: string }[] } }).result;
  assert.is(result.isError, true);
  assert.match(result.content[0]!.text, /newText/);
});

schemas.run();

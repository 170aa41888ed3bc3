// GET /metrics on a real server process: the metric names and types, counters that move with
// tool calls, and label values that come only from fixed sets — a path, pattern or tool name a caller
// sent never shows up in the exposition text.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { harnessIds } from '../../src/harness/ids.ts';
import { toolNames } from '../../src/tools/definition.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const metrics = suite('/metrics');
let box: Sandbox;
let server: RunningServer;

metrics.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--threads', '2', '--tool-threads', '2']);
});
metrics.after(async () => {
  await server.stop();
  await box.cleanup();
});

const base = () => server.url.replace(/\/mcp$/, '');

async function scrape(): Promise<string> {
  const res = await fetch(`${base()}/metrics`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one sample (0 when absent), labels given in the order prom-client prints them. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(labels === '' ? `${name} ` : `${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function client(): Promise<Client> {
  const c = new Client({ name: 'metrics-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return c;
}

metrics('every metric of the issue is there with its type, plus the default process metrics', async () => {
  const text = await scrape();
  const types = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1] as string, m[2] as string);
  const expected: [string, string][] = [
    ['superpi_sessions', 'gauge'], ['superpi_tool_calls_total', 'counter'], ['superpi_tool_call_duration_seconds', 'histogram'],
    ['superpi_actor_restarts_total', 'counter'], ['superpi_worker_restarts_total', 'counter'], ['superpi_mailbox_depth', 'gauge'],
    ['superpi_tasks', 'gauge'], ['superpi_store_append_duration_seconds', 'histogram'],
    ['process_cpu_seconds_total', 'counter'], ['process_resident_memory_bytes', 'gauge'], ['nodejs_eventloop_lag_seconds', 'gauge'],
  ];
  for (const [name, type] of expected) assert.is(types.get(name), type, name);
  assert.match(text, /^superpi_mailbox_depth\{thread="0"\} \d+$/m, 'one depth per scheduler thread');
});

metrics('tool calls move the counters and the histogram, by tool, harness and outcome; sessions are counted by transport and principal kind', async () => {
  const before = await scrape();
  const c = await client();
  try {
    await c.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } });
    await c.callTool({ name: 'read', arguments: { path: 'src/math.ts' } });
    const missing = await c.callTool({ name: 'read', arguments: { path: 'no/such/file.ts' } });
    assert.ok(missing.isError);
    const during = await scrape();
    assert.is(sample(during, 'superpi_sessions', 'transport="http",principal="anonymous"'), sample(before, 'superpi_sessions', 'transport="http",principal="anonymous"') + 1);
    const ok = 'tool="read",harness="super-pi-code",outcome="ok"';
    const error = 'tool="read",harness="super-pi-code",outcome="error"';
    assert.is(sample(during, 'superpi_tool_calls_total', ok) - sample(before, 'superpi_tool_calls_total', ok), 2);
    assert.is(sample(during, 'superpi_tool_calls_total', error) - sample(before, 'superpi_tool_calls_total', error), 1);
    assert.is(sample(during, 'superpi_tool_call_duration_seconds_count', 'tool="read"') - sample(before, 'superpi_tool_call_duration_seconds_count', 'tool="read"'), 3);
  } finally {
    await c.close();
  }
});

metrics('no label value carries what a caller sent: paths, patterns, commands and unknown tool names stay out of /metrics', async () => {
  const MARKER = 'zq7MARKERxk4';
  const c = await client();
  try {
    await c.callTool({ name: 'read', arguments: { path: `${MARKER}/secret-${MARKER}.ts` } });
    await c.callTool({ name: 'grep', arguments: { pattern: MARKER, path: '.' } });
    await c.callTool({ name: 'find', arguments: { pattern: `*${MARKER}*` } });
    await c.callTool({ name: 'bash', arguments: { command: `echo ${MARKER}` } });
    await c.callTool({ name: `tool-${MARKER}`, arguments: {} }).catch(() => undefined);
  } finally {
    await c.close();
  }
  const text = await scrape();
  assert.not.ok(text.includes(MARKER), 'the marker is absent');
  // Every label of every superpi_ sample is from its fixed set.
  const allowed = new Map<string, ReadonlySet<string>>([
    ['tool', new Set([...toolNames, 'other'])], ['harness', new Set([...harnessIds, 'other'])], ['outcome', new Set(['ok', 'error', 'denied'])],
    ['transport', new Set(['stdio', 'http', 'websocket'])], ['principal', new Set(['local', 'token', 'anonymous'])],
    ['status', new Set(['running', 'completed', 'failed', 'cancelled', 'interrupted', 'input_required'])],
    ['level', new Set(['root', 'schedulers', 'tools', 'sessions', 'tasks', 'session', 'task', 'other'])],
  ]);
  let checked = 0;
  for (const line of text.split('\n')) {
    const m = /^superpi_\w+\{(.*)\} /.exec(line);
    if (!m) continue;
    for (const [, name, value] of (m[1] as string).matchAll(/(\w+)="([^"]*)"/g)) {
      checked++;
      if (name === 'le') assert.ok(value === '+Inf' || Number.isFinite(Number(value)), line);
      else if (name === 'thread') assert.match(value as string, /^\d+$/, line);
      else assert.ok(allowed.get(name as string)?.has(value as string), `label ${name}="${value}" in ${line}`);
    }
  }
  assert.ok(checked > 20, 'labels were checked');
});

metrics.run();

const off = suite('--no-metrics');

off('serves no /metrics (404, saying why) while the observer still streams its snapshots', async () => {
  const sandbox = await makeSandbox();
  const quiet = await startHttpServerProcess(sandbox.ws, ['--threads', '1', '--tool-threads', '1', '--no-metrics']);
  try {
    const base = quiet.url.replace(/\/mcp$/, '');
    const res = await fetch(`${base}/metrics`);
    assert.is(res.status, 404);
    assert.match(await res.text(), /--no-metrics/);
    const controller = new AbortController();
    const events = await fetch(`${base}/observer/events`, { signal: controller.signal });
    assert.is(events.status, 200);
    // The first event, however the stream is cut into chunks.
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    controller.abort();
    const snapshot = JSON.parse(text.slice(0, text.indexOf('\n\n')).replace(/^data: /, '')) as { metrics: boolean; tree: { id: string } };
    assert.is(snapshot.metrics, false);
    assert.is(snapshot.tree.id, 'root');
  } finally {
    await quiet.stop();
    await sandbox.cleanup();
  }
});

off.run();

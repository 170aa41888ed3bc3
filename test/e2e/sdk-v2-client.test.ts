// The official SDK v2 client (@modelcontextprotocol/client 2.4.0) in its three negotiation modes —
// default (the 2025 handshake), `auto` (server/discover, then the newest era both speak) and a pin on
// 2026-07-28 — over stdio (a real child process) and Streamable HTTP (a real socket), driving every
// method its era has and every tool the caller may use.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport, type VersionNegotiationOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

const modes: { name: string; negotiation?: VersionNegotiationOptions; version: string }[] = [
  { name: 'default', version: '2025-11-25' },
  { name: 'auto', negotiation: { mode: 'auto' }, version: '2026-07-28' },
  { name: 'pin 2026-07-28', negotiation: { mode: { pin: '2026-07-28' } }, version: '2026-07-28' },
];

type ToolResult = { content?: { type: string; text?: string }[]; isError?: boolean; resultType?: string };
const textOf = (r: unknown): string => ((r as ToolResult).content ?? []).map((c) => c.text ?? '').join('\n');

const e2e = suite('SDK v2 client: three negotiation modes × stdio and Streamable HTTP');
let box: Sandbox;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  // Writes and bash for the anonymous HTTP caller too, so both transports drive the same tools.
  server = await startHttpServerProcess(box.ws, ['--allow-anonymous-writes']);
});
e2e.after(async () => {
  await server.stop();
  await box.cleanup();
});

function transportFor(kind: 'stdio' | 'http'): StdioClientTransport | StreamableHTTPClientTransport {
  if (kind === 'http') return new StreamableHTTPClientTransport(new URL(server.url));
  return new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' });
}

for (const kind of ['stdio', 'http'] as const) {
  for (const mode of modes) {
    e2e(`${kind}, ${mode.name}: negotiates ${mode.version} and every method and tool answers`, async () => {
      const client = new Client({ name: 'sdk-v2-e2e', version: '2.4.0' }, mode.negotiation ? { versionNegotiation: mode.negotiation } : {});
      await client.connect(transportFor(kind));
      try {
        assert.is(client.getNegotiatedProtocolVersion(), mode.version);
        const modern = mode.version === '2026-07-28';

        const { tools } = await client.listTools();
        const listed = new Set(tools.map((t) => t.name));
        // The local user has all eight; an anonymous remote caller with --allow-anonymous-writes has no bash and no tasks.
        assert.equal([...listed].sort(), kind === 'stdio' ? ['bash', 'edit', 'find', 'grep', 'harness_task', 'ls', 'read', 'write'] : ['edit', 'find', 'grep', 'ls', 'read', 'write']);
        const file = `notes-${kind}-${mode.name.replace(/\W/g, '')}.txt`;
        const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

        assert.match(textOf(await call('read', { path: 'README.md' })), /Demo project/);
        assert.not.ok((await call('write', { path: file, content: 'alpha\n' }) as ToolResult).isError);
        assert.not.ok((await call('edit', { path: file, edits: [{ oldText: 'alpha', newText: 'beta' }] }) as ToolResult).isError, 'edit');
        assert.match(textOf(await call('read', { path: file })), /^beta/);
        assert.match(textOf(await call('grep', { pattern: 'greet', path: 'src' })), /greet\.ts/);
        assert.match(textOf(await call('find', { pattern: '*.ts' })), /math\.ts/);
        assert.match(textOf(await call('ls', { path: 'src' })), /greet\.ts/);
        if (listed.has('bash')) {
          const bash = await call('bash', { command: `cat ${file}` }) as ToolResult;
          assert.match(textOf(bash), /beta/, JSON.stringify(bash));
        }
        if (listed.has('harness_task')) {
          // No model is configured and this client answers no sampling: a clear tool error, never a hang.
          const task = await call('harness_task', { harness: 'super-pi-planner', task: 'say hi' }) as ToolResult;
          assert.ok(task.isError === true && textOf(task).length > 0, JSON.stringify(task));
        }
        // Invalid arguments reach the model as a tool error with the validator's message (SEP-1303).
        const invalid = await call('read', {}) as ToolResult;
        assert.is(invalid.isError, true);
        assert.match(textOf(invalid), /path/);

        const { prompts } = await client.listPrompts();
        assert.ok(prompts.some((p) => p.name === 'plan_architecture'));
        const prompt = await client.getPrompt({ name: 'plan_architecture', arguments: { goal: 'split a file' } });
        assert.ok(prompt.messages.length > 0);
        const { resources } = await client.listResources();
        assert.ok(resources.length > 0);
        const first = resources[0] as { uri: string };
        const read = await client.readResource({ uri: first.uri });
        assert.ok(read.contents.length > 0);
        const { resourceTemplates } = await client.listResourceTemplates();
        assert.ok(resourceTemplates.some((t) => t.uriTemplate.includes('conversation')));
        const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'plan_architecture' }, argument: { name: 'executor', value: '' } });
        assert.ok(Array.isArray(completion.completion.values));
        if (!modern) {
          // Methods 2026-07-28 removed, still served to a 2025 session.
          await client.ping();
          await client.setLoggingLevel('info');
        }
      } finally {
        await client.close();
      }
    });
  }
}

e2e('the workspace the tools changed is the sandbox (a write landed where read found it)', async () => {
  await writeFile(path.join(box.ws, 'marker.txt'), 'm\n');
  const client = new Client({ name: 'sdk-v2-e2e', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transportFor('http'));
  try {
    assert.match(textOf(await client.callTool({ name: 'ls', arguments: { path: '.' } })), /marker\.txt/);
  } finally {
    await client.close();
  }
});

e2e.run();

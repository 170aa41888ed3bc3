// End to end: a stdio server started without --workspace works in the SDK client's first root, and moves
// when the client says its roots changed; with --workspace the client's roots are never asked.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, makeSandbox, repoRoot, stdioEntry, textOf } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

const roots = suite('the client\'s roots choose the workspace');
let base = '';
let rootA = '';
let rootB = '';

roots.before(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-roots-')));
  rootA = path.join(base, 'a');
  rootB = path.join(base, 'b');
  await mkdir(rootA);
  await mkdir(rootB);
  await writeFile(path.join(rootA, 'only-in-a.txt'), 'this is root A\n');
  await writeFile(path.join(rootB, 'only-in-b.txt'), 'this is root B\n');
});
roots.after(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A client declaring roots, answering roots/list with whatever `current()` names (a bad root first). */
function rootsClient(current: () => string): { client: Client; asked: () => number } {
  let asked = 0;
  const client = new Client({ name: 'roots-e2e', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    asked++;
    return { roots: [{ uri: 'https://example.com/not-a-folder', name: 'web' }, { uri: pathToFileURL(current()).href, name: 'project' }] };
  });
  return { client, asked: () => asked };
}

roots('without --workspace, ls and read see root A, then root B after roots/list_changed', async () => {
  let current = rootA;
  const { client, asked } = rootsClient(() => current);
  // The default workspace (the current directory) is the repository: what ls sees there is not root A.
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioEntry], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await client.connect(transport);
  try {
    assert.match(client.getInstructions() ?? '', /the client's root/);
    // Sent at once: the call waits for the roots rather than running in the default workspace.
    const lsA = textOf(await client.callTool({ name: 'ls', arguments: {} }));
    assert.match(lsA, /only-in-a\.txt/);
    assert.not.match(lsA, /package\.json/);
    assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'only-in-a.txt' } })), /this is root A/);
    const workspace = await client.readResource({ uri: 'superpi://workspace' });
    assert.match(JSON.stringify(workspace.contents), new RegExp(rootA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));

    current = rootB;
    await client.sendRootsListChanged();
    // The notification's roots/list round is settled before the next call is handled (the call waits for it).
    const lsB = textOf(await client.callTool({ name: 'ls', arguments: {} }));
    assert.match(lsB, /only-in-b\.txt/);
    assert.not.match(lsB, /only-in-a\.txt/);
    const readB = await client.callTool({ name: 'read', arguments: { path: 'only-in-b.txt' } });
    assert.match(textOf(readB), /this is root B/);
    const readA = await client.callTool({ name: 'read', arguments: { path: path.join(rootA, 'only-in-a.txt') } });
    assert.ok(readA.isError, 'root A is outside the session\'s workspace now');
    assert.is(asked(), 2);
    assert.match(stderr, /client root refused: it is not a file:\/\/ URI/);
  } finally {
    await client.close();
  }
});

roots('with --workspace, the client\'s roots are never asked', async () => {
  const box = await makeSandbox();
  const { client, asked } = rootsClient(() => rootA);
  const c = await connectStdio(box.ws, [], { roots: { listChanged: true } }, (original) => {
    void original;
    return client;
  });
  try {
    assert.match(textOf(await c.client.callTool({ name: 'ls', arguments: {} })), /README\.md/);
    await c.client.sendRootsListChanged();
    assert.match(textOf(await c.client.callTool({ name: 'ls', arguments: {} })), /README\.md/);
    assert.is(asked(), 0);
  } finally {
    await c.close();
    await box.cleanup();
  }
});

roots('an HTTP session\'s root outside the server\'s workspace is refused; one inside it narrows the session to it', async () => {
  // No --workspace: the server's workspace is the directory it starts in (the repository); root A is outside it.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'examples/server.ts'), '--port', '0'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /Streamable HTTP\s+(http:\/\/\S+)/.exec(stdout);
        if (m) resolve(m[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}; stderr: ${stderr}`)));
    });
    const client = new Client({ name: 'roots-http', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(rootA).href }, { uri: pathToFileURL(path.join(repoRoot, 'examples')).href }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const listed = textOf(await client.callTool({ name: 'ls', arguments: {} }));
      assert.match(listed, /stdio\.ts/, 'the session works in the root inside the server\'s workspace');
      assert.not.match(listed, /only-in-a\.txt/);
      assert.match(stderr, /a remote session's root must lie inside the server's workspace/);
    } finally {
      await client.close();
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
});

roots.run();

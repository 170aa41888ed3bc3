// Issue 22 end to end: a zlib bomb planted in the workspace's `.git` (whoever writes the workspace can) and
// `superpi://workspace` read by a real client. The resource still answers, with the status replaced by a
// note, and the server keeps answering `ping` (stdio, from source) and `/health` (HTTP, the `super-pi`
// command from its bundle, where the status thread starts from dist/ inside a scheduler thread).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectStdio, makeSandbox, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { guarded } from '../hang-guard.ts';
import { plantLooseBomb } from '../tools/fixtures/git-bombs.ts';
import { GIT_STATUS_SKIPPED } from '../../src/tools/git-summary.ts';

/** 256 MB of zeros behind a header declaring 4 GB (~256 KB on disk): isomorphic-git alone froze its thread inflating it. */
const BOMB_ZEROS = 256 * 1024 * 1024;

async function bombedSandbox(): Promise<{ box: Sandbox; oid: string }> {
  const box = await makeSandbox();
  const oid = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: box.ws, encoding: 'utf8' }).trim();
  await plantLooseBomb(box.ws, oid, 4_000_000_000, BOMB_ZEROS);
  return { box, oid };
}

function resourceText(r: { contents: unknown[] }): string {
  return (r.contents[0] as { text: string }).text;
}

test('stdio: the workspace resource answers with a note while ping keeps being answered', async () => {
  const { box, oid } = await bombedSandbox();
  const c = await connectStdio(box.ws);
  try {
    let read: string | null = null;
    const reading = c.client.readResource({ uri: 'superpi://workspace' }).then((r) => (read = resourceText(r)));
    // Pings one after another until the resource answers: each is answered, none waits for the status.
    let pings = 0;
    while (read === null) {
      await guarded(c.client.ping(), `ping ${pings + 1} while the workspace resource was being read`);
      pings++;
      await Promise.race([reading, new Promise((r) => setTimeout(r, 5))]);
    }
    const text = await guarded(reading, 'the workspace resource with a bomb in .git');
    assert.ok(pings >= 1);
    assert.ok(text.includes('Git branch: main'), text);
    assert.ok(text.includes(`${GIT_STATUS_SKIPPED}objects/${oid.slice(0, 2)}/${oid.slice(2)} declares`), text);
    // The rest of the context is there, and the server still answers afterwards.
    assert.ok(text.includes('README.md'), text);
    await guarded(c.client.ping(), 'ping after the resource');
  } finally {
    await c.close();
    await box.cleanup();
  }
});

test('the super-pi command over HTTP: the resource answers with the note and /health answers meanwhile', async () => {
  const { box, oid } = await bombedSandbox();
  const server = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1'], {}, 'bundle');
  const client = new Client({ name: 'git-bomb', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    let read: string | null = null;
    const reading = client.readResource({ uri: 'superpi://workspace' }).then((r) => (read = resourceText(r)));
    let healthy = 0;
    while (read === null) {
      const res = await guarded(fetch(new URL('/health', server.url)), `/health ${healthy + 1} while the workspace resource was being read`);
      assert.is(res.status, 200);
      await res.arrayBuffer();
      healthy++;
      await Promise.race([reading, new Promise((r) => setTimeout(r, 5))]);
    }
    const text = await guarded(reading, 'the workspace resource over HTTP with a bomb in .git');
    assert.ok(healthy >= 1);
    assert.ok(text.includes(`${GIT_STATUS_SKIPPED}objects/${oid.slice(0, 2)}/${oid.slice(2)} declares`), text);
  } finally {
    await client.close();
    await server.stop();
    await box.cleanup();
  }
});

test.run();

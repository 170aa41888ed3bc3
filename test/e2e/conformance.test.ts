// The MCP conformance suite against the Streamable HTTP server: every scenario that needs no reference
// fixture passes; the rest are listed, with reasons, in conformance-baseline.yml.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, startHttpServerProcess } from './fixtures.ts';

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'logging-set-level', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

test('the conformance suite passes every scenario that needs no fixture, and only the baseline fails', async () => {
  const box = await makeSandbox();
  const server = await startHttpServerProcess(box.ws);
  try {
    const bin = path.join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const run = spawn(process.execPath, [bin, 'server', '--url', server.url, '--expected-failures', path.join(repoRoot, 'conformance-baseline.yml')], {
      cwd: box.base, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    run.stdout.on('data', (d: Buffer) => (out += d.toString()));
    run.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => run.once('exit', r));
    const summary = out.slice(out.indexOf('=== SUMMARY ==='));
    console.log(summary.split('\n').filter((l) => l.startsWith('✓')).map((l) => `  ${l}`).join('\n'));
    for (const scenario of REQUIRED) assert.match(summary, new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`), `${scenario} must pass`);
    assert.is(code, 0, `the suite failed outside the baseline:\n${summary}`);
  } finally {
    await server.stop();
    await box.cleanup();
  }
});

test.run();

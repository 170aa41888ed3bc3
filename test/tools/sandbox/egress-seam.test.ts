// The seam the egress proxy plugs into (--bash-network allow=…): with a proxy handed over, a sandboxed
// command gets its variables and reaches the proxy's Unix socket through the bridge started inside the
// sandbox, and nothing else; with none, it has no network at all. The proxy and bridge here are
// stand-ins with the real contract (a Unix socket on the host; a bridge listening on 127.0.0.1:port inside).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../../../src/tools/bash.ts';
import { bashIsolation } from '../../../src/tools/bash-isolation.ts';
import { EGRESS_NODE_IN_SANDBOX, EGRESS_SOCKET_IN_SANDBOX } from '../../../src/tools/sandbox/bwrap-argv.ts';
import { useEgress } from '../../../src/tools/sandbox/egress-seam.ts';
import { defaultPolicy, useSandboxPolicy } from '../../../src/tools/sandbox/policy.ts';
import { discardSpares } from '../../../src/tools/sandbox/spare.ts';
import { context, inSandbox } from '../sandbox.ts';

const PORT = 3128;
/** Inside the sandbox: listen on 127.0.0.1:PORT, say so with one line (the contract), and pipe each connection to the proxy's socket. */
const BRIDGE = `require('net').createServer((c) => { const u = require('net').connect(${JSON.stringify(EGRESS_SOCKET_IN_SANDBOX)}); c.pipe(u).pipe(c); u.on('error', () => c.destroy()); c.on('error', () => u.destroy()); }).listen(${PORT}, '127.0.0.1', () => process.stdout.write('ready\\n'))`;
/** Retries while the bridge starts (a sandbox's first command races its bridge). */
const PROBE = `for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/${PORT} && head -n1 <&3) 2>/dev/null && break; sleep 0.1; done; echo "proxy=$HTTPS_PROXY"`;

test('allow=HOSTS with a proxy: the command reaches it through the bridge and gets its variables; without one, nothing', async () => {
  if ((await bashIsolation()).kind !== 'bubblewrap') return;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-egress-'));
  const socketPath = path.join(dir, 'egress.sock');
  const proxy = net.createServer((s) => s.on('error', () => undefined).end('hello from the proxy\n'));
  await new Promise<void>((r) => proxy.listen(socketPath, r));
  useSandboxPolicy({ ...defaultPolicy(), network: { kind: 'allow', hosts: ['example.com'] } });
  try {
    await inSandbox({}, async ({ ws }) => {
      const closed = await bashTool({ command: PROBE.replace('seq 50', 'seq 3') }, context(ws));
      assert.is(closed.text, 'proxy=\n');
      useEgress({
        shared: { bridgeNode: await realpath(process.execPath), bridgeArgv: [EGRESS_NODE_IN_SANDBOX, '-e', BRIDGE], env: { HTTPS_PROXY: `http://127.0.0.1:${PORT}` } },
        openDoor: async () => ({ socketPath, close: async () => undefined }),
      });
      discardSpares();
      const open = await bashTool({ command: PROBE }, context(ws));
      assert.is(open.text, `hello from the proxy\nproxy=http://127.0.0.1:${PORT}\n`);
    });
  } finally {
    useEgress(null);
    discardSpares();
    useSandboxPolicy(defaultPolicy());
    proxy.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();

// Rule (security review of --bash-network allow=…): the egress proxy's connections are a pool every
// command shares (EGRESS_MAX_CONNECTIONS), and no one command can take it whole. Each command reaches the
// proxy through a socket of its own, and holds at most EGRESS_MAX_CONNECTIONS_PER_COMMAND connections
// through it: past that, 503 and closed, as past the total; another command, meanwhile, still connects.
// Real commands in real sandboxes, through the real proxy and bridge, to an echo server on 127.0.0.1
// that the allow list names explicitly.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EGRESS_MAX_CONNECTIONS, EGRESS_MAX_CONNECTIONS_PER_COMMAND, EGRESS_PROXY_PORT } from '../../../src/limits.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { bashTool } from '../../../src/tools/bash.ts';
import { bashIsolation } from '../../../src/tools/bash-isolation.ts';
import { startEgressFor } from '../../../src/tools/sandbox/egress-seam.ts';
import { defaultPolicy, useSandboxPolicy } from '../../../src/tools/sandbox/policy.ts';
import { discardSpares } from '../../../src/tools/sandbox/spare.ts';
import { echoUpstream } from './egress-fixtures.ts';
import { context, inSandbox } from '../sandbox.ts';

/** bash: open `n` tunnels to 127.0.0.1:`port` through the bridge, each held open; print each one's status line. */
function tunnels(n: number, port: number): string {
  const connect = `printf 'CONNECT 127.0.0.1:${port} HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n' >&$fd`;
  return `for i in $(seq ${n}); do exec {fd}<>/dev/tcp/127.0.0.1/${EGRESS_PROXY_PORT}; ${connect}; IFS= read -r line <&$fd; echo "$i \${line%$'\\r'}"; done`;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

test(`one command holds at most ${EGRESS_MAX_CONNECTIONS_PER_COMMAND} egress connections; the next is 503, and another command still connects`, async () => {
  if ((await bashIsolation()).kind !== 'bubblewrap') return;
  assert.ok(EGRESS_MAX_CONNECTIONS_PER_COMMAND < EGRESS_MAX_CONNECTIONS, 'the per-command cap is below the total');
  const echo = await echoUpstream();
  const network = { kind: 'allow', hosts: [`127.0.0.1:${echo.port}`] } as const;
  useSandboxPolicy({ ...defaultPolicy(), network });
  const stop = await startEgressFor(network, createLogger('error', { write: () => undefined }));
  try {
    await inSandbox({}, async ({ ws }) => {
      const held = path.join(ws, 'held');
      const done = path.join(ws, 'done');
      // The greedy command: its share, then one more; then it holds them all until the test says done.
      const greedy = bashTool({
        command: `${tunnels(EGRESS_MAX_CONNECTIONS_PER_COMMAND + 1, echo.port)}; : > held; for i in $(seq 200); do [ -e done ] && break; sleep 0.05; done`,
        timeout: 30,
      }, context(ws));
      try {
        for (let i = 0; !(await exists(held)); i++) {
          if (i > 600) throw new Error('the greedy command never opened its connections');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const other = await bashTool({ command: tunnels(1, echo.port) }, context(ws));
        assert.is(other.text, '1 HTTP/1.1 200 Connection Established\n', 'another command is not starved');
      } finally {
        await writeFile(done, '');
      }
      const lines = (await greedy).text.trim().split('\n');
      assert.is(lines.length, EGRESS_MAX_CONNECTIONS_PER_COMMAND + 1);
      for (const line of lines.slice(0, -1)) assert.match(line, / 200 Connection Established$/);
      assert.ok(new RegExp(`^${EGRESS_MAX_CONNECTIONS_PER_COMMAND + 1} HTTP/1\\.1 503 `).test(lines.at(-1) ?? ''), `the last line: ${JSON.stringify(lines.at(-1))}`);
    });
  } finally {
    await stop();
    discardSpares();
    useSandboxPolicy(defaultPolicy());
    await echo.close();
  }
});

test.run();

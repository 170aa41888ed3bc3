// /health shows how `bash` commands are bounded on this machine (`bashBounds`), as the start-up probe chose
// it and as the operator's log says it (`bash bounds: …`), so an operator can check it without reading the
// log: the mechanism (cgroup2, cgroup1, rlimit, none) and the limits each command gets under it, from the
// server's own flags. Paths (the cgroups', prlimit's) stay in the log. A real server process, on 127.0.0.1.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../hang-guard.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const MAX_PROCESSES = 77;
const MAX_MEMORY_BYTES = 123_456_789;
/** What the log line says for each mechanism (src/tools/sandbox/bounds.ts, describeBounds). */
const LOGGED = new Map([['cgroup2', 'a cgroup v2 per command'], ['cgroup1', '(v1)'], ['rlimit', 'rlimits per command'], ['none', 'NO process or memory bound']]);

let box: Sandbox;
let home: string;
let server: RunningServer;

test.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-health-bounds-'));
  server = await startHttpServerProcess(box.ws, ['--bash-max-processes', String(MAX_PROCESSES), '--bash-max-memory', String(MAX_MEMORY_BYTES)], { SUPERPI_HOME: home });
});

test.after(async () => {
  await server?.stop();
  await box?.cleanup();
  await rm(home, { recursive: true, force: true });
});

test('/health shows the bash bounds the probe chose, with the limits of the flags, and no path', async () => {
  // The probe runs shortly after the start (ISOLATION_PROBE_DELAY_MS), off the first exchanges.
  const bounds = await pollUntil('the bounds probed', async () => {
    const health = (await (await fetch(server.url.replace('/mcp', '/health'))).json()) as { bashBounds?: Record<string, unknown> };
    return health.bashBounds !== undefined && health.bashBounds.kind !== 'not probed yet' ? health.bashBounds : null;
  }, 30_000);
  const kind = bounds.kind as string;
  assert.ok(LOGGED.has(kind), `a known mechanism: ${JSON.stringify(bounds)}`);
  const logged = await pollUntil('the bash bounds log line', () => /bash bounds: (.*)/.exec(server.stderr())?.[1] ?? null, 10_000);
  assert.ok(logged.includes(LOGGED.get(kind) as string), `the log agrees with /health (${kind}): ${logged}`);
  if (kind === 'cgroup2' || kind === 'cgroup1') {
    assert.equal(bounds, { kind, maxProcesses: MAX_PROCESSES, maxMemoryBytes: MAX_MEMORY_BYTES, memoryPer: 'command' });
  } else if (kind === 'rlimit') {
    assert.ok(bounds.maxProcesses === MAX_PROCESSES || bounds.maxProcesses === null, JSON.stringify(bounds));
    assert.is(bounds.maxMemoryBytes, MAX_MEMORY_BYTES);
    assert.is(bounds.memoryPer, 'process');
    assert.type(bounds.reason, 'string');
  } else {
    assert.equal({ ...bounds, reason: typeof bounds.reason }, { kind, maxProcesses: null, maxMemoryBytes: null, reason: 'string' });
  }
  // The cgroup directories and prlimit's path are the log's alone.
  const { reason: _reason, ...rest } = bounds;
  assert.not.match(JSON.stringify(rest), '/');
});

test.run();
